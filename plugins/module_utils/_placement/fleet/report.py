# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report of a rolling reshape: Markdown, a self-contained HTML page, JSON.

Input is one *node record* per compute node (plain dicts, JSON-serialisable)::

    node:         inventory hostname ("compute-01")
    provider:     root provider name (defaults to node)
    status:       reshaped | noop | deferred | failed | planned | rolled_back |
                  verified | unreached (the report shows a reshaped node whose
                  ``written`` says no POST /reshaper was applied as ``updated``)
    reason:       why a node was deferred or failed (text, optional)
    started, finished:  epoch seconds (optional); duration: seconds (optional)
    before, after:      provider trees, the shape of backend.provider_tree_state:
                        {"providers": {uuid: {"name", "parent_provider_uuid",
                         "inventories", "usages", "traits"}},
                         "allocations": {consumer: {"allocations": {rp: {"resources"}}}}}
    moved:        {"consumers": n, "allocations": n} (computed from the trees when absent)
    verification: [{"check", "passed", "detail"}] (optional)
    snapshot:     path of the snapshot the node can be rolled back from (optional)
    retries:      generation-conflict retries the reshape needed (optional)
    names:        {provider uuid: name} for providers outside the tree (optional)
    touched:      whether this run changed the node's tree (optional; default: the
                  status is reshaped or rolled_back); a failed node whose reshape was
                  applied before the failure is touched
    unread:       why the node's tree could not be read from Placement (optional)
    derived:      true when the roll wrote no record of the node and the record was
                  derived from the run's snapshot of it and Placement (optional)
    run_id:       the run the record belongs to (optional)
    written:      what the reshape wrote (optional): {"reshaper": whether its POST /reshaper
                  was applied, "traits": [{"provider", "uuid", "added", "removed"}],
                  "children": [names]}
    warnings:     the warnings of the node's pass (its discovery's, the reshape's remarks)
    placement_microversion: the microversion of the backend that stored the record (optional)

:func:`build_report` orders the records by the list of target hosts (hosts
without a record are ``unreached``: the roll stopped before them), computes
every consumer's moves and the fleet totals; :func:`render_markdown` and
:func:`render_html` draw it (the HTML page has no external resource: styles
and the provider-tree pictures, inline SVG, are in the page);
:func:`write_report` writes ``report.md``, ``report.html`` and ``summary.json``
atomically (mode 0600, fsync'ed) into a directory (0700).

The report says what happened, never what the play expected: a node is touched
when its tree was changed by this run (its reshape applied, even if something
failed after it; a node the roll never recorded but that has a snapshot of this
run), and nodes whose tree could not be read from Placement are listed with the
reason (``unread``).  It also says what it ran against (``context``) and what to
do next (``next_steps``: the rerun, rollback and fix commands).

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import calendar
import json
import os
import shlex
import time

from urllib.parse import urlsplit, urlunsplit

from .. import files as _files
from .. import shapes
from .. import names as _names
from ..node import snapshot as _snapshot
from ..retry import retries_warning
from ..errors import BadInput, PlacementError
from ..tree import ProviderTree
from ..version import COLLECTION_VERSION

STATUSES = ('reshaped', 'updated', 'planned', 'noop', 'deferred', 'failed', 'rolled_back', 'verified',
            'unreached')

STATUS_LABELS = {
    'reshaped': 'reshaped',
    'updated': 'updated without a reshape',
    'planned': 'would reshape',
    'noop': 'skipped (already in layout)',
    'deferred': 'deferred',
    'failed': 'failed',
    'rolled_back': 'rolled back',
    'verified': 'verified',
    'unreached': 'not reached',
}

STATUS_COLOURS = {
    'reshaped': '#1a7f37',
    'updated': '#1a7f37',
    'planned': '#0969da',
    'noop': '#6e7781',
    'deferred': '#9a6700',
    'failed': '#cf222e',
    'rolled_back': '#8250df',
    'verified': '#1a7f37',
    'unreached': '#57606a',
}

#: the labels of a plan (check-mode) report: a failed node is one that would stop a real roll
PLAN_STATUS_LABELS = dict(STATUS_LABELS, noop='already done (in layout)', failed='would stop the roll',
                          deferred='would be deferred', updated='would update without a reshape')

REPORT_FILES = ('report.md', 'report.html', 'summary.json')

#: file and directory modes of everything the report writes
FILE_MODE = 0o600
DIR_MODE = _files.DIR_MODE

#: the keys of the ``context`` a caller (the role) may give; anything else is dropped
CALLER_CONTEXT_KEYS = ('awx_job_id', 'awx_job_template', 'playbook', 'check_mode', 'plan', 'inventory', 'limit',
                       'ansible_playbook')
#: the keys the module adds from what it knows (never credentials)
BACKEND_CONTEXT_KEYS = ('backend', 'embedded_db', 'cloud', 'endpoint', 'placement_microversion',
                        'collection_version')

#: shown in commands when the context does not name the inventory
INVENTORY_PLACEHOLDER = 'INVENTORY'


class ReportError(PlacementError):
    """The report cannot be written as asked (e.g. ``dest`` holds another run's records)."""

    status = 0
    default_code = 'placement_upgrade.report'

    def __init__(self, detail, **kwargs):
        kwargs.setdefault('title', 'Report Error')
        super(ReportError, self).__init__(detail, **kwargs)


def status_label(status, mode='apply'):
    """The word a reader sees for a status (a plan run says what WOULD happen)."""
    labels = PLAN_STATUS_LABELS if mode == 'plan' else STATUS_LABELS
    return labels.get(status, status)


# ---------------------------------------------------------------------------
# small helpers

def _h(text):
    """HTML-escape ``text`` as the report's templates do (Jinja2's autoescape: ``&#34;``, ``&#39;``)."""
    text = '' if text is None else str(text)
    for char, entity in (('&', '&amp;'), ('<', '&lt;'), ('>', '&gt;'), ('"', '&#34;'), ("'", '&#39;')):
        text = text.replace(char, entity)
    return text


def _short(uuid):
    return str(uuid)[:8]


def format_duration(seconds):
    """'12.3 s', '4 min 05 s', '1 h 02 min'; '-' for None (the report and the progress callback)."""
    if seconds is None:
        return '-'
    seconds = max(float(seconds), 0.0)
    if seconds < 60:
        return '%.1f s' % seconds
    minutes, sec = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return '%d min %02d s' % (minutes, sec)
    hours, minutes = divmod(minutes, 60)
    return '%d h %02d min' % (hours, minutes)


def format_time(epoch):
    if epoch is None:
        return '-'
    return time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime(float(epoch)))


#: the longest head of a reason that tables and lists show (the whole reason is in the node's section)
SHORT_REASON = 90


def short_reason(reason, limit=SHORT_REASON):
    """The head of a long reason for a table or a list: its leading clauses up to ``limit`` characters
    (``move in flight`` of ``move in flight: consumer ... holds ...``), cut with an ellipsis when the first
    clause is longer already; a reason that fits is returned whole."""
    reason = str(reason or '')
    if len(reason) <= limit:
        return reason
    reason = ' '.join(reason.split())
    head = ''
    for clause in reason.split(': '):
        candidate = clause if not head else head + ': ' + clause
        if len(candidate) > limit:
            break
        head = candidate
    if not head:
        head = reason[:limit - 1].rstrip() + '\u2026'
    return head


def format_number(value):
    """``3``, ``1.5``: an amount as the report writes it (a whole float without its ``.0``)."""
    if isinstance(value, float) and value != int(value):
        return '%g' % value
    return '%d' % value


# ---------------------------------------------------------------------------
# trees and moves

def normalize_tree(tree):
    """Reduce a provider tree to what the report draws.

    Returns ``{"providers": {uuid: {"uuid", "name", "parent", "inventories",
    "usages", "traits"}}, "allocations": {consumer: {rp: {RC: n}}}}`` with every
    inventory record completed with Placement's defaults.  ``None`` gives an
    empty tree.  The tree is read through :class:`.tree.ProviderTree`, leniently
    (``strict=False``): a malformed record is shown as far as it goes, never refused.
    """
    view = ProviderTree.of(tree or {})
    providers = {}
    for uuid in view.providers:
        providers[uuid] = {
            'uuid': uuid,
            'name': view.name(uuid),
            'parent': view.parent(uuid),
            'inventories': view.inventory(uuid, strict=False),
            'usages': dict(view.usages(uuid)),
            'traits': view.traits(uuid),
        }
    allocations = {}
    for consumer in view.allocation_bodies:
        allocations[consumer] = dict((rp, entry['resources'])
                                     for rp, entry in view.allocations(consumer, strict=False).items())
    return {'providers': providers, 'allocations': allocations}


def provider_tree(tree):
    """The :class:`.tree.ProviderTree` of a normalized tree (:func:`normalize_tree`'s shape, as the
    report data carries it), through which report_render walks it: roots, children, the depth-first
    order and the usages.  A ProviderTree is returned as it is."""
    if isinstance(tree, ProviderTree):
        return tree
    providers = dict((uuid, {'uuid': uuid, 'name': prov.get('name'), 'parent_provider_uuid': prov.get('parent'),
                             'inventories': prov.get('inventories'), 'usages': prov.get('usages'),
                             'traits': prov.get('traits')})
                     for uuid, prov in (tree.get('providers') or {}).items())
    allocations = dict((consumer, {'allocations': dict((rp, {'resources': resources}) for rp, resources in allocs.items())})
                       for consumer, allocs in (tree.get('allocations') or {}).items())
    return ProviderTree({'providers': providers, 'allocations': allocations})


def consumer_moves(before, after):
    """Where each consumer's allocations moved between two normalized trees.

    Returns ``[{"consumer", "resource_class", "from": [[rp, n]], "to": [[rp, n]]}]``
    sorted by consumer and class: per class, the amounts a consumer no longer
    holds on a provider (``from``) and the amounts it newly holds (``to``).
    Consumers that appear in only one of the trees are compared against an
    empty set (created or removed).
    """
    moves = []
    consumers = set(before['allocations']) | set(after['allocations'])
    for consumer in sorted(consumers):
        old = before['allocations'].get(consumer, {})
        new = after['allocations'].get(consumer, {})
        classes = set()
        for allocs in (old, new):
            for resources in allocs.values():
                classes.update(resources)
        for rc in sorted(classes):
            gone, came = [], []
            for rp in sorted(set(old) | set(new)):
                delta = new.get(rp, {}).get(rc, 0) - old.get(rp, {}).get(rc, 0)
                if delta < 0:
                    gone.append([rp, -delta])
                elif delta > 0:
                    came.append([rp, delta])
            if gone or came:
                moves.append({'consumer': consumer, 'resource_class': rc, 'from': gone, 'to': came})
    return moves


def _moved_counts(moves):
    consumers = set()
    allocations = 0
    for move in moves:
        consumers.add(move['consumer'])
        allocations += len(move['to'])
    return {'consumers': len(consumers), 'allocations': allocations}


def apply_plan(state, plan):
    """The tree a reshape plan would produce, for a check-mode (plan) report.

    ``state`` is a provider tree (backend.provider_tree_state shape), ``plan``
    what the planner returned: every provider in ``plan["providers"]`` gets its
    planned inventories and traits (a new child is added under its parent),
    every consumer in ``plan["allocations"]`` its planned allocations, and the
    usages are recomputed from the allocations.
    """
    state = state or {}
    providers = {}
    for uuid, prov in (state.get('providers') or {}).items():
        providers[uuid] = dict(prov)
    for uuid, want in ((plan or {}).get('providers') or {}).items():
        prov = providers.get(uuid)
        if prov is None:
            prov = {'uuid': uuid, 'name': want.get('name') or uuid,
                    'parent_provider_uuid': want.get('parent_provider_uuid'), 'traits': []}
            providers[uuid] = prov
        prov['inventories'] = dict(want.get('inventories') or {})
        if want.get('traits') is not None:
            prov['traits'] = sorted(want['traits'])
    allocations = {}
    for consumer, body in (state.get('allocations') or {}).items():
        allocations[consumer] = body
    for consumer, body in ((plan or {}).get('allocations') or {}).items():
        allocations[consumer] = {'allocations': body.get('allocations') or {}}
    for uuid, prov in providers.items():
        usages = dict((rc, 0) for rc in prov.get('inventories') or {})
        for body in allocations.values():
            entry = (body.get('allocations') or {}).get(uuid)
            for rc, amount in ((entry or {}).get('resources') or {}).items():
                usages[rc] = usages.get(rc, 0) + amount
        prov['usages'] = usages
    return {'providers': providers, 'allocations': allocations}


# ---------------------------------------------------------------------------
# what the report ran against, and what to do next

def _clean_url(url):
    """An endpoint URL without user info, query or fragment (nothing secret can ride along)."""
    if not url:
        return None
    try:
        parts = urlsplit(str(url))
    except ValueError:
        return None
    if not parts.scheme or not parts.netloc:
        return None
    netloc = parts.netloc.rsplit('@', 1)[-1]
    return urlunsplit((parts.scheme, netloc, parts.path, '', ''))


def backend_context(options, backend=None):
    """What the report knows of the Placement it read: kind, database or cloud name and endpoint, microversion.

    ``options``: the backend options (``embedded_db``, ``cloud``, ``auth``, ...);
    only the database path, a cloud NAME (a string; a dict of connection arguments
    is never shown) and the endpoint URL (without user info or query) are taken.
    ``backend``: the open backend, if any (its negotiated microversion).
    """
    from ..backends import factory

    options = options or {}
    ctx = dict((key, None) for key in ('backend', 'embedded_db', 'cloud', 'endpoint', 'placement_microversion'))
    if options.get('embedded_db') or getattr(backend, 'kind', None) == 'embedded':
        from ..backends.sqlite.store import MICROVERSION
        ctx['backend'] = 'embedded'
        ctx['embedded_db'] = str(getattr(backend, 'path', None) or options.get('embedded_db'))
        ctx['placement_microversion'] = MICROVERSION   # what the embedded store speaks, opened or not
    elif backend is not None or factory.wants_rest(options):
        ctx['backend'] = 'rest'
        cloud = options.get('cloud')
        if isinstance(cloud, str) and cloud:
            ctx['cloud'] = cloud
        endpoint = getattr(backend, 'endpoint', None) if backend is not None else None
        auth = options.get('auth')
        if not _clean_url(endpoint) and isinstance(auth, dict):
            endpoint = auth.get('endpoint')
        ctx['endpoint'] = _clean_url(endpoint)
    if backend is not None:
        try:
            ctx['placement_microversion'] = str(backend.microversion)
        except Exception:  # pylint: disable=broad-except
            ctx['placement_microversion'] = None
    return ctx


def run_context(given=None, options=None, backend=None):
    """``(context, dropped)``: what the report shows it ran against.

    From ``given`` (the caller's dict) only the keys of :data:`CALLER_CONTEXT_KEYS`
    with a plain value (text, number, boolean; ``inventory`` may also be a list of
    texts, one inventory source each) are kept, the names of the others are
    returned in ``dropped``; the backend facts (:func:`backend_context`) and
    the collection version are added and cannot be overridden.
    """
    ctx = {}
    dropped = []
    for key, value in (given or {}).items():
        if key in CALLER_CONTEXT_KEYS and (value is None or isinstance(value, (str, int, float, bool))):
            ctx[key] = value
        elif key == 'inventory' and isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            ctx[key] = list(value)
        else:
            dropped.append(str(key))
    ctx.update(backend_context(options, backend))
    ctx['collection_version'] = COLLECTION_VERSION
    return ctx, sorted(dropped)


def context_rows(context):
    """``[(label, text)]`` of the context, for the header of report.md and report.html."""
    context = dict((k, v) for k, v in (context or {}).items() if v not in (None, ''))
    rows = []
    if context.get('awx_job_id') is not None or context.get('awx_job_template'):
        job = str(context['awx_job_id']) if context.get('awx_job_id') is not None else '-'
        if context.get('awx_job_template'):
            job += ' (template %s)' % context['awx_job_template']
        rows.append(('AWX job', job))
    for key in ('playbook', 'inventory', 'limit'):
        value = context.get(key)
        if isinstance(value, list):
            value = ', '.join(value)
        if value:
            rows.append((key, str(value)))
    for key, label in (('check_mode', 'check mode'), ('plan', 'plan only')):
        if context.get(key) is not None:
            rows.append((label, 'yes' if context[key] in (True, 'true', 'True', 'yes', 1) else 'no'))
    kind = context.get('backend')
    if kind == 'embedded':
        rows.append(('Placement', 'embedded database %s' % context.get('embedded_db')))
    elif kind == 'rest':
        text = 'REST API %s' % (context.get('endpoint') or '(endpoint from the cloud configuration)')
        if context.get('cloud'):
            text += ' (cloud %s)' % context['cloud']
        rows.append(('Placement', text))
    if kind:
        rows.append(('Placement microversion', context.get('placement_microversion')
                     or 'not negotiated (Placement was not read)'))
    if context.get('collection_version'):
        rows.append(('collection', 'placement.upgrade %s' % context['collection_version']))
    return rows


class _Invocation(list):
    """The inventory sources of the commands, and how they spell ``ansible-playbook`` (``program``)."""

    program = 'ansible-playbook'


def _inventory_arg(context):
    """The inventory sources and the program of the commands the report prints (:func:`rerun_command`).

    The context's ``ansible_playbook`` is the shell text the commands start with instead of
    ``ansible-playbook`` (e.g. ``ANSIBLE_CONFIG=/srv/site/ansible.cfg /opt/venv/bin/ansible-playbook``).
    """
    inventory = (context or {}).get('inventory')
    if isinstance(inventory, (list, tuple)):
        sources = [str(i) for i in inventory if i] or [INVENTORY_PLACEHOLDER]
    else:
        sources = [str(inventory) if inventory else INVENTORY_PLACEHOLDER]
    found = _Invocation(sources)
    program = (context or {}).get('ansible_playbook')
    if isinstance(program, str) and program.strip():
        found.program = ' '.join(program.split())
    return found


def _program(inventory):
    return getattr(inventory, 'program', 'ansible-playbook')


def _inventory_options(inventory):
    """``-i SOURCE`` for each inventory source (a list gives several)."""
    sources = inventory if isinstance(inventory, (list, tuple)) else [inventory]
    return ' '.join('-i %s' % shlex.quote(str(source)) for source in sources)


def rerun_command(nodes, inventory=INVENTORY_PLACEHOLDER):
    """The command that runs the roll again on ``nodes`` only."""
    return '%s %s placement.upgrade.rolling_reshape --limit %s' % (
        _program(inventory), _inventory_options(inventory), shlex.quote(','.join(nodes)))


def rollback_command(nodes, inventory=INVENTORY_PLACEHOLDER):
    """The command that rolls ``nodes`` back to their snapshots (playbooks/rollback.yml)."""
    return '%s %s placement.upgrade.rollback -e rollback_nodes=%s' % (
        _program(inventory), _inventory_options(inventory), shlex.quote(','.join(nodes)))


def _needs_rollback_hint(entry, mode):
    """Whether to advise rolling the node back: changed by this run, and a snapshot to go back to."""
    return mode != 'plan' and entry['touched'] and entry['status'] in ('reshaped', 'failed') and bool(entry['snapshot'])


def no_rollback_reason(entry, mode):
    """Why a node this run changed is given no rollback command ('' when it has one, or needs none)."""
    if mode == 'plan' or not entry['touched'] or entry['snapshot']:
        return ''
    if entry['status'] == 'updated':
        return ('this run sent no POST /reshaper, so it took no snapshot (one is taken just before a POST '
                '/reshaper); it wrote only %s' % (entry['written_text'] or 'what the layout missed'))
    if entry['status'] in ('reshaped', 'failed'):
        return 'its record names no snapshot, so there is nothing to roll it back to'
    return ''


#: the context's ``playbook`` of a rehearsal (playbooks/rehearse.yml: the roll on a copy of production)
REHEARSAL_PLAYBOOK = 'placement.upgrade.rehearse'


def rehearsal_copy(context):
    """The store a rehearsal ran on (its copy of production) when ``context`` is a rehearsal's: its
    ``playbook`` is :data:`REHEARSAL_PLAYBOOK` and the report's own backend an embedded store (the
    copy; playbooks/rehearse.yml refuses any other).  None otherwise."""
    context = context or {}
    if context.get('playbook') == REHEARSAL_PLAYBOOK and context.get('backend') == 'embedded' and context.get('embedded_db'):
        return str(context['embedded_db'])
    return None


def rehearsal_no_rollback(copy):
    """Why a rehearsal gives no rollback command (its copy is all it changed)."""
    return ('this run was a rehearsal on the copy %s: production was not changed, so there is nothing to roll '
            'back there (the next rehearsal starts from a fresh copy)' % copy)


def _rerun(nodes, inventory, copy):
    """The rerun command of ``nodes``; after a rehearsal, not the roll's (it would run on production)."""
    if copy:
        return ('rehearse %s again with the rehearsal\'s own command and --limit %s (playbooks/rehearse.yml '
                'exports a fresh copy of production)' % ('them' if len(nodes) > 1 else 'it', ','.join(nodes)))
    return rerun_command(nodes, inventory)


def next_steps(nodes, mode, context=None):
    """What the operator does next, one line each (the fix/rerun, rerun and rollback commands).
    After a rehearsal (:func:`rehearsal_copy`) no command of the roll or the rollback is given: they
    would act on production."""
    inventory = _inventory_arg(context)
    copy = rehearsal_copy(context)
    steps = []
    for entry in nodes:
        if entry['status'] != 'failed':
            continue
        if mode == 'plan':
            what = '%s would stop a real roll' % entry['node']
        elif entry['touched']:
            what = 'The roll stopped at %s, which failed after its reshape was applied' % entry['node']
        else:
            what = 'The roll stopped at %s (left untouched)' % entry['node']
        reason = short_reason(entry['reason']) or 'no reason recorded'
        if entry['reason'] and reason != entry['reason']:
            reason += ' (the whole reason is in its section of the report)'
        steps.append('%s: %s. Fix the reason, then rerun with --limit %s: %s' % (
            what, reason, entry['node'], _rerun([entry['node']], inventory, copy)))
    deferred = [e['node'] for e in nodes if e['status'] == 'deferred']
    if deferred:
        steps.append('Rerun the deferred node%s after %s reason%s cleared: %s' % (
            's' if len(deferred) > 1 else '', 'their' if len(deferred) > 1 else 'its',
            's are' if len(deferred) > 1 else ' is', _rerun(deferred, inventory, copy)))
    unreached = [e['node'] for e in nodes if e['status'] == 'unreached']
    if unreached:
        steps.append('The roll did not reach %s; once the cause of the stop is fixed, run %s: %s' % (
            ', '.join(unreached), 'them' if len(unreached) > 1 else 'it', _rerun(unreached, inventory, copy)))
    changed = [e['node'] for e in nodes if mode != 'plan' and e['touched']]
    if copy:
        if changed:
            steps.append('Nothing to roll back in production for %s: %s' % (', '.join(changed), rehearsal_no_rollback(copy)))
        return steps
    touched = [e['node'] for e in nodes if _needs_rollback_hint(e, mode)]
    if touched:
        steps.append('To undo this run on the node%s it reshaped (only if needed), roll %s back: %s' % (
            's' if len(touched) > 1 else '', 'them' if len(touched) > 1 else 'it',
            rollback_command(touched, inventory)))
    for entry in nodes:
        why = no_rollback_reason(entry, mode)
        if why:
            steps.append('No rollback for %s: %s' % (entry['node'], why))
    return steps


# ---------------------------------------------------------------------------
# the report data

_RECORD_KINDS = {
    'node': 'scalar?', 'provider': 'scalar?', 'status': 'text?', 'reason': 'text?', 'started': 'number?',
    'finished': 'number?', 'duration': 'number?', 'touched': 'bool?', 'derived': 'bool?', 'failed': 'bool?',
    'snapshot': 'text?', 'retries': 'int?', 'warnings': 'list?', 'verification': 'list?', 'moved': 'mapping?',
    'names': 'mapping?', 'consumer_names': 'mapping?', 'before': 'mapping?', 'after': 'mapping?',
    'unread': 'text?', 'run_id': 'scalar?', 'instances': 'mapping?', 'nova_compute': 'mapping?',
    'written': 'mapping?', 'placement_microversion': 'text?',
}
_RESULT_KINDS = {
    'status': 'text?', 'changed': 'bool?', 'snapshot': 'text?', 'moved': 'mapping?', 'verification': 'list?',
    'retries': 'int?', 'remarks': 'list?', 'warnings': 'list?', 'plan': 'mapping?', 'deferred_reason': 'text?',
    'reshaper_applied': 'bool?', 'traits_written': 'list?', 'children_created': 'list?', 'would_write': 'mapping?',
    'resent': 'int?',
}


def check_record(record, field='record'):
    """Refuse a node record (or the reshape result in it) whose fields have the wrong types, naming the field.

    Raises :class:`.errors.BadInput` (``record.started must be a finite number, got str``);
    :func:`build_report` shows such a record as a bad record without trees, and the
    fleet report module lists it in its result.
    """
    shapes.expect_fields(record, field, _RECORD_KINDS, 'a node record (a mapping)')
    for key in ('warnings',):
        shapes.expect_list_of(record.get(key), 'text', '%s.%s' % (field, key), 'a list of texts')
    for index, check in enumerate(record.get('verification') or []):
        shapes.expect(check, 'mapping', '%s.verification[%d]' % (field, index), 'a check (a mapping)')
    shapes.expect_fields(record.get('moved') or {}, field + '.moved', {'consumers': 'int?', 'allocations': 'int?'})
    shapes.expect_fields(record.get('nova_compute') or {}, field + '.nova_compute', {'before': 'text?', 'after': 'text?'})
    _check_written(record.get('written') or {}, field + '.written')
    for key in ('names', 'consumer_names'):
        for sub, name in (record.get(key) or {}).items():
            shapes.expect(name, 'scalar', '%s.%s.%s' % (field, key, sub))
    for key in ('before', 'after'):
        if record.get(key) is not None:
            _check_tree(record[key], '%s.%s' % (field, key))
    result = record.get('reshape')
    if result is not None:
        shapes.expect_fields(result, field + '.reshape', _RESULT_KINDS, 'a reshape task result (a mapping)')
        for key in ('remarks', 'warnings'):
            shapes.expect_list_of(result.get(key), 'text', '%s.reshape.%s' % (field, key), 'a list of texts')
        shapes.expect_fields(result.get('moved') or {}, field + '.reshape.moved',
                             {'consumers': 'int?', 'allocations': 'int?'})
        for index, check in enumerate(result.get('verification') or []):
            shapes.expect(check, 'mapping', '%s.reshape.verification[%d]' % (field, index), 'a check (a mapping)')
    return record


def _check_written(written, field):
    """A record's ``written`` (:func:`written_of`'s shape)."""
    shapes.expect_fields(written, field, {'reshaper': 'bool?', 'traits': 'list?', 'children': 'list?'})
    shapes.expect_list_of(written.get('children'), 'text', field + '.children', 'a list of texts')
    for index, item in enumerate(written.get('traits') or []):
        where = '%s.traits[%d]' % (field, index)
        shapes.expect_fields(item, where, {'provider': 'text?', 'uuid': 'text?', 'added': 'list?', 'removed': 'list?'},
                             'a trait change (a mapping)')
        for key in ('added', 'removed'):
            shapes.expect_list_of(item.get(key), 'text', '%s.%s' % (where, key), 'a list of texts')


def _check_tree(tree, field):
    """A tree in a record: a provider tree state, or the normalized form (allocations {consumer: {rp: {RC: n}}})."""
    shapes.expect_fields(tree, field, {'providers': 'mapping?', 'allocations': 'mapping?'}, 'a provider tree (a mapping)')
    state = {'providers': tree.get('providers') or {}, 'allocations': {}}
    for consumer, entry in (tree.get('allocations') or {}).items():
        where = '%s.allocations.%s' % (field, consumer)
        shapes.expect(entry, 'mapping', where, "a consumer's allocations (a mapping)")
        allocs = entry.get('allocations', entry)
        shapes.expect(allocs, 'mapping', where + '.allocations', optional=True)
        for rp, item in (allocs or {}).items():
            if isinstance(item, dict) and 'resources' not in item and 'generation' not in item:
                item = {'resources': item}        # the normalized form {rp: {RC: n}}
            shapes.expect_fields(item, '%s.%s' % (where, rp), {'resources': 'mapping?', 'generation': 'int?'})
            for rc, amount in (item.get('resources') or {}).items():
                shapes.expect(amount, 'int', '%s.%s.resources.%s' % (where, rp, rc))
    providers = dict((u, dict(p, name=p.get('name') or u) if isinstance(p, dict) else p)
                     for u, p in state['providers'].items())
    _snapshot.check_state({'providers': providers}, field)


def _node_entry(record, names, mode='apply'):
    check_record(record)
    record = dict(record or {})
    node = str(record.get('node') or record.get('provider') or '?')
    status = record.get('status') or 'unreached'
    if status not in STATUSES:
        status = 'failed' if record.get('failed') else status
    written = record.get('written') or {}
    if (status == ('planned' if mode == 'plan' else 'reshaped') and written.get('reshaper') is False
            and (written.get('traits') or written.get('children'))):
        status = 'updated'   # only traits or empty children were (would be) written: no POST /reshaper
    if mode == 'plan':
        touched = False      # a plan run changes nothing
    elif record.get('touched') is not None:
        touched = bool(record['touched'])
    else:
        touched = status in ('reshaped', 'rolled_back')
    after_known = bool(record.get('after')) or not touched
    after = normalize_tree(record.get('after') or record.get('before'))
    before = normalize_tree(record.get('before')) if record.get('before') else after
    moves = consumer_moves(before, after)
    moved = record.get('moved') if isinstance(record.get('moved'), dict) else None
    counted = _moved_counts(moves)
    if moved is None:
        moved = counted
    else:
        moved = {'consumers': int(moved.get('consumers', counted['consumers']) or 0),
                 'allocations': int(moved.get('allocations', counted['allocations']) or 0)}
    duration = record.get('duration')
    if duration is None and record.get('started') is not None and record.get('finished') is not None:
        duration = float(record['finished']) - float(record['started'])
    created = sorted(set(after['providers']) - set(before['providers']),
                     key=lambda u: after['providers'][u]['name'])
    removed = sorted(set(before['providers']) - set(after['providers']),
                     key=lambda u: before['providers'][u]['name'])
    for tree in (before, after):
        for uuid, prov in tree['providers'].items():
            names.setdefault(uuid, prov['name'])
    for uuid, name in (record.get('names') or {}).items():
        names.setdefault(uuid, name)
    verification = [dict(check=v.get('check', '?'), passed=bool(v.get('passed')), detail=v.get('detail', ''))
                    for v in (record.get('verification') or []) if isinstance(v, dict)]
    return {
        'node': node,
        'provider': str(record.get('provider') or node),
        'status': status,
        'reason': str(record.get('reason') or ''),
        'started': record.get('started'),
        'finished': record.get('finished'),
        'duration': duration,
        'before': before,
        'after': after,
        'after_known': after_known,
        'changed_tree': bool(moves or created or removed or trees_differ(before, after)),
        'touched': touched,
        'unread': str(record.get('unread') or ''),
        'derived': bool(record.get('derived')),
        'moves': moves,
        'moved': moved,
        'created': created,
        'removed': removed,
        'verification': verification,
        'snapshot': str(record.get('snapshot') or ''),
        'retries': int(record.get('retries') or 0),
        'warnings': [str(w) for w in (record.get('warnings') or [])],
        'consumer_names': dict(record.get('consumer_names') or {}),
        'nova_compute': nova_compute_versions(record),
        'written': {'reshaper': written.get('reshaper'), 'traits': list(written.get('traits') or []),
                    'children': list(written.get('children') or [])},
        'written_text': written_text(written),
    }


def written_text(written):
    """``traits added: OWNER_NOVA on cn1_pci_0000_81_00_0`` of a record's ``written`` ('' when nothing)."""
    from ..node import reshaper
    return reshaper.written_text((written or {}).get('children'), (written or {}).get('traits'))


def nova_compute_versions(record):
    """``{'before', 'after'}``: nova-compute's version on the node before and after (null when not read),
    ``{}`` when the roll did not read it."""
    versions = (record or {}).get('nova_compute') if isinstance(record, dict) else None
    if not isinstance(versions, dict) or not (versions.get('before') or versions.get('after')):
        return {}
    return {'before': versions.get('before') or None, 'after': versions.get('after') or None}


def nova_compute_text(versions):
    """``nova-compute 33.0.0 -> 34.0.0`` (``?`` for a version not read), '' without versions."""
    if not versions:
        return ''
    return 'nova-compute %s -> %s' % (versions.get('before') or '?', versions.get('after') or '?')


def _fallback_entry(record, node, names, mode, exc):
    """The entry of a record that cannot be drawn: its outcome without trees, and why."""
    record = record if isinstance(record, dict) else {}
    status = record.get('status')
    if not isinstance(status, str) or status not in STATUSES:
        status = 'failed'
    reason = record.get('reason')
    fallback = {
        'node': node,
        'provider': record.get('provider') if isinstance(record.get('provider'), str) else node,
        'status': status,
        'reason': reason if isinstance(reason, str) else '',
        'touched': record.get('touched') if isinstance(record.get('touched'), bool) else None,
        'snapshot': record.get('snapshot') if isinstance(record.get('snapshot'), str) else '',
        'unread': 'its node record is badly shaped (%s); trees and counts are not shown' % shape_text(exc),
    }
    return _node_entry(fallback, names, mode)


def shape_text(exc):
    """A shape error names its field already; anything else also says what it was."""
    if isinstance(exc, BadInput):
        return exc.detail
    return '%s: %s' % (type(exc).__name__, exc)


def trees_differ(before, after):
    """Whether two normalized trees differ in providers, inventories, traits or allocations."""
    if set(before['providers']) != set(after['providers']):
        return True
    for uuid, prov in before['providers'].items():
        other = after['providers'][uuid]
        if prov['inventories'] != other['inventories'] or prov['traits'] != other['traits']:
            return True
        if prov.get('parent') != other.get('parent'):
            return True
    return before['allocations'] != after['allocations']


def _outcome(entry, mode, inventory):
    """What happened to the node, in words (a failed node says whether its tree was changed)."""
    status = entry['status']
    if mode == 'plan':
        return status_label(status, mode)
    if status == 'failed':
        if entry['touched'] and entry['snapshot']:
            return 'failed after its reshape was applied (rollback: %s)' % rollback_command([entry['node']], inventory)
        if entry['touched']:
            return 'failed after its reshape was applied (no snapshot named: nothing to roll it back to)'
        return 'failed, left untouched'
    if status == 'updated':
        return 'updated without a reshape: only what the layout missed was written (%s); nothing moved, no POST /reshaper' % (
            entry['written_text'] or 'nothing recorded')
    if entry['derived']:
        return '%s (derived from its snapshot and Placement: the roll wrote no record of it)' % status_label(status)
    return status_label(status, mode)


def _record_key(rec):
    key = rec.get('node') or rec.get('provider')
    return None if key is None else str(key)


def build_report(records, hosts=None, title='Rolling reshape report', mode='apply', started=None,
                 finished=None, run_id=None, stopped=None, context=None):
    """Assemble the report data (a JSON-serialisable dict).

    ``records``: node records (see the module docstring), any order, or a dict
    ``{node: record}``.  ``hosts``: every target node in roll order; a host
    without a record is ``unreached``.  ``mode``: ``apply`` or ``plan`` (check
    mode; the nodes that would stop a real roll come first).  ``stopped``:
    ``{"node", "reason"}`` when the roll stopped early (by default the first
    failed node of an apply run).  ``context``: what the report ran against
    (:func:`run_context`).  A record that is not a dict is left out, one that
    cannot be drawn is shown without trees; ``problems`` in the result names them.
    """
    mode = 'plan' if mode in ('plan', 'check') else mode
    problems = []
    if isinstance(records, dict):
        records = [dict(r, node=r.get('node') or n) if isinstance(r, dict) else r for n, r in records.items()]
    by_node = {}
    for rec in records or []:
        if not rec:
            continue
        if not isinstance(rec, dict):
            problems.append('a node record is not a mapping (%s); it was left out' % shapes.type_name(rec))
            continue
        key = _record_key(rec)
        if key is None:
            problems.append('a node record names no node; it was left out')
            continue
        by_node[key] = rec
    order = [str(h) for h in hosts or []]
    for node in sorted(by_node):
        if node not in order:
            order.append(node)
    names = {}
    nodes = []
    for node in order:
        rec = by_node.get(node) or {'node': node, 'status': 'unreached'}
        try:
            entry = _node_entry(rec, names, mode)
        except Exception as exc:  # pylint: disable=broad-except
            problems.append('the record of %s is badly shaped (%s); shown without trees'
                            % (node, shape_text(exc)))
            entry = _fallback_entry(rec, node, names, mode, exc)
        nodes.append(entry)
    if mode == 'plan':
        # the nodes that would stop a real roll first, then the rest in roll order
        nodes = [e for e in nodes if e['status'] == 'failed'] + [e for e in nodes if e['status'] != 'failed']
    context = dict(context or {})
    if context.get('backend') and not context.get('placement_microversion'):
        # the report did not read Placement itself: the microversion the run's node passes negotiated
        seen = sorted(set(str(r['placement_microversion']) for r in by_node.values()
                          if isinstance(r, dict) and r.get('placement_microversion')))
        if seen:
            context['placement_microversion'] = ', '.join(seen)
    inventory = _inventory_arg(context)
    copy = rehearsal_copy(context)
    for entry in nodes:
        entry['outcome'] = _outcome(entry, mode, inventory)
        entry['rollback'] = (rollback_command([entry['node']], inventory)
                             if _needs_rollback_hint(entry, mode) else '')
        entry['no_rollback'] = no_rollback_reason(entry, mode)
        if copy and mode != 'plan' and entry['touched']:
            # a rehearsal changed its copy only: no rollback of production to give
            entry['rollback'] = ''
            entry['no_rollback'] = rehearsal_no_rollback(copy)
            if entry['status'] == 'failed':
                entry['outcome'] = 'failed after its reshape was applied to the copy'
        for move in entry['moves']:
            for side in ('from', 'to'):
                for pair in move[side]:
                    names.setdefault(pair[0], _short(pair[0]))
    counts = dict((s, 0) for s in STATUSES)
    for entry in nodes:
        counts[entry['status']] = counts.get(entry['status'], 0) + 1
    starts = [e['started'] for e in nodes if e['started'] is not None]
    ends = [e['finished'] for e in nodes if e['finished'] is not None]
    if started is None and starts:
        started = min(starts)
    if finished is None and ends:
        finished = max(ends)
    failed = [e for e in nodes if e['status'] == 'failed']
    if stopped is None and failed and mode != 'plan':
        stopped = {'node': failed[0]['node'], 'reason': failed[0]['reason']}
    totals = {
        'nodes': len(nodes),
        'statuses': counts,
        'touched': sum(1 for e in nodes if e['touched']),
        'consumers_moved': sum(e['moved']['consumers'] for e in nodes),
        'allocations_moved': sum(e['moved']['allocations'] for e in nodes),
        'providers_created': sum(len(e['created']) for e in nodes),
        'retries': sum(e['retries'] for e in nodes),
        'duration': (float(finished) - float(started)) if started is not None and finished is not None else None,
    }
    return {
        'title': title,
        'mode': mode,
        'run_id': run_id or '',
        'context': context,
        'started': started,
        'finished': finished,
        'generated': time.time(),
        'stopped': stopped,
        'totals': totals,
        'nodes': nodes,
        'names': names,
        'deferred': [{'node': e['node'], 'reason': e['reason']} for e in nodes if e['status'] == 'deferred'],
        'unreached': [e['node'] for e in nodes if e['status'] == 'unreached'],
        'failed': [{'node': e['node'], 'reason': e['reason'], 'touched': e['touched']} for e in failed],
        'would_stop': ([{'node': e['node'], 'reason': e['reason']} for e in failed] if mode == 'plan' else []),
        'touched': [e['node'] for e in nodes if e['touched']],
        'unread': [{'node': e['node'], 'reason': e['unread']} for e in nodes if e['unread']],
        'next_steps': next_steps(nodes, mode, context),
        'problems': problems,
    }


def summary(report):
    """The machine-readable summary (summary.json): totals and per-node outcome, no trees."""
    return {
        'title': report['title'],
        'mode': report['mode'],
        'run_id': report['run_id'],
        'context': report['context'],
        'started': report['started'],
        'finished': report['finished'],
        'stopped': report['stopped'],
        'totals': report['totals'],
        'deferred': report['deferred'],
        'failed': report['failed'],
        'would_stop': report['would_stop'],
        'unreached': report['unreached'],
        'touched': report['touched'],
        'unread': report['unread'],
        'next_steps': report['next_steps'],
        'nodes': [dict(node=e['node'], provider=e['provider'], status=e['status'],
                       label=status_label(e['status'], report['mode']), outcome=e['outcome'],
                       touched=e['touched'], derived=e['derived'], unread=e['unread'],
                       reason=e['reason'], duration=e['duration'], moved=e['moved'], snapshot=e['snapshot'],
                       rollback=e['rollback'], no_rollback=e['no_rollback'], written=e['written'],
                       warnings=e['warnings'], retries=e['retries'], nova_compute=e['nova_compute'],
                       created=[e['after']['providers'][u]['name'] for u in e['created']],
                       verification_failed=[v['check'] for v in e['verification'] if not v['passed']])
                  for e in report['nodes']],
    }


def summary_line(report):
    """One line an operator reads at the end of the run."""
    totals = report['totals']
    counts = totals['statuses']
    plan = report['mode'] == 'plan'
    parts = []
    if plan:
        parts.append('%d would reshape' % counts.get('planned', 0))
        if counts.get('updated'):
            parts.append('%d would update without a reshape (traits or children only)' % counts['updated'])
        parts.append('%d already done' % counts.get('noop', 0))
        parts.append('%d deferred' % counts.get('deferred', 0))
        parts.append('%d would stop the roll' % counts.get('failed', 0))
    else:
        parts.append('%d reshaped' % counts.get('reshaped', 0))
        if counts.get('updated'):
            parts.append('%d updated without a reshape (traits or children only)' % counts['updated'])
        parts.append('%d skipped' % counts.get('noop', 0))
        parts.append('%d deferred' % counts.get('deferred', 0))
        failed_touched = sum(1 for e in report['nodes'] if e['status'] == 'failed' and e['touched'])
        parts.append('%d failed%s' % (counts.get('failed', 0), (' (%d after its reshape was applied)' % failed_touched)
                                      if failed_touched else ''))
    for status in ('rolled_back', 'verified', 'unreached'):
        if counts.get(status):
            parts.append('%d %s' % (counts[status], status_label(status, report['mode'])))
    text = '%d nodes%s: %s; %d allocations of %d consumers %s' % (
        totals['nodes'], ' (plan)' if plan else '', ', '.join(parts), totals['allocations_moved'],
        totals['consumers_moved'], 'to move' if plan else 'moved')
    if report['unread']:
        text += '; %d node tree%s not read from Placement' % (len(report['unread']),
                                                              's' if len(report['unread']) > 1 else '')
    if totals['duration'] is not None:
        text += '; %s' % format_duration(totals['duration'])
    return text


# ---------------------------------------------------------------------------
# rendering: report_render draws the data from the Jinja2 templates (templates/fleet_report/)

def external_holdings(tree):
    """{rp: {RC: n}} the tree's consumers hold on providers outside the tree."""
    out = {}
    for allocs in tree['allocations'].values():
        for rp, resources in allocs.items():
            if rp in tree['providers']:
                continue
            slot = out.setdefault(rp, {})
            for rc, n in resources.items():
                slot[rc] = slot.get(rc, 0) + n
    return out


def render_markdown(report, template=None):
    """report.md from ``report`` (:func:`build_report`), drawn by ``templates/fleet_report/report.md.j2``
    or by the operator's ``template`` (a path); needs jinja2 (see :mod:`.report_render`)."""
    from . import render as report_render
    return report_render.render_markdown(report, template)


def render_html(report, template=None):
    """report.html from ``report``, drawn by ``templates/fleet_report/report.html.j2`` (autoescaped)
    or by the operator's ``template`` (a path); needs jinja2."""
    from . import render as report_render
    return report_render.render_html(report, template)


def tree_svg(tree, created=(), removed=(), external=None, names=None, label=''):
    """One provider tree as an inline SVG (``tree.svg.j2``); see :func:`.report_render.tree_picture`."""
    from . import render as report_render
    return report_render.tree_svg(tree, created, removed, external, names, label)


# ---------------------------------------------------------------------------
# files

def report_files(report, html_template=None, markdown_template=None):
    """``{file name: text}`` of the report: report.md and report.html rendered (the operator's
    templates, when given, else the shipped ones) and summary.json."""
    return {
        'report.md': render_markdown(report, markdown_template),
        'report.html': render_html(report, html_template),
        'summary.json': json.dumps(summary(report), indent=2, sort_keys=True, default=str) + '\n',
    }


def report_paths(dest):
    """``{"markdown", "html", "summary"}``: the paths of the report files in ``dest``."""
    return {
        'markdown': os.path.join(dest, 'report.md'),
        'html': os.path.join(dest, 'report.html'),
        'summary': os.path.join(dest, 'summary.json'),
    }


def write_files(dest, files):
    """Write ``{file name: text}`` (:func:`report_files`) into ``dest`` (created 0700; files 0600,
    atomically, in the order of :data:`REPORT_FILES`); return the paths (:func:`report_paths`)."""
    unknown = sorted(set(files) - set(REPORT_FILES))
    if unknown:
        raise ReportError('not a report file: %s (the report files are %s)' % (', '.join(unknown), ', '.join(REPORT_FILES)))
    _files.make_dirs(dest)
    for name in REPORT_FILES:
        if name in files:
            _files.atomic_write(os.path.join(dest, name), files[name], mode=FILE_MODE)
    return report_paths(dest)


def write_report(dest, report, html_template=None, markdown_template=None):
    """Write report.md, report.html and summary.json into ``dest`` (created 0700; files 0600); return the paths."""
    return write_files(dest, report_files(report, html_template, markdown_template))


def latest_link(dest):
    """Point a ``latest`` symbolic link next to ``dest`` at it (replaced atomically); the link, or
    None when a file that is not a link is in the way."""
    parent = os.path.dirname(os.path.abspath(dest))
    link = os.path.join(parent, 'latest')
    target = os.path.basename(os.path.abspath(dest))
    if os.path.islink(link) and os.readlink(link) == target:
        return link
    if os.path.exists(link) and not os.path.islink(link):
        return None
    _files.remove_leftover_links(parent, 'latest')     # what a run killed between the two steps below left
    tmp = '%s.%d' % (link, os.getpid())
    if os.path.lexists(tmp):
        os.unlink(tmp)
    os.symlink(target, tmp)
    os.rename(tmp, link)
    return link


def record_path(dest, node):
    """``dest/nodes/<file_stem(node)>.json``: one file per node name, never shared (``cmp/01`` -> ``cmp%2F01``)."""
    return os.path.join(dest, 'nodes', '%s.json' % _names.file_stem(node))


def save_record(dest, record):
    """Store one node record as ``dest/nodes/<node>.json`` (atomic, 0600, folders 0700); return the path."""
    _files.make_dirs(dest)  # (an empty dest fails here, never the current directory's nodes/)
    _files.make_dirs(os.path.join(dest, 'nodes'))
    path = record_path(dest, record.get('node') or record.get('provider') or 'unknown')
    _files.atomic_write(path, json.dumps(record, indent=1, sort_keys=True, default=str) + '\n', mode=FILE_MODE)
    return path


def load_records(dest):
    """Every node record stored under ``dest/nodes`` (unreadable or badly shaped files are skipped and named)."""
    folder = os.path.join(dest, 'nodes')
    records, problems = [], []
    if not os.path.isdir(folder):
        return records, problems
    for name in sorted(os.listdir(folder)):
        if not name.endswith('.json') or name.startswith('.'):
            continue
        path = os.path.join(folder, name)
        try:
            with open(path) as handle:
                record = json.load(handle)
        except (OSError, IOError, ValueError) as exc:
            problems.append('%s: %s' % (path, exc))
            continue
        if not isinstance(record, dict) or _record_key(record) is None:
            problems.append('%s: not a node record (a mapping naming its node)' % path)
            continue
        records.append(record)
    return records, problems


def load_some_records(dest, nodes):
    """The stored records of ``nodes`` under ``dest/nodes``, or else one stored record: enough to
    tell the run the folder holds (every record stored there agrees on it) without reading all."""
    folder = os.path.join(dest, 'nodes')
    if not os.path.isdir(folder):
        return []
    paths = [record_path(dest, node) for node in nodes if node]
    found = [path for path in paths if os.path.exists(path)]
    if not found:
        for name in sorted(os.listdir(folder)):
            if name.endswith('.json') and not name.startswith('.'):
                found = [os.path.join(folder, name)]
                break
    records = []
    for path in found:
        try:
            with open(path) as handle:
                record = json.load(handle)
        except (OSError, IOError, ValueError):
            continue  # the full report names unreadable files
        if isinstance(record, dict) and _record_key(record) is not None:
            records.append(record)
    return records


def record_run_ids(records):
    """{run id: [nodes]} of stored records (``''`` for a record without one)."""
    runs = {}
    for rec in records:
        run = rec.get('run_id')
        runs.setdefault('' if run is None else str(run), []).append(_record_key(rec))
    return runs


def check_run(records, run_id, dest=''):
    """The run id the report is of; :class:`ReportError` when ``dest`` holds another run's records.

    With ``run_id`` given every stored record must carry that same id; without
    one, the stored records must agree on theirs (which is then the report's).
    """
    runs = record_run_ids(records)
    if run_id:
        others = dict((k, v) for k, v in runs.items() if k != run_id)
        if others:
            detail = '; '.join('run %s: %s' % (k or '(none)', ', '.join(sorted(v))) for k, v in sorted(others.items()))
            raise ReportError('%s already holds node records of another run (%s), not of run %s: the report '
                              'would mix two runs. Give each run its own directory (a new run id), or move the '
                              'old records away.' % (dest or 'dest', detail, run_id))
        return run_id
    if len(runs) > 1:
        raise ReportError('%s holds node records of several runs (%s): the report would mix them; give the '
                          'run_id to report on, each run in its own directory.'
                          % (dest or 'dest', ', '.join(sorted(k or '(none)' for k in runs))))
    return next(iter(runs)) if runs else ''


# ---------------------------------------------------------------------------
# node records from the roll's task results (reads Placement)

def _status_of(record, mode):
    result = record.get('reshape') if isinstance(record.get('reshape'), dict) else {}
    status = record.get('status') or result.get('status') or 'unreached'
    if mode == 'plan' and status in ('reshaped', 'rolled_back'):
        status = 'planned'
    return status


def consumer_names(instances):
    """{uuid: guest name} from a device report's ``instances`` map.

    A guest holding NVIDIA vGPUs of the vendor-specific VFIO framework (the instance's
    ``vgpus``) is named with the vGPU type of each VF it holds:
    ``instance-00000061, vGPU NVIDIA L4-6Q on VF 0000:41:00.4``.
    """
    names = {}
    if not isinstance(instances, dict):
        return names
    for uuid, info in instances.items():
        if not isinstance(info, dict):
            continue
        parts = [str(info['name'])] if info.get('name') else []
        for vgpu in info.get('vgpus') if isinstance(info.get('vgpus'), list) else []:
            if isinstance(vgpu, dict) and vgpu.get('address'):
                kind = vgpu.get('type') or ('type id %s' % vgpu['type_id'] if vgpu.get('type_id') else 'no type')
                parts.append('vGPU %s on VF %s' % (kind, vgpu['address']))
        if parts:
            names[str(uuid).lower()] = ', '.join(parts)
    return names


def _without_created(state, created_names):
    """The snapshot's tree without the (still empty) children this pass created before it."""
    created = set(created_names)
    providers = dict((u, p) for u, p in (state.get('providers') or {}).items()
                     if not (p.get('name') in created and not p.get('inventories')))
    return {'providers': providers, 'allocations': state.get('allocations') or {}}


def _error_text(exc):
    if isinstance(exc, PlacementError):
        return exc.detail if not exc.status else str(exc)
    return '%s: %s' % (type(exc).__name__, exc)


def _applied(status, result, mode):
    """Whether the record says this run changed the node's tree (its reshape or rollback went through)."""
    if mode == 'plan':
        return False
    if status in ('reshaped', 'rolled_back'):
        return True
    if status == 'failed':
        return bool(result.get('snapshot')) and (result.get('changed') is True or result.get('status') == 'reshaped')
    return False


def _read_tree(backend, node, provider, out, warnings, read_error, known=None):
    """(state, foreign names) of the node's tree, or (None, {}) with ``out["unread"]`` saying why.

    ``known``: a state read earlier (the node's snapshot): consumers not written since are
    taken from it, not read again (:func:`.backend.provider_tree_state`).

    :class:`ServiceUnavailable` is raised (the caller stops reading for the run);
    any other Placement error only marks this node unread.
    """
    from .. import resources as ops
    from ..node import reshaper
    from ..errors import ServiceUnavailable

    if backend is None:
        if read_error:
            out['unread'] = read_error
        return None, {}
    try:
        prov = ops.find_provider(backend, provider)
        if prov is None:
            warnings.append('%s: root provider %s not found in Placement' % (node, provider))
            out['unread'] = 'root provider %s not found in Placement' % provider
            return None, {}
        root_uuid = prov.get('root_provider_uuid') or prov['uuid']
        state, foreign = reshaper.read_node(backend, root_uuid, known=known)
    except ServiceUnavailable:
        raise
    except PlacementError as exc:
        out['unread'] = 'cannot read the provider tree from Placement: %s' % _error_text(exc)
        warnings.append('%s: %s' % (node, out['unread']))
        return None, {}
    names = dict((rp, info['name']) for rp, info in foreign.items() if info.get('name'))
    return state, names


def _known_state(path):
    """The state saved in a snapshot file, to spare re-reading its consumers (None when unreadable:
    the warning comes from :func:`_snapshot_before`)."""
    try:
        state = _snapshot.load_snapshot(path).get('state')
    except _snapshot.SnapshotError:
        return None
    return state if isinstance(state, dict) else None


def _snapshot_before(path, node, out, warnings):
    """The tree before from a snapshot file (None, with a warning, when it cannot be read)."""
    try:
        snap = _snapshot.load_snapshot(path)
    except _snapshot.SnapshotError as exc:
        warnings.append('%s: %s' % (node, exc.detail))
        return None, None
    for rp, info in (snap.get('foreign') or {}).items():
        if info.get('name'):
            out['names'].setdefault(rp, info['name'])
    return _without_created(snap['state'], snap.get('created_children') or []), snap


def _epoch(created_at):
    try:
        return calendar.timegm(time.strptime(str(created_at).split('.', maxsplit=1)[0].rstrip('Z'),
                                             '%Y-%m-%dT%H:%M:%S'))
    except (TypeError, ValueError):
        return None


def collect_record(backend, record, mode='apply', read_error=None, snapshot_dir=None, run_id='', read=None):
    """Turn what the roll recorded for one node into a node record with trees.

    ``record``: ``{"node", "provider", "status", "reason", "started", "finished",
    "reshape": <the reshape task's result>}``.  The node's tree is read from
    Placement now (``backend``; None skips reading, and ``read_error`` then says
    why it could not be read); the tree before is the snapshot the reshape wrote
    (``reshaped``, and a ``failed`` node whose reshape was applied before the
    failure), the plan applied to the tree (``planned``, check mode), or the
    tree as it is (nothing changed).  A failed node whose result shows no applied
    reshape but that has a snapshot of this run (``snapshot_dir``, ``run_id``) is
    compared with it: touched when its tree is not the snapshot's any more (or
    cannot be read).  Raises :class:`ServiceUnavailable` when Placement stops
    answering (the caller goes on without it); other read errors mark the record
    ``unread``.  Returns ``(record, warnings)``.

    ``read``: ``(state, foreign)``, the node's tree as the reshape that produced ``record`` last
    read it (``reshape_node``'s ``observed``): used instead of reading it again.
    """
    check_record(record)
    warnings = []
    result = record.get('reshape') if isinstance(record.get('reshape'), dict) else {}
    status = _status_of(record, mode)
    node = record.get('node') or record.get('provider')
    applied = _applied(status, result, mode)
    out = {
        'node': node,
        'provider': record.get('provider') or node,
        'status': status,
        'reason': record.get('reason') or result.get('deferred_reason') or '',
        'started': record.get('started'),
        'finished': record.get('finished'),
        'moved': result.get('moved') if (applied or status == 'planned') else None,
        'verification': result.get('verification') or [],
        'snapshot': result.get('snapshot') or '',
        'retries': result.get('retries') or 0,
        'warnings': _unique(list(record.get('warnings') or []) + list(result.get('remarks') or result.get('warnings') or [])),
        'names': {},
        'consumer_names': consumer_names(record.get('instances')),
        'touched': applied,
        'nova_compute': nova_compute_versions(record),
    }
    if result.get('retries') and mode != 'plan':
        # (the task warned it too: run_module)
        out['warnings'] = _unique(out['warnings'] + [retries_warning(result['retries'], result.get('resent', 0))])
    written = written_of(result)
    if written is not None and mode != 'plan':
        out['written'] = written
    elif mode == 'plan' and isinstance(result.get('would_write'), dict):
        out['written'] = written_of(dict(result['would_write'], reshaper_applied=result['would_write'].get('reshaper'),
                                         traits_written=result['would_write'].get('traits'),
                                         children_created=result['would_write'].get('children')))
    if backend is not None:
        out['placement_microversion'] = _microversion(backend)
    run_snapshot = None
    if (mode != 'plan' and status in ('reshaped', 'failed') and not out['snapshot']
            and snapshot_dir and run_id):
        found = _snapshot.run_snapshots(snapshot_dir, out['provider'], run_id)
        if found:
            run_snapshot = found[0][0]
            out['snapshot'] = run_snapshot
    known = None
    if out['snapshot'] and (applied or run_snapshot) and status != 'planned':
        known = _known_state(out['snapshot'])
    if read is not None:
        state = read[0]
        foreign_names = dict((rp, info['name']) for rp, info in (read[1] or {}).items() if info.get('name'))
    else:
        state, foreign_names = _read_tree(backend, node, out['provider'], out, warnings, read_error, known=known)
    out['names'].update(foreign_names)
    before, after = state, state
    if status == 'planned' and state is not None:
        after = apply_plan(state, result.get('plan'))
    elif out['snapshot'] and (applied or run_snapshot):
        snap_before, _doc = _snapshot_before(out['snapshot'], node, out, warnings)
        if snap_before is not None:
            before = snap_before
            if run_snapshot and not applied:
                # the roll's result does not say whether the reshape went through: Placement does
                out['touched'] = state is None or trees_differ(normalize_tree(snap_before), normalize_tree(state))
                if out['touched']:
                    warnings.append('%s: its tree is not the one in its snapshot %s of this run any more%s: '
                                    'counted as changed by this run' % (
                                        node, run_snapshot, '' if state is not None else
                                        ' (or could not be read)'))
                    out['moved'] = None
                else:
                    out['snapshot'] = ''
                    before = state
    elif status == 'rolled_back':
        before = None
    if out['moved'] is None and not out['touched']:
        out['moved'] = {'consumers': 0, 'allocations': 0}
    out['before'] = before
    out['after'] = after
    return out, warnings


def _unique(texts):
    """``texts`` without repeats, in order."""
    seen = set()
    out = []
    for text in texts:
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


def _microversion(backend):
    try:
        return str(backend.microversion)
    except Exception:  # pylint: disable=broad-except
        return None


def written_of(result):
    """What a reshape result says it wrote: ``{"reshaper", "traits", "children"}`` (see the module
    docstring's ``written``), None for a result that does not say (older, or not a reshape's)."""
    if not isinstance(result, dict) or not isinstance(result.get('reshaper_applied'), bool):
        return None
    traits = [dict(provider=str(w.get('provider') or w.get('uuid') or '?'), uuid=str(w.get('uuid') or ''),
                   added=[str(t) for t in w.get('added') or []], removed=[str(t) for t in w.get('removed') or []])
              for w in result.get('traits_written') or [] if isinstance(w, dict)]
    return {'reshaper': result['reshaper_applied'], 'traits': traits,
            'children': [str(c) for c in result.get('children_created') or []]}


def derive_record(backend, node, provider, snapshots, read_error=None):
    """The record of a node the roll wrote none of, though this run reshaped it (it has a snapshot of the run).

    ``snapshots``: ``[(path, doc)]`` of this run, oldest first (:func:`snapshot.run_snapshots`).
    The tree before is the first snapshot's (without the empty children the pass
    created), the tree after is Placement's now.  The status is ``reshaped`` unless
    Placement shows the tree exactly as in the snapshot (then the reshape was not
    applied: ``failed``, untouched).  Raises :class:`ServiceUnavailable` like
    :func:`collect_record`.  Returns ``(record, warnings)``.
    """
    path, doc = snapshots[0]
    warnings = []
    out = {
        'node': node,
        'provider': provider,
        'status': 'reshaped',
        'started': _epoch(doc.get('created_at')),
        'finished': None,
        'moved': None,
        'verification': [],
        'snapshot': path,
        'retries': 0,
        'warnings': [],
        'names': {},
        'consumer_names': {},
        'touched': True,
        'derived': True,
    }
    for rp, info in (doc.get('foreign') or {}).items():
        if isinstance(info, dict) and info.get('name'):
            out['names'][rp] = info['name']
    state, foreign_names = _read_tree(backend, node, provider, out, warnings, read_error,
                                      known=doc.get('state') if isinstance(doc.get('state'), dict) else None)
    out['names'].update(foreign_names)
    before = _without_created(doc['state'], doc.get('created_children') or [])
    if state is not None and not trees_differ(normalize_tree(before), normalize_tree(state)):
        out['status'] = 'failed'
        out['touched'] = False
        out['reason'] = ('its record was not written by the roll; a snapshot of this run exists (%s) but its tree in '
                         'Placement is still the snapshot\'s: the reshape was not applied' % path)
        out['before'] = state
        out['after'] = None
    else:
        out['reason'] = ('its record was not written by the roll (it stopped before recording this node); this '
                         'entry was derived from its snapshot %s and Placement%s' % (
                             path, '' if state is not None else ' (which could not be read)'))
        out['before'] = before
        out['after'] = state
        if state is None:
            plan = doc.get('plan') if isinstance(doc.get('plan'), dict) else {}
            if isinstance(plan.get('moved'), dict):
                out['moved'] = plan['moved']
    warnings.append('%s: %s' % (node, out['reason']))
    return out, warnings
