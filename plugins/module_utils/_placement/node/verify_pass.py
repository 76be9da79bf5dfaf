# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``state: verified``: the checks of :mod:`.verify` on a node as it is now (:func:`verify_node`).

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from . import damage as _damage
from . import outcome as _outcome
from . import planner
from . import snapshot as _snapshot
from . import verify as _verify
from .front import PlanFront
from .reading import read_node, resolve_root
from .. import request as _request
from .. import tree as _tree


class VerifyRequest(_request.Request):
    """What :func:`verify_node` is asked: the device report (``devices``, with ``layout_options``,
    ``policy`` and the ``ownership`` overrides) or the move records (``moves``, ``consumers``),
    and the snapshot to check against (``snapshot_dir``, or ``snapshot_file``)."""

    FIELDS = (('devices', None), ('layout_options', None), ('policy', planner.POLICY_STRICT), ('ownership', None),
              ('snapshot_dir', None), ('snapshot_file', None), ('moves', None), ('consumers', None))


def verify_node(backend, root, devices=None, request=None, **fields):
    """Run the verification checks on the node as it is (``state: verified``).

    ``request``: a :class:`VerifyRequest`, or its fields as keywords (``devices`` may come
    third, as before).  With ``moves`` (moves.py) the same checks are fed the layout and
    ownership of the records."""
    req = VerifyRequest.of(request, devices=devices, **fields)
    devices, policy, snapshot_dir, snapshot_file = req.devices, req.policy, req.snapshot_dir, req.snapshot_file
    front = PlanFront(backend, req)
    root_prov = resolve_root(backend, root)
    root_uuid = root_prov['uuid']
    baseline = None
    planned_totals = None
    snap_path = None
    snap_error = None
    if snapshot_file or snapshot_dir:
        try:
            snap_path = _snapshot.find_snapshot(snapshot_dir, root_prov['name'], snapshot_file)
            snap = _snapshot.load_snapshot(snap_path)
            baseline = snap['state']
            planned_totals = (snap.get('plan') or {}).get('planned_totals')
        except _snapshot.SnapshotError as exc:
            if snapshot_file:
                snap_error = exc
            snap_path = None
    # the snapshot's consumers that were not written since it was taken are not read again
    state, foreign = read_node(backend, root_uuid, known=baseline if snap_error is None else None)
    if snap_error is not None:
        raise snap_error  # pylint: disable=raising-bad-type
    try:
        _lay, owners = front.layout(state, root_uuid)
        plan = front.plan(state, root_uuid, planner.PlanContext(allow_foreign_allocations=True, foreign=foreign,
                                                                defer_in_flight=False))
    except planner.PlanError as exc:
        checks = [
            _verify.usage_matches_allocations(state),
            _verify.usage_within_capacity(state, baseline),
            {'check': 'layout_applied', 'passed': False,
             'detail': 'the node does not have the layout and cannot be planned: %s' % exc.detail},
        ]
        plan = None
    else:
        checks = _verify.verify_current(plan, state, owners, policy, baseline=baseline,
                                        planned_totals=planned_totals)
    damaged = None
    if baseline is not None:
        # owners never change (a reshape keeps them): any consumer of the snapshot still on the node
        present = [c for c in _tree.ProviderTree.of(baseline).consumers() if c in state['allocations']]
        checks.append(_verify.consumers_keep_their_owner(baseline, state, present))
        if _snapshot.unsettled(snap):
            # the snapshot's pass never said the node was verified after its POST /reshaper (damage.py)
            dchecks, damaged, _full = _damage.check(backend, root_uuid, snap, instances=(devices or {}).get('instances'))
            checks.extend(c for c in dchecks if c['check'] == 'consumers_as_snapshot_or_plan')
    ok = _verify.passed(checks)
    result = _outcome.result(_outcome.STATUS_VERIFIED, False, plan=plan, verification=checks, verified=ok,
                             snapshot=snap_path, warnings=list((plan or {}).get('warnings') or []))
    if damaged:
        result['damaged'] = damaged
        result['corrections'] = _damage.corrections(damaged, backend)
    result['msg'] = '%s: verification %s' % (
        root_prov['name'], 'passed' if ok else 'FAILED: ' + '; '.join(
            '%s: %s' % (c['check'], c['detail']) for c in _verify.failures(checks)))
    if damaged:
        result['msg'] += ('. Give each damaged consumer what it should have (snapshot %s), then verify again: %s'
                          % (snap_path, ' ; '.join(result['corrections'])))
    return result
