# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the fleet report ran against, and what the operator does next.

The run's ``context``: the keys a caller (the role) may give, kept only with a plain value, and the
backend facts the module adds (the Placement it read and its microversion, never credentials), as
rows of the report's header.  The operator's commands the report prints: the rerun of some nodes,
their rollback (``playbooks/rollback.yml``), a rehearsal's (which gives neither: they would act on
production), each in the inventory and with the ``ansible-playbook`` the context names.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import shlex

from urllib.parse import urlsplit, urlunsplit

from ..backends import factory
from ..backends.sqlite.store import MICROVERSION
from ..version import COLLECTION_VERSION
from .labels import short_reason

#: the keys of the ``context`` a caller (the role) may give; anything else is dropped
CALLER_CONTEXT_KEYS = ('awx_job_id', 'awx_job_template', 'playbook', 'check_mode', 'plan', 'inventory', 'limit',
                       'ansible_playbook', 'preflight_run_id')
#: the keys the module adds from what it knows (never credentials)
BACKEND_CONTEXT_KEYS = ('backend', 'embedded_db', 'cloud', 'endpoint', 'placement_microversion',
                        'collection_version')

#: shown in commands when the context does not name the inventory
INVENTORY_PLACEHOLDER = 'INVENTORY'


# ---------------------------------------------------------------------------
# what the report ran against

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
    options = options or {}
    ctx = dict((key, None) for key in ('backend', 'embedded_db', 'cloud', 'endpoint', 'placement_microversion'))
    if options.get('embedded_db') or getattr(backend, 'kind', None) == 'embedded':
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


# ---------------------------------------------------------------------------
# what to do next: the operator's commands

class _Invocation(list):
    """The inventory sources of the commands, and how they spell ``ansible-playbook`` (``program``)."""

    program = 'ansible-playbook'


def inventory_arg(context):
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


def needs_rollback_hint(entry, mode):
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


#: the context's ``playbook`` of the sliced roll's pre-flight (playbooks/sliced_preflight.yml)
SLICED_PREFLIGHT_PLAYBOOK = 'placement.upgrade.sliced_preflight'


def _yes(value):
    return value in (True, 'true', 'True', 'yes', 1)


def _sliced_run(context):
    """The workflow's run id when ``context`` is the sliced pre-flight's, else None."""
    context = context or {}
    if context.get('playbook') == SLICED_PREFLIGHT_PLAYBOOK:
        return str(context.get('preflight_run_id') or 'RUN_ID')
    return None


def _sliced_command(playbook, inventory, run_id):
    return '%s %s placement.upgrade.%s -e preflight_run_id=%s' % (
        _program(inventory), _inventory_options(inventory), playbook, shlex.quote(run_id))


def _preflight_again(inventory):
    return '%s %s %s --check' % (_program(inventory), _inventory_options(inventory), SLICED_PREFLIGHT_PLAYBOOK)


def _plan_roll_steps(nodes, context, inventory, sliced):
    """A plan's (check mode's) steps to the roll itself: nothing was changed, so the next step is the
    roll, the same command without --check (or rolling_reshape_plan_only); for the sliced pre-flight
    the workflow's slices and its report job.  None when the plan found nothing to do."""
    if all(e['status'] == 'noop' for e in nodes):
        return []
    check = _yes((context or {}).get('check_mode'))
    if sliced is not None:
        return ['Nothing was changed (the sliced roll\'s pre-flight%s). To roll, run the workflow\'s slices '
                '(the canary\'s job first), each: %s' % (', check mode' if check else '',
                                                         _sliced_command('sliced_roll', inventory, sliced)),
                'Then write the one report of every slice: %s' % _sliced_command('sliced_report', inventory, sliced)]
    command = '%s %s placement.upgrade.rolling_reshape' % (_program(inventory), _inventory_options(inventory))
    limit = (context or {}).get('limit')
    if isinstance(limit, str) and limit.strip():
        command += ' --limit %s' % shlex.quote(limit.strip())
    if check:
        return ['Nothing was changed (check mode). To roll, run the same command without --check: %s' % command]
    return ['Nothing was changed (a plan: rolling_reshape_plan_only). To roll, run the same command without '
            'rolling_reshape_plan_only: %s' % command]


def next_steps(nodes, mode, context=None):
    """What the operator does next, one line each (the fix/rerun, rerun and rollback commands).
    After a rehearsal (:func:`rehearsal_copy`) no command of the roll or the rollback is given: they
    would act on production.  A plan's (check mode's) last step is the roll itself (:func:`_plan_roll_steps`);
    the sliced pre-flight's name the sliced playbooks."""
    inventory = inventory_arg(context)
    copy = rehearsal_copy(context)
    sliced = _sliced_run(context) if mode == 'plan' and not copy else None
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
        if sliced is not None:
            steps.append('%s: %s. Fix the reason, then run the pre-flight again (it plans the whole fleet): %s' % (
                what, reason, _preflight_again(inventory)))
            continue
        steps.append('%s: %s. Fix the reason, then rerun with --limit %s: %s' % (
            what, reason, entry['node'], _rerun([entry['node']], inventory, copy)))
    deferred = [e['node'] for e in nodes if e['status'] == 'deferred']
    if deferred and sliced is not None:
        steps.append('The roll would defer %s (%s reason%s above) unless cleared before the slices run' % (
            ', '.join(deferred), 'their' if len(deferred) > 1 else 'its', 's' if len(deferred) > 1 else ''))
    elif deferred:
        steps.append('Rerun the deferred node%s after %s reason%s cleared: %s' % (
            's' if len(deferred) > 1 else '', 'their' if len(deferred) > 1 else 'its',
            's are' if len(deferred) > 1 else ' is', _rerun(deferred, inventory, copy)))
    unreached = [e['node'] for e in nodes if e['status'] == 'unreached']
    if unreached and sliced is not None:
        steps.append('The pre-flight did not plan %s; run it again: %s' % (
            ', '.join(unreached), _preflight_again(inventory)))
    elif unreached:
        steps.append('The roll did not reach %s; once the cause of the stop is fixed, run %s: %s' % (
            ', '.join(unreached), 'them' if len(unreached) > 1 else 'it', _rerun(unreached, inventory, copy)))
    if mode == 'plan' and not copy and not any(e['status'] == 'failed' for e in nodes):
        steps.extend(_plan_roll_steps(nodes, context, inventory, sliced))
    changed = [e['node'] for e in nodes if mode != 'plan' and e['touched']]
    if copy:
        if changed:
            steps.append('Nothing to roll back in production for %s: %s' % (', '.join(changed), rehearsal_no_rollback(copy)))
        return steps
    touched = [e['node'] for e in nodes if needs_rollback_hint(e, mode)]
    if touched:
        steps.append('To undo this run on the node%s it reshaped (only if needed), roll %s back: %s' % (
            's' if len(touched) > 1 else '', 'them' if len(touched) > 1 else 'it',
            rollback_command(touched, inventory)))
    for entry in nodes:
        if entry.get('left') and mode != 'plan':
            steps.append('The rollback left the empty child providers %s behind on %s; to remove them, roll it '
                         'back again with remove_children: %s -e rolling_reshape_remove_children=true' % (
                             ', '.join(entry['left']), entry['node'], rollback_command([entry['node']], inventory)))
    for entry in nodes:
        why = no_rollback_reason(entry, mode)
        if why:
            steps.append('No rollback for %s: %s' % (entry['node'], why))
    return steps
