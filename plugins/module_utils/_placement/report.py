# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report of a rolling reshape: Markdown, a self-contained HTML page, JSON.

Input is one *node record* per compute node (plain dicts, JSON-serialisable)::

    node:         inventory hostname ("compute-01")
    provider:     root provider name (defaults to node)
    status:       reshaped | noop | deferred | failed | planned | rolled_back |
                  verified | unreached
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

from html import escape as _html_escape
from urllib.parse import urlsplit, urlunsplit

from . import model
from . import names as _names
from . import snapshot as _snapshot
from .errors import BadInput, PlacementError
from .version import COLLECTION_VERSION

STATUSES = ('reshaped', 'planned', 'noop', 'deferred', 'failed', 'rolled_back', 'verified',
            'unreached')

STATUS_LABELS = {
    'reshaped': 'reshaped',
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
                          deferred='would be deferred')

REPORT_FILES = ('report.md', 'report.html', 'summary.json')

#: file and directory modes of everything the report writes
FILE_MODE = 0o600
DIR_MODE = 0o700

#: the keys of the ``context`` a caller (the role) may give; anything else is dropped
CALLER_CONTEXT_KEYS = ('awx_job_id', 'awx_job_template', 'playbook', 'check_mode', 'plan', 'inventory', 'limit')
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
    return _html_escape('' if text is None else str(text), quote=True)


def _md(text):
    """Escape the characters that would break a Markdown table cell or emphasis."""
    text = '' if text is None else str(text)
    for char in ('\\', '|', '*', '`', '<', '>', '[', ']'):
        text = text.replace(char, '\\' + char)
    return text.replace('\n', ' ')


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


def _number(value):
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
    empty tree.
    """
    tree = tree or {}
    providers = {}
    for uuid, prov in (tree.get('providers') or {}).items():
        invs = {}
        for rc, rec in (prov.get('inventories') or {}).items():
            inv = dict(model.INVENTORY_DEFAULTS)
            inv.update(dict((k, v) for k, v in rec.items() if k in model.INVENTORY_FIELDS and v is not None))
            inv.setdefault('total', 0)
            invs[rc] = inv
        providers[uuid] = {
            'uuid': uuid,
            'name': prov.get('name') or uuid,
            'parent': prov.get('parent_provider_uuid'),
            'inventories': invs,
            'usages': dict(prov.get('usages') or {}),
            'traits': sorted(prov.get('traits') or []),
        }
    allocations = {}
    for consumer, entry in (tree.get('allocations') or {}).items():
        allocs = entry.get('allocations', entry) if isinstance(entry, dict) else {}
        per_rp = {}
        for rp, item in (allocs or {}).items():
            resources = item.get('resources', {}) if isinstance(item, dict) else {}
            if resources:
                per_rp[rp] = dict(resources)
        allocations[consumer] = per_rp
    return {'providers': providers, 'allocations': allocations}


def tree_roots(providers):
    """Uuids of the providers whose parent is not in ``providers``, sorted by name."""
    roots = [u for u, p in providers.items() if not p.get('parent') or p['parent'] not in providers]
    return sorted(roots, key=lambda u: (providers[u]['name'], u))


def tree_children(providers, uuid):
    kids = [u for u, p in providers.items() if p.get('parent') == uuid and u != uuid]
    return sorted(kids, key=lambda u: (providers[u]['name'], u))


def tree_order(providers):
    """[(uuid, depth)] depth-first, children by name."""
    out = []
    seen = set()

    def walk(uuid, depth):
        if uuid in seen:
            return
        seen.add(uuid)
        out.append((uuid, depth))
        for kid in tree_children(providers, uuid):
            walk(kid, depth + 1)

    for root in tree_roots(providers):
        walk(root, 0)
    for uuid in sorted(providers):   # cycles cannot happen in Placement; be safe anyway
        if uuid not in seen:
            walk(uuid, 0)
    return out


def usage_of(tree, uuid, rc):
    """Usage of ``rc`` on provider ``uuid``: the tree's usages, else the sum of its allocations."""
    prov = tree['providers'].get(uuid)
    if prov is not None and rc in prov['usages']:
        return prov['usages'][rc]
    total = 0
    for allocs in tree['allocations'].values():
        total += allocs.get(uuid, {}).get(rc, 0)
    return total


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
    from . import factory

    options = options or {}
    ctx = dict((key, None) for key in ('backend', 'embedded_db', 'cloud', 'endpoint', 'placement_microversion'))
    if options.get('embedded_db') or getattr(backend, 'kind', None) == 'embedded':
        ctx['backend'] = 'embedded'
        ctx['embedded_db'] = str(getattr(backend, 'path', None) or options.get('embedded_db'))
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


def _inventory_arg(context):
    inventory = (context or {}).get('inventory')
    if isinstance(inventory, (list, tuple)):
        return [str(i) for i in inventory if i] or INVENTORY_PLACEHOLDER
    return str(inventory) if inventory else INVENTORY_PLACEHOLDER


def _inventory_options(inventory):
    """``-i SOURCE`` for each inventory source (a list gives several)."""
    sources = inventory if isinstance(inventory, (list, tuple)) else [inventory]
    return ' '.join('-i %s' % shlex.quote(str(source)) for source in sources)


def rerun_command(nodes, inventory=INVENTORY_PLACEHOLDER):
    """The command that runs the roll again on ``nodes`` only."""
    return 'ansible-playbook %s placement.upgrade.rolling_reshape --limit %s' % (
        _inventory_options(inventory), shlex.quote(','.join(nodes)))


def rollback_command(nodes, inventory=INVENTORY_PLACEHOLDER):
    """The command that rolls ``nodes`` back to their snapshots (playbooks/rollback.yml)."""
    return 'ansible-playbook %s placement.upgrade.rollback -e rollback_nodes=%s' % (
        _inventory_options(inventory), shlex.quote(','.join(nodes)))


def _needs_rollback_hint(entry, mode):
    return mode != 'plan' and entry['touched'] and entry['status'] in ('reshaped', 'failed')


def next_steps(nodes, mode, context=None):
    """What the operator does next, one line each (the fix/rerun, rerun and rollback commands)."""
    inventory = _inventory_arg(context)
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
        steps.append('%s: %s. Fix the reason, then rerun with --limit %s: %s' % (
            what, entry['reason'] or 'no reason recorded', entry['node'],
            rerun_command([entry['node']], inventory)))
    deferred = [e['node'] for e in nodes if e['status'] == 'deferred']
    if deferred:
        steps.append('Rerun the deferred node%s after %s reason%s cleared: %s' % (
            's' if len(deferred) > 1 else '', 'their' if len(deferred) > 1 else 'its',
            's are' if len(deferred) > 1 else ' is', rerun_command(deferred, inventory)))
    unreached = [e['node'] for e in nodes if e['status'] == 'unreached']
    if unreached:
        steps.append('The roll did not reach %s; once the cause of the stop is fixed, run %s: %s' % (
            ', '.join(unreached), 'them' if len(unreached) > 1 else 'it', rerun_command(unreached, inventory)))
    touched = [e['node'] for e in nodes if _needs_rollback_hint(e, mode)]
    if touched:
        steps.append('To undo this run on the node%s it reshaped (only if needed), roll %s back: %s' % (
            's' if len(touched) > 1 else '', 'them' if len(touched) > 1 else 'it',
            rollback_command(touched, inventory)))
    return steps


# ---------------------------------------------------------------------------
# the report data

_RECORD_KINDS = {
    'node': 'scalar?', 'provider': 'scalar?', 'status': 'text?', 'reason': 'text?', 'started': 'number?',
    'finished': 'number?', 'duration': 'number?', 'touched': 'bool?', 'derived': 'bool?', 'failed': 'bool?',
    'snapshot': 'text?', 'retries': 'int?', 'warnings': 'list?', 'verification': 'list?', 'moved': 'mapping?',
    'names': 'mapping?', 'consumer_names': 'mapping?', 'before': 'mapping?', 'after': 'mapping?',
    'unread': 'text?', 'run_id': 'scalar?', 'instances': 'mapping?', 'nova_compute': 'mapping?',
}
_RESULT_KINDS = {
    'status': 'text?', 'changed': 'bool?', 'snapshot': 'text?', 'moved': 'mapping?', 'verification': 'list?',
    'retries': 'int?', 'remarks': 'list?', 'warnings': 'list?', 'plan': 'mapping?', 'deferred_reason': 'text?',
}


def check_record(record, field='record'):
    """Refuse a node record (or the reshape result in it) whose fields have the wrong types, naming the field.

    Raises :class:`.errors.BadInput` (``record.started must be a finite number, got str``);
    :func:`build_report` shows such a record as a bad record without trees, and the
    fleet report module lists it in its result.
    """
    model.expect_fields(record, field, _RECORD_KINDS, 'a node record (a mapping)')
    for key in ('warnings',):
        model.expect_list_of(record.get(key), 'text', '%s.%s' % (field, key), 'a list of texts')
    for index, check in enumerate(record.get('verification') or []):
        model.expect(check, 'mapping', '%s.verification[%d]' % (field, index), 'a check (a mapping)')
    model.expect_fields(record.get('moved') or {}, field + '.moved', {'consumers': 'int?', 'allocations': 'int?'})
    model.expect_fields(record.get('nova_compute') or {}, field + '.nova_compute', {'before': 'text?', 'after': 'text?'})
    for key in ('names', 'consumer_names'):
        for sub, name in (record.get(key) or {}).items():
            model.expect(name, 'scalar', '%s.%s.%s' % (field, key, sub))
    for key in ('before', 'after'):
        if record.get(key) is not None:
            _check_tree(record[key], '%s.%s' % (field, key))
    result = record.get('reshape')
    if result is not None:
        model.expect_fields(result, field + '.reshape', _RESULT_KINDS, 'a reshape task result (a mapping)')
        for key in ('remarks', 'warnings'):
            model.expect_list_of(result.get(key), 'text', '%s.reshape.%s' % (field, key), 'a list of texts')
        model.expect_fields(result.get('moved') or {}, field + '.reshape.moved',
                            {'consumers': 'int?', 'allocations': 'int?'})
        for index, check in enumerate(result.get('verification') or []):
            model.expect(check, 'mapping', '%s.reshape.verification[%d]' % (field, index), 'a check (a mapping)')
    return record


def _check_tree(tree, field):
    """A tree in a record: a provider tree state, or the normalized form (allocations {consumer: {rp: {RC: n}}})."""
    model.expect_fields(tree, field, {'providers': 'mapping?', 'allocations': 'mapping?'}, 'a provider tree (a mapping)')
    state = {'providers': tree.get('providers') or {}, 'allocations': {}}
    for consumer, entry in (tree.get('allocations') or {}).items():
        where = '%s.allocations.%s' % (field, consumer)
        model.expect(entry, 'mapping', where, "a consumer's allocations (a mapping)")
        allocs = entry.get('allocations', entry)
        model.expect(allocs, 'mapping', where + '.allocations', optional=True)
        for rp, item in (allocs or {}).items():
            if isinstance(item, dict) and 'resources' not in item and 'generation' not in item:
                item = {'resources': item}        # the normalized form {rp: {RC: n}}
            model.expect_fields(item, '%s.%s' % (where, rp), {'resources': 'mapping?', 'generation': 'int?'})
            for rc, amount in (item.get('resources') or {}).items():
                model.expect(amount, 'int', '%s.%s.resources.%s' % (where, rp, rc))
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
    }


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
        if entry['touched']:
            return 'failed after its reshape was applied (rollback: %s)' % rollback_command([entry['node']], inventory)
        return 'failed, left untouched'
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
            problems.append('a node record is not a mapping (%s); it was left out' % type(rec).__name__)
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
    inventory = _inventory_arg(context)
    for entry in nodes:
        entry['outcome'] = _outcome(entry, mode, inventory)
        entry['rollback'] = (rollback_command([entry['node']], inventory)
                             if _needs_rollback_hint(entry, mode) else '')
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
        'context': dict(context or {}),
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
                       rollback=e['rollback'], retries=e['retries'], nova_compute=e['nova_compute'],
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
        parts.append('%d already done' % counts.get('noop', 0))
        parts.append('%d deferred' % counts.get('deferred', 0))
        parts.append('%d would stop the roll' % counts.get('failed', 0))
    else:
        parts.append('%d reshaped' % counts.get('reshaped', 0))
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
# Markdown

def _inv_text(tree, uuid):
    prov = tree['providers'][uuid]
    parts = []
    for rc in sorted(prov['inventories']):
        inv = prov['inventories'][rc]
        parts.append('%s %s/%s' % (rc, _number(usage_of(tree, uuid, rc)), _number(model.capacity(inv))))
    return ', '.join(parts) if parts else 'no inventory'


def _md_tree(tree, created=()):
    lines = []
    for uuid, depth in tree_order(tree['providers']):
        prov = tree['providers'][uuid]
        mark = ' (new)' if uuid in created else ''
        lines.append('%s- **%s**%s: %s' % ('  ' * depth, _md(prov['name']), mark, _md(_inv_text(tree, uuid))))
    return lines or ['- (no providers)']


def _consumer_label(entry, consumer):
    name = entry['consumer_names'].get(consumer)
    return '%s (%s)' % (consumer, name) if name else consumer


def _single_caption(entry):
    if entry['status'] == 'rolled_back':
        return 'provider tree after the rollback'
    if entry['touched']:
        return 'provider tree (now)'
    if entry['status'] in ('failed', 'deferred'):
        return 'provider tree (left as it was)'
    return 'provider tree (unchanged)'


def _pairs_text(pairs, names, fmt):
    return ', '.join('%s: %s' % (fmt(names.get(rp, _short(rp))), _number(n)) for rp, n in pairs) or '-'


def _code(text):
    return '`%s`' % str(text).replace('`', "'")


def _stop_text(report, fmt):
    stop = report['stopped']
    node = fmt(stop.get('node'))
    if any(e['node'] == stop.get('node') and e['touched'] and e['status'] == 'failed' for e in report['nodes']):
        node += ' (failed after its reshape was applied)'
    return 'The roll stopped at %s: %s' % (node, fmt(stop.get('reason')))


def _would_stop_text(report, fmt):
    items = report['would_stop']
    return '%d node%s would stop a real roll: %s' % (
        len(items), 's' if len(items) > 1 else '',
        '; '.join('%s (%s)' % (fmt(w['node']), fmt(w['reason'] or 'no reason recorded')) for w in items))


def _before_after_captions(entry, report):
    before = 'before (from its snapshot)' if entry['snapshot'] and entry['touched'] else 'before'
    after = 'after (planned)' if report['mode'] == 'plan' else 'after'
    if entry['touched'] and report['mode'] != 'plan':
        after = 'after (read from Placement now)'
    return before, after


def render_markdown(report):
    names = report['names']
    totals = report['totals']
    counts = totals['statuses']
    mode = report['mode']
    out = ['# %s' % _md(report['title']), '']
    if mode == 'plan':
        out += ['**Plan only (check mode): nothing was changed.**', '']
    out += [
        '| | |', '|---|---|',
        '| run | %s |' % _md(report['run_id'] or '-'),
    ]
    for label, text in context_rows(report.get('context')):
        out.append('| %s | %s |' % (_md(label), _md(text)))
    out += [
        '| started | %s |' % format_time(report['started']),
        '| finished | %s |' % format_time(report['finished']),
        '| time taken | %s |' % format_duration(totals['duration']),
        '| nodes | %d |' % totals['nodes'],
    ]
    for status in STATUSES:
        if counts.get(status):
            out.append('| %s | %d |' % (status_label(status, mode), counts[status]))
    if mode != 'plan':
        out.append('| nodes whose tree this run changed | %d |' % totals['touched'])
    out += [
        '| consumers moved | %d |' % totals['consumers_moved'],
        '| allocations moved | %d |' % totals['allocations_moved'],
        '| child providers created | %d |' % totals['providers_created'],
        '| generation-conflict retries | %d |' % totals['retries'],
        '',
        summary_line(report),
        '',
    ]
    if report['stopped']:
        out += ['**%s**' % _stop_text(report, _md), '']
    if report['would_stop']:
        out += ['**%s**' % _would_stop_text(report, _md), '']
    if report['unread']:
        out += ['## Trees not read from Placement', '',
                'These nodes\' provider trees could not be read; their entries show what the roll '
                'recorded (and their snapshot, if any), not Placement\'s state now.', '']
        out += ['- %s: %s' % (_md(u['node']), _md(u['reason'])) for u in report['unread']]
        out.append('')
    if report['deferred']:
        out += ['## Deferred nodes', '']
        out += ['- %s: %s' % (_md(d['node']), _md(d['reason'])) for d in report['deferred']]
        out.append('')
    if report['unreached']:
        out += ['## Nodes not reached', '', ', '.join(_md(n) for n in report['unreached']), '']
    if report['next_steps']:
        out += ['## Next steps', '']
        out += ['- %s' % _next_step_md(step) for step in report['next_steps']]
        out.append('')
    out += ['## Nodes', '', '| node | status | tree changed | consumers moved | allocations moved | time | detail |',
            '|---|---|---|---:|---:|---:|---|']
    for entry in report['nodes']:
        out.append('| %s | %s | %s | %d | %d | %s | %s |' % (
            _md(entry['node']), _md(status_label(entry['status'], mode)),
            'yes' if entry['touched'] else 'no',
            entry['moved']['consumers'], entry['moved']['allocations'],
            format_duration(entry['duration']), _md(entry['reason']) or ''))
    out.append('')
    for entry in report['nodes']:
        out += ['## %s: %s' % (_md(entry['node']), _md(status_label(entry['status'], mode))), '']
        if entry['outcome'] != status_label(entry['status'], mode):
            out += ['Outcome: %s' % _md(entry['outcome']), '']
        if entry['reason']:
            out += ['Reason: %s' % _md(entry['reason']), '']
        if entry['unread']:
            out += ['Not read from Placement: %s' % _md(entry['unread']), '']
        if entry['nova_compute']:
            out += [_md(nova_compute_text(entry['nova_compute'])), '']
        if entry['status'] == 'unreached':
            out += ['Not touched: the roll did not reach this node.', '']
            continue
        if entry['rollback']:
            out += ['Roll back: %s' % _code(entry['rollback']), '']
        if not entry['before']['providers']:
            out += ['No provider tree recorded.', '']
            _md_tail(out, entry)
            continue
        before_cap, after_cap = _before_after_captions(entry, report)
        if not entry['after_known']:
            out += ['Provider tree %s:' % before_cap, ''] + _md_tree(entry['before']) + ['']
            out += ['Provider tree after: not read from Placement.', '']
        elif entry['changed_tree']:
            out += ['Provider tree %s:' % before_cap, ''] + _md_tree(entry['before']) + ['']
            out += ['Provider tree %s:' % after_cap, '']
            out += _md_tree(entry['after'], entry['created']) + ['']
        else:
            out += ['%s:' % _single_caption(entry).capitalize(), ''] + _md_tree(entry['after']) + ['']
        if entry['moves']:
            out += ['| consumer | class | from | to |', '|---|---|---|---|']
            for move in entry['moves']:
                out.append('| %s | %s | %s | %s |' % (
                    _md(_consumer_label(entry, move['consumer'])), _md(move['resource_class']),
                    _pairs_text(move['from'], names, _md), _pairs_text(move['to'], names, _md)))
            out.append('')
        _md_tail(out, entry)
    return '\n'.join(out).rstrip('\n') + '\n'


def _next_step_md(step):
    """A next step with its command (the text after the last ': ansible-playbook') as code."""
    head, sep, command = step.rpartition(': ansible-playbook ')
    if not sep:
        return _md(step)
    return '%s: %s' % (_md(head), _code('ansible-playbook ' + command))


def _md_tail(out, entry):
    if entry['verification']:
        failed = [v for v in entry['verification'] if not v['passed']]
        out.append('Verification: %d of %d checks passed.' % (
            len(entry['verification']) - len(failed), len(entry['verification'])))
        for check in failed:
            out.append('- FAILED %s: %s' % (_md(check['check']), _md(check['detail'])))
        out.append('')
    if entry['snapshot']:
        out += ['Snapshot: %s' % _code(entry['snapshot']), '']
    for warning in entry['warnings']:
        out.append('- warning: %s' % _md(warning))
    if entry['warnings']:
        out.append('')


# ---------------------------------------------------------------------------
# SVG pictures of a provider tree

BOX_W = 272
HEAD_H = 24
ROW_H = 17
GAP_X = 18
GAP_Y = 34
PAD = 10
BAR_W = 72


def _box_height(prov):
    rows = max(len(prov['inventories']), 1)
    return HEAD_H + rows * ROW_H + 6


def _clip(text, width_chars):
    text = str(text)
    if len(text) <= width_chars:
        return text
    return text[:width_chars - 1] + '\u2026'


def _layout_tree(providers, box_w=BOX_W):
    """x/y positions: leaves side by side, a parent centred over its children."""
    pos = {}
    levels = {}
    for uuid, depth in tree_order(providers):
        levels[uuid] = depth
    slot = [0]

    def place(uuid, seen):
        seen.add(uuid)
        kids = [k for k in tree_children(providers, uuid) if k not in seen]
        if not kids:
            x = slot[0] * (box_w + GAP_X)
            slot[0] += 1
        else:
            xs = [place(k, seen) for k in kids]
            x = (xs[0] + xs[-1]) / 2.0
        pos[uuid] = x
        return x

    seen = set()
    for root in tree_roots(providers):
        place(root, seen)
    for uuid in sorted(providers):
        if uuid not in seen:
            place(uuid, seen)
    depth_h = {}
    for uuid, depth in levels.items():
        depth_h[depth] = max(depth_h.get(depth, 0), _box_height(providers[uuid]))
    ys = {}
    y = 0
    for depth in sorted(depth_h):
        ys[depth] = y
        y += depth_h[depth] + GAP_Y
    return dict((u, (pos[u], ys[levels.get(u, 0)])) for u in providers), slot[0], y - GAP_Y


def _bar_colour(used, cap):
    if cap <= 0:
        return '#cf222e' if used > 0 else '#d0d7de'
    ratio = float(used) / cap
    if ratio > 1:
        return '#cf222e'
    if ratio >= 0.8:
        return '#bf8700'
    return '#2da44e'


def tree_svg(tree, created=(), removed=(), external=None, names=None, label=''):
    """An inline SVG drawing one provider tree with a usage bar per resource class.

    ``created`` providers get a green outline, ``removed`` a red dashed one.
    ``external``: ``{rp uuid: {RC: n}}`` amounts the tree's consumers hold on
    providers outside the tree (a sharing DISK_GB pool), drawn as dashed boxes.
    """
    providers = tree['providers']
    names = names or {}
    external = external or {}
    if not providers:
        return ('<svg xmlns="http://www.w3.org/2000/svg" width="260" height="40" role="img" '
                'aria-label="no providers"><text x="8" y="24" class="t-muted">no providers</text></svg>')
    longest = max([len(rc) for p in providers.values() for rc in p['inventories']]
                  + [len(rc) for res in external.values() for rc in res] + [9])
    bar_x = 16 + int(longest * 8.6)  # class names are capitals: ~8.5 px each at 12 px
    box_w = max(BOX_W, bar_x + BAR_W + 96)
    name_chars = int((box_w - 16) / 7.2)
    pos, slots, height = _layout_tree(providers, box_w)
    width = slots * (box_w + GAP_X) - GAP_X
    ext_items = sorted(external.items(), key=lambda kv: names.get(kv[0], kv[0]))
    ext_y = height + GAP_Y if ext_items else height
    ext_h = 0
    for rp, resources in ext_items:
        ext_h = max(ext_h, HEAD_H + max(len(resources), 1) * ROW_H + 6)
    if ext_items:
        width = max(width, len(ext_items) * (box_w + GAP_X) - GAP_X)
        height = ext_y + ext_h
    total_w = int(width + 2 * PAD)
    total_h = int(height + 2 * PAD)
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" class="tree" width="%d" height="%d" viewBox="0 0 %d %d" '
             'role="img" aria-label="%s">' % (total_w, total_h, total_w, total_h, _h(label or 'provider tree'))]
    # edges first, so boxes are drawn over them
    for uuid, prov in providers.items():
        parent = prov.get('parent')
        if parent in pos:
            px, py = pos[parent]
            cx, cy = pos[uuid]
            x1 = PAD + px + box_w / 2.0
            y1 = PAD + py + _box_height(providers[parent])
            x2 = PAD + cx + box_w / 2.0
            y2 = PAD + cy
            mid = (y1 + y2) / 2.0
            parts.append('<path class="edge" d="M%.1f %.1f V%.1f H%.1f V%.1f"/>' % (x1, y1, mid, x2, y2))
    for uuid, depth in tree_order(providers):
        prov = providers[uuid]
        x, y = pos[uuid]
        x += PAD
        y += PAD
        h = _box_height(prov)
        cls = 'box'
        if uuid in created:
            cls += ' created'
        if uuid in removed:
            cls += ' removed'
        parts.append('<g class="provider" data-uuid="%s">' % _h(uuid))
        parts.append('<title>%s (%s)%s</title>' % (
            _h(prov['name']), _h(uuid), _h(' traits: ' + ', '.join(prov['traits'])) if prov['traits'] else ''))
        parts.append('<rect class="%s" x="%.1f" y="%.1f" width="%d" height="%d" rx="6"/>' % (cls, x, y, box_w, h))
        parts.append('<text class="t-name" x="%.1f" y="%.1f">%s</text>' % (x + 8, y + 16, _h(_clip(prov['name'], name_chars))))
        rows = sorted(prov['inventories'])
        if not rows:
            parts.append('<text class="t-muted" x="%.1f" y="%.1f">no inventory</text>' % (x + 8, y + HEAD_H + 12))
        for i, rc in enumerate(rows):
            inv = prov['inventories'][rc]
            cap = model.capacity(inv)
            used = usage_of(tree, uuid, rc)
            ry = y + HEAD_H + i * ROW_H
            frac = 0.0 if cap <= 0 else min(float(used) / cap, 1.0)
            parts.append('<text class="t-rc" x="%.1f" y="%.1f">%s</text>' % (x + 8, ry + 11, _h(rc)))
            parts.append('<rect class="bar-bg" x="%.1f" y="%.1f" width="%d" height="9" rx="2"/>'
                         % (x + bar_x, ry + 3, BAR_W))
            if frac > 0:
                parts.append('<rect x="%.1f" y="%.1f" width="%.1f" height="9" rx="2" fill="%s"/>'
                             % (x + bar_x, ry + 3, max(BAR_W * frac, 1.5), _bar_colour(used, cap)))
            parts.append('<text class="t-num" x="%.1f" y="%.1f">%s/%s</text>'
                         % (x + bar_x + BAR_W + 6, ry + 11, _number(used), _number(cap)))
        parts.append('</g>')
    for i, (rp, resources) in enumerate(ext_items):
        x = PAD + i * (box_w + GAP_X)
        y = PAD + ext_y
        h = HEAD_H + max(len(resources), 1) * ROW_H + 6
        name = names.get(rp, _short(rp))
        parts.append('<g class="provider external" data-uuid="%s">' % _h(rp))
        parts.append('<title>%s (%s): outside this tree; amounts held by this node\'s consumers</title>'
                     % (_h(name), _h(rp)))
        parts.append('<rect class="box ext" x="%.1f" y="%.1f" width="%d" height="%d" rx="6"/>' % (x, y, box_w, h))
        parts.append('<text class="t-name" x="%.1f" y="%.1f">%s</text>' % (x + 8, y + 16, _h(_clip(name, name_chars - 9) + ' (shared)')))
        for j, rc in enumerate(sorted(resources)):
            ry = y + HEAD_H + j * ROW_H
            parts.append('<text class="t-rc" x="%.1f" y="%.1f">%s</text>' % (x + 8, ry + 11, _h(rc)))
            parts.append('<text class="t-num" x="%.1f" y="%.1f">%s held here</text>'
                         % (x + bar_x, ry + 11, _number(resources[rc])))
        parts.append('</g>')
    parts.append('</svg>')
    return ''.join(parts)


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


# ---------------------------------------------------------------------------
# HTML

_CSS = """
:root{--fg:#1f2328;--muted:#57606a;--line:#d0d7de;--bg:#ffffff;--soft:#f6f8fa}
*{box-sizing:border-box}
body{font:14px/1.45 -apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:var(--fg);background:var(--bg);
margin:0;padding:24px 32px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid var(--line);
padding-bottom:4px}h3{font-size:15px;margin:16px 0 6px}
.meta{color:var(--muted);margin-bottom:16px}
.banner{padding:10px 14px;border-radius:6px;margin:12px 0;font-weight:600}
.banner.plan{background:#ddf4ff;border:1px solid #54aeff}
.banner.stop{background:#ffebe9;border:1px solid #ff8182}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin:12px 0}
.card{border:1px solid var(--line);border-radius:8px;padding:8px 14px;min-width:120px;background:var(--soft)}
.card b{display:block;font-size:22px}.card span{color:var(--muted);font-size:12px}
table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;
vertical-align:top}th{background:var(--soft)}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.nw{white-space:nowrap}
.badge{display:inline-block;border-radius:10px;padding:1px 9px;color:#fff;font-size:12px;font-weight:600}
.trees{display:flex;flex-wrap:wrap;gap:24px;align-items:flex-start}
.trees figure{margin:0;overflow-x:auto;max-width:100%}
.trees figcaption{font-weight:600;margin-bottom:4px}
.arrow{font-size:28px;color:var(--muted);align-self:center}
svg.tree{background:#fff;font:12px -apple-system,"Segoe UI",Helvetica,Arial,sans-serif}
svg .box{fill:#f6f8fa;stroke:#8c959f;stroke-width:1}
svg .box.created{fill:#dafbe1;stroke:#1a7f37;stroke-width:2}
svg .box.removed{fill:#ffebe9;stroke:#cf222e;stroke-dasharray:5 3}
svg .box.ext{fill:#fff8c5;stroke:#9a6700;stroke-dasharray:5 3}
svg .edge{fill:none;stroke:#8c959f;stroke-width:1.5}
svg .bar-bg{fill:#eaeef2}
svg .t-name{font-weight:600;fill:#1f2328}svg .t-rc{fill:#424a53}svg .t-num{fill:#1f2328}
svg .t-muted{fill:#6e7781}
code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;background:var(--soft);padding:1px 4px;border-radius:4px}
.fail{color:#cf222e}.ok{color:#1a7f37}
details{margin:6px 0}summary{cursor:pointer;color:var(--muted)}
"""


def _badge(status, mode='apply'):
    return '<span class="badge" style="background:%s">%s</span>' % (
        STATUS_COLOURS.get(status, '#57606a'), _h(status_label(status, mode)))


def _anchor(node):
    safe = ''.join(c if c.isalnum() or c in '-_.' else '-' for c in str(node))
    return 'node-' + safe


def _inventory_table(entry, names):
    before, after = entry['before'], entry['after']
    rows = []
    for uuid, _depth in tree_order(after['providers']):
        prov = after['providers'][uuid]
        for rc in sorted(prov['inventories']):
            inv = prov['inventories'][rc]
            old = before['providers'].get(uuid, {}).get('inventories', {}).get(rc)
            was = '-' if old is None else '%s' % _number(old['total'])
            rows.append('<tr><td>%s</td><td>%s</td><td class="n">%s</td><td class="n">%s</td><td class="n">%d</td>'
                        '<td class="n">%d</td><td class="n">%s</td><td class="n">%s/%s</td></tr>' % (
                            _h(prov['name']), _h(rc), was, _number(inv['total']), inv['reserved'],
                            inv['max_unit'], _number(inv['allocation_ratio']),
                            _number(usage_of(after, uuid, rc)), _number(model.capacity(inv))))
    for uuid, _depth in tree_order(before['providers']):
        prov = before['providers'][uuid]
        for rc in sorted(prov['inventories']):
            if rc in after['providers'].get(uuid, {}).get('inventories', {}):
                continue
            rows.append('<tr><td>%s</td><td>%s</td><td class="n">%s</td><td class="n">removed</td><td></td>'
                        '<td></td><td></td><td></td></tr>' % (
                            _h(prov['name']), _h(rc), _number(prov['inventories'][rc]['total'])))
    if not rows:
        return ''
    return ('<table class="inv"><tr><th>provider</th><th>class</th><th>total before</th><th>total</th>'
            '<th>reserved</th><th>max_unit</th><th>ratio</th><th>used/capacity</th></tr>%s</table>'
            % ''.join(rows))


def _moves_table(entry, names):
    if not entry['moves']:
        return ''
    rows = []
    for move in entry['moves']:
        name = entry['consumer_names'].get(move['consumer'])
        rows.append('<tr><td><code>%s</code>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>' % (
            _h(move['consumer']), (' ' + _h(name)) if name else '', _h(move['resource_class']),
            _pairs_text(move['from'], names, _h), _pairs_text(move['to'], names, _h)))
    return ('<table class="moves"><tr><th>consumer</th><th>class</th><th>from</th><th>to</th></tr>%s</table>'
            % ''.join(rows))


def _verification_html(entry):
    checks = entry['verification']
    if not checks:
        return ''
    failed = [c for c in checks if not c['passed']]
    head = '<p class="%s">Verification: %d of %d checks passed.</p>' % (
        'fail' if failed else 'ok', len(checks) - len(failed), len(checks))
    items = ''.join('<li class="%s">%s %s%s</li>' % (
        'ok' if c['passed'] else 'fail', '&#10003;' if c['passed'] else '&#10007;', _h(c['check']),
        (': ' + _h(c['detail'])) if c['detail'] else '') for c in checks)
    return head + '<details><summary>all checks</summary><ul>%s</ul></details>' % items


def _node_html(entry, report):
    names = report['names']
    mode = report['mode']
    out = ['<section class="node" id="%s">' % _anchor(entry['node'])]
    out.append('<h2>%s %s</h2>' % (_h(entry['node']), _badge(entry['status'], mode)))
    facts = []
    if entry['provider'] != entry['node']:
        facts.append('root provider <code>%s</code>' % _h(entry['provider']))
    if mode != 'plan' and entry['status'] != 'unreached':
        facts.append('tree changed by this run' if entry['touched'] else 'tree not changed by this run')
    if entry['duration'] is not None:
        facts.append('took %s' % format_duration(entry['duration']))
    if entry['moved']['allocations']:
        facts.append('%d allocations of %d consumers %s' % (
            entry['moved']['allocations'], entry['moved']['consumers'],
            'to move' if mode == 'plan' else 'moved'))
    if entry['retries']:
        facts.append('%d generation-conflict retries' % entry['retries'])
    if entry['nova_compute']:
        facts.append(_h(nova_compute_text(entry['nova_compute'])))
    if facts:
        out.append('<p class="meta">%s</p>' % ' &middot; '.join(facts))
    if entry['outcome'] != status_label(entry['status'], mode):
        out.append('<p class="%s"><b>Outcome:</b> %s</p>' % (
            'fail' if entry['status'] == 'failed' else 'outcome', _h(entry['outcome'])))
    if entry['reason']:
        out.append('<p><b>Reason:</b> %s</p>' % _h(entry['reason']))
    if entry['unread']:
        out.append('<p class="fail"><b>Not read from Placement:</b> %s</p>' % _h(entry['unread']))
    if entry['status'] == 'unreached':
        out.append('<p>Not touched: the roll did not reach this node.</p></section>')
        return ''.join(out)
    if entry['rollback']:
        out.append('<p><b>Roll back:</b> <code>%s</code></p>' % _h(entry['rollback']))
    if not entry['before']['providers']:
        out.append('<p>No provider tree recorded.</p>')
        out.append(_node_html_tail(entry))
        out.append('</section>')
        return ''.join(out)
    ext_before = external_holdings(entry['before'])
    ext_after = external_holdings(entry['after'])
    before_cap, after_cap = _before_after_captions(entry, report)
    if not entry['after_known']:
        out.append('<div class="trees"><figure><figcaption>%s</figcaption>%s</figure>'
                   '<div class="arrow">&#8594;</div><figure><figcaption>after</figcaption>'
                   '<p class="fail">not read from Placement</p></figure></div>' % (
                       _h(before_cap), tree_svg(entry['before'], external=ext_before, names=names,
                                                label='%s before' % entry['node'])))
    elif entry['changed_tree']:
        out.append('<div class="trees"><figure><figcaption>%s</figcaption>%s</figure>'
                   '<div class="arrow">&#8594;</div><figure><figcaption>%s</figcaption>%s</figure></div>' % (
                       _h(before_cap),
                       tree_svg(entry['before'], removed=entry['removed'], external=ext_before, names=names,
                                label='%s before' % entry['node']),
                       _h(after_cap),
                       tree_svg(entry['after'], created=entry['created'], external=ext_after, names=names,
                                label='%s after' % entry['node'])))
    else:
        out.append('<div class="trees"><figure><figcaption>%s</figcaption>%s</figure></div>'
                   % (_h(_single_caption(entry)),
                      tree_svg(entry['after'], external=ext_after, names=names, label=entry['node'])))
    moves = _moves_table(entry, names)
    if moves:
        out.append('<h3>Where the allocations moved</h3>' + moves)
    inv = _inventory_table(entry, names)
    if inv:
        out.append('<details%s><summary>inventories</summary>%s</details>'
                   % (' open' if entry['changed_tree'] else '', inv))
    out.append(_node_html_tail(entry))
    out.append('</section>')
    return ''.join(out)


def _node_html_tail(entry):
    out = [_verification_html(entry)]
    if entry['snapshot']:
        out.append('<p class="meta">snapshot <code>%s</code></p>' % _h(entry['snapshot']))
    for warning in entry['warnings']:
        out.append('<p class="meta">warning: %s</p>' % _h(warning))
    return ''.join(out)


def _next_step_html(step):
    head, sep, command = step.rpartition(': ansible-playbook ')
    if not sep:
        return _h(step)
    return '%s: <code>%s</code>' % (_h(head), _h('ansible-playbook ' + command))


def render_html(report):
    totals = report['totals']
    counts = totals['statuses']
    mode = report['mode']
    out = ['<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           '<title>%s</title><style>%s</style></head><body>' % (_h(report['title']), _CSS)]
    out.append('<h1>%s</h1>' % _h(report['title']))
    out.append('<p class="meta">run %s &middot; started %s &middot; finished %s &middot; time taken %s</p>' % (
        _h(report['run_id'] or '-'), format_time(report['started']), format_time(report['finished']),
        format_duration(totals['duration'])))
    rows = context_rows(report.get('context'))
    if rows:
        out.append('<table class="context">%s</table>' % ''.join(
            '<tr><th>%s</th><td>%s</td></tr>' % (_h(label), _h(text)) for label, text in rows))
    if mode == 'plan':
        out.append('<div class="banner plan">Plan only (check mode): nothing was changed.</div>')
    if report['stopped']:
        out.append('<div class="banner stop">%s</div>' % _stop_text(report, _h))
    if report['would_stop']:
        out.append('<div class="banner stop">%s</div>' % _would_stop_text(report, _h))
    cards = [('nodes', totals['nodes'])]
    for status in STATUSES:
        if counts.get(status) or status in ('noop', 'deferred', 'failed'):
            cards.append((status_label(status, mode), counts.get(status, 0)))
    if mode != 'plan':
        cards.append(('trees changed', totals['touched']))
    cards += [('consumers moved', totals['consumers_moved']), ('allocations moved', totals['allocations_moved']),
              ('child providers created', totals['providers_created'])]
    out.append('<div class="cards">%s</div>' % ''.join(
        '<div class="card"><b>%d</b><span>%s</span></div>' % (n, _h(label)) for label, n in cards))
    out.append('<p>%s</p>' % _h(summary_line(report)))
    if report['unread']:
        out.append('<h3>Trees not read from Placement</h3><p>These nodes\' provider trees could not be read; '
                   'their entries show what the roll recorded (and their snapshot, if any), not Placement\'s '
                   'state now.</p><ul>%s</ul>' % ''.join(
                       '<li><a href="#%s">%s</a>: %s</li>' % (_anchor(u['node']), _h(u['node']), _h(u['reason']))
                       for u in report['unread']))
    if report['deferred']:
        out.append('<h3>Deferred nodes</h3><ul>%s</ul>' % ''.join(
            '<li><a href="#%s">%s</a>: %s</li>' % (_anchor(d['node']), _h(d['node']), _h(d['reason']))
            for d in report['deferred']))
    if report['next_steps']:
        out.append('<h3>Next steps</h3><ul class="steps">%s</ul>' % ''.join(
            '<li>%s</li>' % _next_step_html(step) for step in report['next_steps']))
    rows = []
    for entry in report['nodes']:
        rows.append('<tr><td class="nw"><a href="#%s">%s</a></td><td class="nw">%s</td><td>%s</td>'
                    '<td class="n">%d</td><td class="n">%d</td><td class="n">%s</td><td>%s</td></tr>' % (
                        _anchor(entry['node']), _h(entry['node']), _badge(entry['status'], mode),
                        'yes' if entry['touched'] else 'no',
                        entry['moved']['consumers'], entry['moved']['allocations'],
                        format_duration(entry['duration']), _h(entry['reason'])))
    out.append('<h2>Fleet</h2><table class="fleet"><tr><th>node</th><th>status</th><th>tree changed</th>'
               '<th>consumers moved</th><th>allocations moved</th><th>time</th><th>detail</th></tr>%s</table>'
               % ''.join(rows))
    for entry in report['nodes']:
        out.append(_node_html(entry, report))
    out.append('<p class="meta">generated %s by placement.upgrade %s</p></body></html>' % (
        format_time(report['generated']), _h(COLLECTION_VERSION)))
    return '\n'.join(out) + '\n'


# ---------------------------------------------------------------------------
# files

def _ensure_dir(path):
    if not os.path.isdir(path):
        os.makedirs(path, DIR_MODE)


def write_report(dest, report):
    """Write report.md, report.html and summary.json into ``dest`` (created 0700; files 0600); return the paths."""
    _ensure_dir(dest)
    paths = {
        'markdown': os.path.join(dest, 'report.md'),
        'html': os.path.join(dest, 'report.html'),
        'summary': os.path.join(dest, 'summary.json'),
    }
    _snapshot.atomic_write(paths['markdown'], render_markdown(report), mode=FILE_MODE)
    _snapshot.atomic_write(paths['html'], render_html(report), mode=FILE_MODE)
    _snapshot.atomic_write(paths['summary'], json.dumps(summary(report), indent=2, sort_keys=True, default=str) + '\n',
                           mode=FILE_MODE)
    return paths


def record_path(dest, node):
    """``dest/nodes/<file_stem(node)>.json``: one file per node name, never shared (``cmp/01`` -> ``cmp%2F01``)."""
    return os.path.join(dest, 'nodes', '%s.json' % _names.file_stem(node))


def save_record(dest, record):
    """Store one node record as ``dest/nodes/<node>.json`` (atomic, 0600, folders 0700); return the path."""
    _ensure_dir(dest)
    folder = os.path.join(dest, 'nodes')
    if not os.path.isdir(folder):
        os.mkdir(folder, DIR_MODE)
    path = record_path(dest, record.get('node') or record.get('provider') or 'unknown')
    _snapshot.atomic_write(path, json.dumps(record, indent=1, sort_keys=True, default=str) + '\n', mode=FILE_MODE)
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
    """{uuid: guest name} from a device report's ``instances`` map."""
    names = {}
    if not isinstance(instances, dict):
        return names
    for uuid, info in instances.items():
        if isinstance(info, dict) and info.get('name'):
            names[str(uuid).lower()] = str(info['name'])
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


def _read_tree(backend, node, provider, out, warnings, read_error):
    """(state, foreign names) of the node's tree, or (None, {}) with ``out["unread"]`` saying why.

    :class:`ServiceUnavailable` is raised (the caller stops reading for the run);
    any other Placement error only marks this node unread.
    """
    from . import ops
    from . import reshaper
    from .errors import ServiceUnavailable

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
        state, foreign = reshaper.read_node(backend, root_uuid)
    except ServiceUnavailable:
        raise
    except PlacementError as exc:
        out['unread'] = 'cannot read the provider tree from Placement: %s' % _error_text(exc)
        warnings.append('%s: %s' % (node, out['unread']))
        return None, {}
    names = dict((rp, info['name']) for rp, info in foreign.items() if info.get('name'))
    return state, names


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


def collect_record(backend, record, mode='apply', read_error=None, snapshot_dir=None, run_id=''):
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
        'warnings': list(result.get('remarks') or result.get('warnings') or []),
        'names': {},
        'consumer_names': consumer_names(record.get('instances')),
        'touched': applied,
    }
    run_snapshot = None
    if (mode != 'plan' and status in ('reshaped', 'failed') and not out['snapshot']
            and snapshot_dir and run_id):
        found = _snapshot.run_snapshots(snapshot_dir, out['provider'], run_id)
        if found:
            run_snapshot = found[0][0]
            out['snapshot'] = run_snapshot
    state, foreign_names = _read_tree(backend, node, out['provider'], out, warnings, read_error)
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
    state, foreign_names = _read_tree(backend, node, provider, out, warnings, read_error)
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
