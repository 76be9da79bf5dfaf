# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Apply a reshape plan to a compute node, roll it back, or verify a node.

:func:`reshape_node`
    read the tree (with every consumer's full allocations) -> plan; in check mode
    stop there.  Otherwise: ensure the custom resource classes, create the
    missing children (with their traits, through :func:`ops.create_new_provider`),
    re-plan (on the state read plus the new, empty children; after anything else,
    such as traits added to an existing child, on a full re-read), write a
    snapshot, and send ONE ``POST /reshaper``
    carrying every touched provider's inventory and every touched consumer's full
    allocations with the generations read.  A ``placement.concurrent_update``
    re-reads, re-plans and re-snapshots, at most ``attempts`` times; the result
    says how many retries it took.  Then the tree is read again and verified
    (only the consumers written since the read the reshape was computed from are
    read again: the others' full allocations are taken from that read).
:func:`rollback_node` (:mod:`.rollback`, imported here for the callers)
    restore a snapshot with one reverse reshape (children left empty, or deleted
    with ``remove_children``), then verify the tree against the snapshot; what
    refuses a snapshot, the reverse plan and its verification are :mod:`.rollback`'s too.
:func:`verify_node` (:mod:`.verify_pass`, imported here for the callers)
    the checks of :mod:`.verify` on the tree as it is now.

The rooms of the pass: :mod:`.front` (the device report checked once, the layout built once per
tree state), :mod:`.reading` (the root, the tree read), :mod:`.outcome` (the result and its words).
Each call takes a request object (:class:`ReshapeRequest`, :class:`.rollback.RollbackRequest`,
:class:`.verify_pass.VerifyRequest`) or its fields as keywords.

Sending the ``POST /reshaper`` and settling a lost answer, and the clean-up after a failed
pass, are :mod:`.settle`'s.

Every function returns the module's result keys: ``changed``, ``status``,
``plan``, ``diff``, ``retries``, ``verification``, ``verified``, ``snapshot``,
``moved``, ``deferred_reason``, ``warnings``, ``msg``, and what was written:
``reshaper_applied`` (whether a ``POST /reshaper`` of this call was applied),
``traits_written`` (``[{"provider", "uuid", "added", "removed"}]``: trait PUTs on
providers that already existed) and ``children_created`` (names).

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from .rollback import RollbackRequest, rollback_node
from .verify_pass import VerifyRequest, verify_node
from .front import PlanFront
from .outcome import (
    STATUS_DEFERRED,
    STATUS_FAILED,
    STATUS_NOOP,
    STATUS_RESHAPED,
    STATUS_ROLLED_BACK,
    STATUS_VERIFIED,
    landed as _landed,
    note_traits as _note_traits,
    result as _result,
    retries_text as _retries_text,
    root_traits_item as _root_traits_item,
    set_root_traits as _set_root_traits,
    would_write as _would_write,
    written_text,
)
from .reading import read_node, resolve_root, with_new_providers as _with_new_providers
from ..rules import allocations as allocation_rules
from .. import journal as _journal
from .. import request as _request
from .. import resources as ops
from .. import tree as _tree
from . import planner
from .settle import (
    SETTLE_DELAYS,
    SETTLED_APPLIED,
    SETTLED_CHANGED,
    SETTLED_NOT_APPLIED,
    SETTLED_UNKNOWN,
    Progress,
    ReshapeOutcomeUnknown,
    failure,
    left_behind,
    log_line,
    remove_created_children,
    send_settled,
    settle_reshape,
)
from . import damage as _damage
from . import snapshot as _snapshot
from . import verify as _verify
from ..backends.base import provider_tree_state
from ..files import make_dirs
from ..errors import NotFound, PlacementError
from ..retry import DEFAULT_ATTEMPTS, with_conflict_retry

# the pass's names, and those of the rooms it was split into (outcome.py, reading.py, rollback.py,
# verify_pass.py) and of settle.py, that its callers know it by (a lost answer's verdicts)
__all__ = [
    'STATUS_DEFERRED', 'STATUS_FAILED', 'STATUS_NOOP', 'STATUS_RESHAPED', 'STATUS_ROLLED_BACK', 'STATUS_VERIFIED',
    'SETTLE_DELAYS', 'SETTLED_APPLIED', 'SETTLED_CHANGED', 'SETTLED_NOT_APPLIED', 'SETTLED_UNKNOWN',
    'ReshapeOutcomeUnknown', 'ReshapeRequest', 'RollbackRequest', 'VerifyRequest', 'prepare_snapshot_dir',
    'read_node', 'remove_created_children', 'reshape_node', 'resolve_root', 'rollback_node', 'settle_reshape',
    'verify_node', 'written_text',
]


def _plan_summary(plan, state=None):
    from .kinds import registry as _kinds   # each kind's part of the summary (Kind.snapshot_summary)
    keep = ('status', 'root', 'policy', 'layout_classes', 'moved_classes', 'children',
            'create_children', 'inventory_changes', 'assignments', 'moved', 'warnings')
    summary = dict((k, plan.get(k)) for k in keep)
    # the consumers' totals after this reshape: a rollback accepts a consumer holding either
    # the snapshot's totals or these (PCI healing and VCPU -> PCPU change them on purpose)
    summary['planned_totals'] = dict(
        (c, allocation_rules.consumer_totals(allocation_rules.strip_allocations(body['allocations'])))
        for c, body in (plan.get('allocations') or {}).items())
    # what each written consumer holds after this reshape, per provider: a later pass checks a node
    # whose pass failed after its POST /reshaper against it (damage.py)
    summary['planned_allocations'] = dict(
        (c, allocation_rules.strip_allocations(body['allocations'])) for c, body in (plan.get('allocations') or {}).items())
    if state is not None:
        # what a rollback checks the snapshot against (rollback.rollback_problems): what each
        # kind adds (Kind.snapshot_summary: the VCPU units of the root each pinned guest has
        # converted to PCPU), and the inventory the reshape replaced (the state's, normalised)
        tree = _tree.ProviderTree.of(state)
        for kind in _kinds.KINDS:
            summary.update(kind.snapshot_summary(plan, tree))
        summary['inventories_before'] = dict((u, tree.inventory(u)) for u in tree.uuids())
    return summary


def prepare_snapshot_dir(snapshot_dir):
    if not snapshot_dir:
        raise _snapshot.SnapshotError('snapshot_dir is required to reshape (and to roll back): the '
                                      'node\'s tree and allocations are saved there before the reshape')
    try:
        make_dirs(snapshot_dir)
    except OSError as exc:
        raise _snapshot.SnapshotError('cannot create snapshot_dir %s: %s' % (snapshot_dir, exc))
    if not os.access(snapshot_dir, os.W_OK | os.X_OK):
        raise _snapshot.SnapshotError('snapshot_dir %s is not writable' % snapshot_dir)


class ReshapeRequest(_request.Request):
    """What :func:`reshape_node` is asked (each field is described there): the device report
    (``devices``, ``layout_options``, ``policy``, ``ownership``) or the move records (``moves``,
    ``consumers``); ``allow_foreign_allocations``, ``snapshot_dir``, ``check_mode``, ``run_id``;
    ``service_disabled`` (planner.PlanContext: the root gets COMPUTE_STATUS_DISABLED with the write);
    nova's answers (``migrations``, ``orphan_lookup``); the retries (``attempts``, ``backoff``,
    ``settle_delays``), ``log``, and ``observed``."""

    FIELDS = (('devices', None), ('layout_options', None), ('policy', planner.POLICY_STRICT), ('ownership', None),
              ('allow_foreign_allocations', False), ('snapshot_dir', None), ('check_mode', False),
              ('attempts', DEFAULT_ATTEMPTS), ('log', None), ('backoff', 0.05), ('run_id', ''),
              ('migrations', None), ('settle_delays', SETTLE_DELAYS), ('orphan_lookup', None), ('moves', None),
              ('consumers', None), ('observed', None), ('service_disabled', False))


def reshape_node(backend, root, devices=None, request=None, **fields):
    """Plan and (unless ``check_mode``) apply the reshape of one node; see the module doc.

    ``observed``: a dict that receives ``state`` (the node's tree as this call last read it:
    after the reshape, its verification's read; otherwise the read the plan was computed from)
    and ``foreign`` (the providers outside the tree its consumers use, :func:`read_node`), so
    that the node's record (fleet/records.py) is built without reading the tree again.  Left
    empty when the tree may have changed since that read (children created and removed again).

    ``moves`` (explicit move records, moves.py) stand instead of ``devices``: the layout and
    the ownership come from them (and ``consumers``, the split of a class over several
    targets); everything after the plan is the same.

    ``orphan_lookup``: callable taking the consumers on the node that no guest domain of the
    device report is (nor a migration record) and returning those nova knows neither as an
    instance nor as a migration: they are named as orphaned allocations (inflight.py).

    ``migrations``: nova's in-progress migration records (os-migrations), when nova was
    asked; a node with a move in flight is deferred (inflight.py).

    ``run_id`` (the roll's id) is stored in the snapshot, so the run's report can tell
    this node was reshaped by it even when nothing else recorded it.

    A ``POST /reshaper`` whose answer is lost is settled (:func:`settle_reshape`):
    applied -> verified and reported as usual; not applied -> re-planned and sent
    again like after a generation conflict; unknown -> :class:`ReshapeOutcomeUnknown`
    saying what to do.  When the reshape does not happen (any failure before it was
    applied, or a move in flight seen after the children were made), the children this
    run created are removed again (:func:`remove_created_children`) and the message
    says so, or lists exactly what was left.

    The steps are :class:`_NodePass`'s methods: each attempt plans (:meth:`_NodePass.plan_now`),
    prepares (:meth:`_NodePass.prepare`: resource classes, children, traits, re-plan), takes the
    snapshot, sends and settles (:func:`send_settled`), sets the root's traits; then
    :meth:`_NodePass.outcome` verifies and says what happened, or :func:`failure` cleans up.
    """
    req = ReshapeRequest.of(request, devices=devices, **fields)
    devices, snapshot_dir, check_mode, run_id = req.devices, req.snapshot_dir, req.check_mode, req.run_id
    front = PlanFront(backend, req)
    front.check()  # before anything reads the report (its instances below)
    root_prov = resolve_root(backend, root)
    run = _NodePass(backend, root_prov, req, front)
    if not check_mode:
        prepare_snapshot_dir(snapshot_dir)
    # the newest snapshot's pass never said the node was verified after its POST /reshaper: check the
    # node against it before anything else, and write nothing while it does not match (damage.py)
    unsettled = _damage.unsettled_snapshot(snapshot_dir, root_prov)
    if unsettled is not None:
        damaged = _unsettled_damage(backend, root_prov, unsettled, (devices or {}).get('instances'))
        if damaged is not None:
            return damaged
    try:
        plan, retries = with_conflict_retry(run.attempt, attempts=req.attempts, log=req.log,
                                            what='reshape of %s' % root_prov['name'], backoff=req.backoff)
    except Exception as exc:  # pylint: disable=broad-except
        if run.snapshot and not run.applied and not isinstance(exc, ReshapeOutcomeUnknown):
            run.mark_not_applied()
        err = failure(backend, root_prov, run, exc, req.log)
        err.journal = run.failed_journal()   # what the failed pass wrote (None: nothing, or not read)
        raise err
    result = run.outcome(plan, retries, req.observed)
    if run.snapshot and not run.applied:
        run.mark_not_applied()  # its POST /reshaper never applied (re-planned, then deferred or not needed)
    if unsettled is not None and result['status'] == STATUS_NOOP:
        result = _settled_now(result, root_prov, unsettled, run_id, check_mode)
    return result


def _unsettled_damage(backend, root_prov, unsettled, instances):
    """The failed result of a pass that found the node damaged against ``unsettled`` (None: no damage)."""
    path, doc = unsettled
    checks, damaged, _state = _damage.check(backend, root_prov['uuid'], doc, instances=instances)
    if _verify.passed(checks):
        return None
    result = _result(STATUS_FAILED, False, verification=checks, verified=False, snapshot=path)
    result['damaged'] = damaged
    result['corrections'] = _damage.corrections(damaged, backend)
    result['msg'] = _damage.message(root_prov['name'], path, doc, checks, damaged, backend)
    return result


def _settled_now(result, root_prov, unsettled, run_id, check_mode):
    """A pass with nothing to reshape on a node whose newest snapshot's pass never said the node was
    verified: the node was checked against that snapshot and matched; said so, and the snapshot marked."""
    path, doc = unsettled
    result = dict(result, status=STATUS_VERIFIED, verified=True, snapshot=path)
    result['msg'] = ('node %s has the layout and matches snapshot %s, whose pass never recorded the node as '
                     'verified: checked against it, every consumer that pass wrote holds what it held before it or '
                     'what it planned, with its project, user and type' % (root_prov['name'], path))
    if not check_mode:
        try:
            _snapshot.set_outcome(path, {'status': _snapshot.OUTCOME_VERIFIED, 'at': _snapshot.utc_stamp(),
                                         'run_id': str(run_id or ''), 'was': _snapshot.outcome_status(doc)})
            result['msg'] += '; the snapshot now says so'
        except _snapshot.SnapshotError as exc:
            result['warnings'] = list(result['warnings']) + [
                'the snapshot could not record it (the next pass checks the node again): %s' % exc.detail]
    return result


class _NodePass(Progress):
    """One node's reshape, step by step (docs/architecture.md, "the pass").

    ``request`` is the :class:`ReshapeRequest`; ``front`` the :class:`front.PlanFront` that checked
    its device report and builds the layout once per tree state.
    """

    def __init__(self, backend, root_prov, request, front):
        super(_NodePass, self).__init__()
        self.backend, self.root_prov, self.root_uuid = backend, root_prov, root_prov['uuid']
        self.front, self.layout_on = front, front.layout_on(root_prov['uuid'])
        self.snapshot_dir, self.check_mode, self.attempts, self.log = (
            request.snapshot_dir, request.check_mode, request.attempts, request.log)
        self.run_id, self.migrations, self.settle_delays = request.run_id, request.migrations, request.settle_delays
        self.orphan_lookup, self.allow_foreign_allocations = request.orphan_lookup, request.allow_foreign_allocations
        self.service_disabled = request.service_disabled
        # the consumers the host or nova explains (guest domains, migration records)
        known = set(str(i).lower() for i in (request.devices or {}).get('instances') or ())
        self.known = known | set(str(m.get('uuid')).lower() for m in self.migrations or () if isinstance(m, dict))
        self.asked = {}                 # consumer -> whether nova called it an orphan
        self.created = []               # names of the children this pass created
        self.traits_written = []        # trait PUTs on providers that already existed
        self.before = None              # the state the current plan was computed from
        self.foreign = None             # the providers outside the tree its consumers use
        self.attempt_no = 0
        self.prepared = False           # children or traits were written before the reshape
        self.wrote_traits_now = False   # this attempt's prepare sent a trait PUT
        self.first_diff = None          # the first plan's diff (what was missing at the start)
        self.sent_plan = self.sent_state = None
        self.overtaken = False          # a lost reshape was overtaken by another write

    # -- reading and planning --------------------------------------------------------------

    def orphans_in(self, state):
        """The consumers of ``state`` nova knows neither as an instance nor as a migration."""
        if self.orphan_lookup is None:
            return None
        fresh = [c for c in state['allocations'] if str(c).lower() not in self.known and c not in self.asked]
        if fresh:
            found = self.orphan_lookup(fresh)
            for consumer in fresh:
                self.asked[consumer] = consumer in found
        return set(c for c, is_orphan in self.asked.items() if is_orphan)

    def plan_on_state(self, state, foreign):
        """The plan of ``state``, from the layout built once for it (:meth:`front.PlanFront.layout`)."""
        return self.front.plan(state, self.root_uuid, planner.PlanContext(
            allow_foreign_allocations=self.allow_foreign_allocations, foreign=foreign, migrations=self.migrations,
            orphans=self.orphans_in(state), service_disabled=self.service_disabled))

    def plan_now(self):
        """Read the node (only the consumers the plan may write in full: read_node, layout_on) and plan."""
        state, foreign = read_node(self.backend, self.root_uuid, layout_on=self.layout_on)
        return state, foreign, self.plan_on_state(state, foreign)

    # -- one attempt (with_conflict_retry runs it again on a generation conflict) -------------

    def attempt(self):
        self.attempt_no += 1
        state, foreign, plan = self.plan_now()
        self.before, self.foreign = state, foreign
        if self.first_diff is None:
            self.first_diff = plan['diff']
        if plan['status'] != planner.STATUS_PLANNED or self.check_mode:
            return plan
        state, plan = self.prepare(state, foreign, plan)
        if plan['status'] != planner.STATUS_PLANNED:
            return plan
        self.take_snapshot(state, plan)
        self.send(state, plan)
        _set_root_traits(self.backend, plan['root_traits'], self.attempts, self.log)
        if plan['root_traits']:
            _note_traits(self.traits_written, _root_traits_item(plan['root_traits']), state)
        return plan

    def prepare(self, state, foreign, plan):
        """Custom resource classes, the missing children (with their traits), the traits of
        existing children; then the plan again: on the state read plus the new, empty children
        when nothing else was written, else on a fresh read.  Returns ``(state, plan)``."""
        for rc in plan['ensure']['resource_classes']:
            if self.backend.ensure_resource_class(rc):
                log_line(self.log, 'created custom resource class %s' % rc)
        new_records = self.create_children(plan)
        if self.set_traits(plan, state):
            new_records = None
        if not plan['create_children'] and not self.wrote_traits_now:
            return state, plan
        self.prepared = True
        if new_records is not None:
            # Only new, empty children were added: plan again on the state read above plus
            # those children instead of reading the whole tree again.  Anything that changed
            # meanwhile changed a generation the reshape names, so it fails with
            # concurrent_update and the retry starts over from a full read.
            state = _with_new_providers(state, new_records)
            plan = self.plan_on_state(state, foreign)
        else:
            state, foreign, plan = self.plan_now()
        self.before, self.foreign = state, foreign
        if plan['status'] == planner.STATUS_PLANNED and plan['create_children']:
            raise planner.PlanError('children %s still missing after they were created'
                                    % ', '.join(c['name'] for c in plan['create_children']))
        return state, plan

    def create_children(self, plan):
        """Create the plan's missing children; returns their records exactly as a tree read would
        return them, or None once anything was found or written that this step did not read."""
        new_records = {}
        for child in plan['create_children']:
            want = next(c for c in plan['children'] if c['uuid'] == child['uuid'])
            try:
                made = ops.create_new_provider(self.backend, child['name'], child['uuid'], self.root_uuid,
                                               traits=want['traits'], attempts=self.attempts, log=self.log)
            except PlacementError:
                self.note_uncertain_child(child)
                raise
            if new_records is not None and made['predicted']:
                new_records[child['uuid']] = made['provider']
            else:
                new_records = None
            if made['changed']:
                self.created.append(child['name'])
                self.created_children.append({'name': child['name'], 'uuid': made['provider']['uuid'],
                                              'generation': made['provider']['generation']})
                log_line(self.log, 'created child provider %s (%s)' % (child['name'], child['uuid']))
        return new_records

    def note_uncertain_child(self, child):
        """A child's creation failed part way (a lost answer, a reset): if it exists now it is this
        run's, and is recorded so that the clean-up removes it or names it (never left unnamed)."""
        try:
            prov = self.backend.get_provider(child['uuid'])
        except NotFound:
            return
        except PlacementError as exc:
            prov = {'generation': None, 'why': exc.detail}
        self.created.append(child['name'])
        self.created_children.append({'name': child['name'], 'uuid': child['uuid'],
                                      'generation': prov.get('generation'), 'unread': prov.get('why')})

    def set_traits(self, plan, state):
        """The traits of the plan's existing children; True when any PUT was sent."""
        created_now = set(c['uuid'] for c in plan['create_children'])
        self.wrote_traits_now = False
        for item in plan['set_traits']:
            if item['uuid'] in created_now:
                continue
            ops.ensure_provider(self.backend, name=item['name'], uuid=item['uuid'], traits=item['traits'],
                                attempts=self.attempts, log=self.log)
            _note_traits(self.traits_written, item, state)
            self.wrote_traits_now = True
        return self.wrote_traits_now

    def take_snapshot(self, state, plan):
        self.snapshot = _snapshot.write_snapshot(
            self.snapshot_dir, self.root_prov, state, _snapshot.SnapshotContent(
                foreign=self.foreign, layout_children=[c['name'] for c in plan['children']],
                created_children=self.created, plan=_plan_summary(plan, state), run_id=self.run_id,
                outcome={'status': _snapshot.OUTCOME_PENDING}), path=self.snapshot)

    def mark_snapshot(self, checks):
        """Record in the snapshot how the pass ended after its POST /reshaper (damage.py reads it)."""
        if not self.snapshot:
            return
        if _verify.passed(checks):
            outcome = {'status': _snapshot.OUTCOME_VERIFIED, 'at': _snapshot.utc_stamp(), 'run_id': self.run_id}
        elif self.settled:
            # its answer was lost: what the re-read found may be another writer's (nova's), not
            # Placement's doing; recorded, not held against the node by later passes
            outcome = {'status': 'failed_unanswered', 'at': _snapshot.utc_stamp(), 'run_id': self.run_id,
                       'failures': ['%s: %s' % (c['check'], c['detail']) for c in _verify.failures(checks)]}
        else:
            outcome = {'status': _snapshot.OUTCOME_FAILED, 'at': _snapshot.utc_stamp(), 'run_id': self.run_id,
                       'answer': self.answer, 'failures': ['%s: %s' % (c['check'], c['detail'])
                                                           for c in _verify.failures(checks)]}
        self.write_outcome(outcome)

    def mark_not_applied(self):
        """The pass failed and its POST /reshaper was never applied: nothing for a later pass to check."""
        self.write_outcome({'status': 'not_applied', 'at': _snapshot.utc_stamp(), 'run_id': self.run_id})

    def write_outcome(self, outcome):
        try:
            _snapshot.set_outcome(self.snapshot, outcome, self.snapshot_dir)
        except _snapshot.SnapshotError as exc:
            log_line(self.log, 'could not record the outcome in snapshot %s: %s' % (self.snapshot, exc.detail))

    def send(self, state, plan):
        """ONE POST /reshaper of the plan, settled when its answer is lost."""
        self.sent_plan, self.sent_state = plan, state
        try:
            send_settled(self.backend, self.root_uuid, planner.reshape_body(plan), self, self.settle_delays,
                         self.log,
                         unknown_hint='run the reshape again: it reads the node and either finds the '
                                      'layout in place and verifies it, or reshapes it. Do not roll back '
                                      'or delete the new children before that')
        finally:
            self.overtaken = self.overtaken or self.verdict == SETTLED_CHANGED

    # -- what happened ----------------------------------------------------------------------

    def journal_mode(self):
        """The words of this pass's journal: ``would`` in check mode, else ``did``."""
        return _journal.MODE_WOULD if self.check_mode else _journal.MODE_DID

    def failed_journal(self):
        """The journal of what this pass wrote before it failed: the node read again after the failure
        (and its clean-up) against the read the pass planned from; None in check mode, when the pass
        wrote nothing, or when the node cannot be read now."""
        if self.check_mode or self.before is None or not (self.applied or self.created_children
                                                          or self.traits_written):
            return None
        try:
            after = provider_tree_state(self.backend, self.root_uuid, known=self.before)
        except Exception:  # pylint: disable=broad-except
            return None
        return _journal.journal_of(self.before, after, _journal.MODE_DID, created=self.created,
                                   traits=self.traits_written)

    def outcome(self, plan, retries, observed):
        """The module's result of the pass: deferred, noop, check mode, or reshaped and verified."""
        if plan['status'] == planner.STATUS_NOOP and self.overtaken and self.sent_plan:
            # the lost reshape was overtaken by another write, and the node now has the layout:
            # the reshape this run sent is what put it there; verify it as sent
            plan, self.before = self.sent_plan, self.sent_state
            self.settled += '; the node has the layout now, so it was applied'
            self.applied = True
        status = {planner.STATUS_PLANNED: STATUS_RESHAPED, planner.STATUS_NOOP: STATUS_NOOP,
                  planner.STATUS_DEFERRED: STATUS_DEFERRED}[plan['status']]
        diff = plan['diff']
        if self.prepared and plan['status'] == planner.STATUS_NOOP and (self.created or self.traits_written):
            # only children / traits were missing: they were created, nothing to reshape
            status = STATUS_RESHAPED
            diff = self.first_diff
        result = _result(status, status == STATUS_RESHAPED, plan=plan, diff=diff,
                         retries=retries, snapshot=self.snapshot, moved=plan['moved'],
                         deferred_reason=plan['deferred_reason'], warnings=list(plan['warnings']),
                         reshaper_applied=bool(self.applied), traits_written=list(self.traits_written),
                         children_created=list(self.created), resent=self.resent)
        if self.settled:
            result['warnings'].append(self.settled)
        if status == STATUS_DEFERRED and self.created_children:
            return self.deferred_after_children(result, plan)
        applied = status == STATUS_RESHAPED and not self.check_mode
        if observed is not None and not applied and not self.overtaken:
            observed.update(state=self.before, foreign=self.foreign or {})
        if status in (STATUS_NOOP, STATUS_DEFERRED):
            result['msg'] = planner.summary(plan)
            result['journal'] = _journal.journal_of(self.before, self.before, self.journal_mode())
            if status == STATUS_NOOP and self.prepared:
                # another pass (a second controller) laid the node out while this one ran
                result['msg'] += ('; it was put in the layout by another writer while this pass ran (this pass '
                                  'wrote no provider, trait, inventory or allocation)')
            return result
        if not applied:
            return self.check_mode_outcome(result, plan, status)
        return self.verified(result, plan, retries, observed)

    def deferred_after_children(self, result, plan):
        """A move started between the first read and the reshape: the children made for it are
        removed again (compare-and-delete); the rerun makes them anew."""
        removed, left = remove_created_children(self.backend, self.root_uuid, self.created_children, self.log)
        note = left_behind(removed, left)
        result['journal'] = _journal.journal_of(
            self.before, self.before, _journal.MODE_DID, created=self.created, traits=self.traits_written,
            removed=[c['name'] for c in removed if isinstance(c, dict) and c.get('name')],
            left=[c['name'] for c in left if isinstance(c, dict) and c.get('name')])
        result['changed'] = bool(left)
        result['warnings'].append(note)
        result['msg'] = planner.summary(plan) + '. The move was seen after children were created: ' + note
        return result

    def check_mode_outcome(self, result, plan, status):
        result['msg'] = 'check mode: %s' % planner.summary(plan)
        result['journal'] = _journal.journal_of(
            self.before, _journal.planned_state(self.before, plan), _journal.MODE_WOULD,
            created=[c['name'] for c in plan['create_children']])
        if status == STATUS_RESHAPED:
            result['would_write'] = _would_write(plan, self.before)
            if not result['would_write']['reshaper']:
                result['msg'] = 'check mode: node %s: would write only %s; nothing to move, no POST /reshaper' % (
                    self.root_prov['name'],
                    written_text(result['would_write']['children'], result['would_write']['traits']))
        return result

    def verified(self, result, plan, retries, observed):
        """Read the node back and verify the reshape; the message says what was written."""
        # the consumers the reshape did not write are taken from the state it was computed from
        after = provider_tree_state(self.backend, self.root_uuid, known=self.before)
        if observed is not None:
            observed.update(state=after, foreign=self.foreign or {})
        checks = _verify.verify_reshape(plan, self.before, after)
        # what this pass wrote: the children it made, its trait PUTs, and the reshape's diff
        result['journal'] = _journal.journal_of(self.before, after, _journal.MODE_DID, created=self.created,
                                                traits=self.traits_written)
        result['verification'] = checks
        result['verified'] = _verify.passed(checks)
        if self.applied:
            self.mark_snapshot(checks)
        if not result['verified'] and self.applied and not self.settled and plan['status'] != planner.STATUS_NOOP:
            return self.placement_broke(result, plan, after, checks)
        what = planner.summary(plan, created=self.created)
        if plan['status'] == planner.STATUS_NOOP:
            what = 'node %s: %s; nothing to move, no POST /reshaper' % (
                self.root_prov['name'], written_text(self.created, self.traits_written) or 'nothing written')
        result['msg'] = '%s%s; verification %s' % (
            what,
            _retries_text(retries, self.resent),
            'passed' if result['verified'] else 'FAILED: ' + '; '.join(
                '%s: %s' % (c['check'], c['detail']) for c in _verify.failures(checks)))
        return result

    def placement_broke(self, result, plan, after, checks):
        """Placement answered the POST /reshaper (204) and holds something else: said as Placement's, with its answer, what it holds and what it should, and the
        correction (damage.py); the snapshot records it, so every later pass checks the node first."""
        doc = {'state': self.before, 'plan': _plan_summary(plan, self.before), 'foreign': self.foreign or {}}
        _dchecks, damaged = _verify.damage_checks(doc, after)
        answer = self.answer or {}
        said = 'Placement answered %s%s' % (answer.get('status') or 204, ' (request id %s)' % answer['request_id']
                                            if answer.get('request_id') else '')
        result['status'] = STATUS_FAILED
        result['damaged'] = damaged
        result['corrections'] = _damage.corrections(damaged, self.backend)
        result['moved'] = _landed(plan, after)
        parts = ['%s: %s' % (c['check'], c['detail']) for c in _verify.failures(checks)]
        msg = ('node %s: verification FAILED after POST /reshaper: %s, but Placement does not hold what the body '
               'it accepted says; this is Placement\'s fault, not the plan\'s (the body sent: %s). '
               'Placement holds now: %s. Snapshot %s records this failure: every later pass checks the node against '
               'it first and writes nothing while a consumer or a usage does not match it'
               % (self.root_prov['name'], said,
                  ', '.join(planner._writes_text(plan, False)),  # pylint: disable=protected-access
                  '; '.join(parts),
                  self.snapshot))
        if result['corrections']:
            msg += ('. A rerun does not correct this: give each damaged consumer what it should have, then run the '
                    'pass again: %s' % ' ; '.join(result['corrections']))
        result['msg'] = msg
        return result
