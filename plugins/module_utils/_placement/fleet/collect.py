# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One node's record collected with its trees: what the roll recorded, Placement read now, the snapshot.

:func:`collect_record` turns what the roll recorded for a node (its status, the reshape task's
result) into a node record (:mod:`.checks`) with the tree before and after; :func:`derive_record`
makes the record of a node the roll wrote none of, from its snapshot of this run and Placement.
Both read Placement (a backend, or None to go without it); :mod:`.records` stores what they return.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import calendar
import time

from .. import resources as ops
from ..errors import PlacementError, ServiceUnavailable
from ..node import reshaper
from ..node import snapshot as _snapshot
from ..retry import retries_warning
from .checks import check_record
from .data import nova_compute_versions, written_of
from .labels import error_text
from .trees import apply_plan, normalize_tree, trees_differ


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
        out['unread'] = 'cannot read the provider tree from Placement: %s' % error_text(exc)
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
    out = _record_fields(record, result, status, mode, applied)
    if backend is not None:
        out['placement_microversion'] = _microversion(backend)
    run_snapshot = _run_snapshot(out, status, mode, snapshot_dir, run_id)
    known = None
    if out['snapshot'] and (applied or run_snapshot) and status != 'planned':
        known = _known_state(out['snapshot'])
    if read is not None:
        state = read[0]
        foreign_names = dict((rp, info['name']) for rp, info in (read[1] or {}).items() if info.get('name'))
    else:
        state, foreign_names = _read_tree(backend, node, out['provider'], out, warnings, read_error, known=known)
    out['names'].update(foreign_names)
    before, after = _before_after(out, state, result, applied, run_snapshot, warnings)
    if out['moved'] is None and not out['touched']:
        out['moved'] = {'consumers': 0, 'allocations': 0}
    out['before'] = before
    out['after'] = after
    return out, warnings


def _record_fields(record, result, status, mode, applied):
    """Step 1 of :func:`collect_record`: the record's fields from what the roll recorded and the
    reshape's result (no tree yet)."""
    node = record.get('node') or record.get('provider')
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
    if isinstance(result.get('journal'), dict) and (applied or status in ('planned', 'noop', 'deferred', 'failed')):
        out['journal'] = result['journal']   # what the pass wrote (would write, restored): every figure
    written = written_of(result)
    if written is not None and mode != 'plan':
        out['written'] = written
    elif mode == 'plan' and isinstance(result.get('would_write'), dict):
        out['written'] = written_of(dict(result['would_write'], reshaper_applied=result['would_write'].get('reshaper'),
                                         traits_written=result['would_write'].get('traits'),
                                         children_created=result['would_write'].get('children')))
    return out


def _run_snapshot(out, status, mode, snapshot_dir, run_id):
    """Step 2: a reshaped or failed node whose result names no snapshot: this run's snapshot of it
    (then named in ``out``), else None."""
    if (mode != 'plan' and status in ('reshaped', 'failed') and not out['snapshot']
            and snapshot_dir and run_id):
        found = _snapshot.run_snapshots(snapshot_dir, out['provider'], run_id)
        if found:
            out['snapshot'] = found[0][0]
            return found[0][0]
    return None


def _before_after(out, state, result, applied, run_snapshot, warnings):
    """Step 3: the trees before and after (``state``: the tree read now): the plan applied to it
    (planned), what the rollback read (rolled back), the snapshot (reshaped; a failed node's run
    snapshot, and whether its tree is still the snapshot's)."""
    status, node = out['status'], out['node']
    before, after = state, state
    if status == 'planned' and state is not None:
        after = apply_plan(state, result.get('plan'))
    elif status == 'rolled_back' and isinstance(result.get('tree_before'), dict) and state is not None:
        before = result['tree_before']   # what the rollback read and changed (its snapshot is the "after")
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
    return before, after


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
