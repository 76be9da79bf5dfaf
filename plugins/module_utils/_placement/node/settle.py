# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Sending ONE ``POST /reshaper`` and knowing what became of it; cleaning up after a pass.

:func:`send_settled`
    sends the body; a lost answer (no answer, a 5xx, a proxy's 502/504) or a 409 that Placement
    gives when its deadlock retry ran part of the reshape outside its transaction is settled
    by reading the node back (:func:`settle_reshape`): applied, not applied (fenced, so it can
    never commit later; the caller re-plans and sends again), overtaken, or unknown
    (:class:`ReshapeOutcomeUnknown`, saying what to do).
:func:`failure`
    the error a failed pass raises, with what it left said: before the reshape was applied the
    children the pass created are removed (:func:`remove_created_children`, compare-and-delete)
    or named with the reason.
:class:`Progress`
    what a reshape or a rollback of one node has done so far, which both read.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ..rules import allocations as allocation_rules
from .. import request as _request
from .. import tree as _tree
from ..backends.base import provider_tree_state
from ..errors import (
    CapacityExceeded,
    ConcurrentUpdate,
    Forbidden,
    NoAnswer,
    NotFound,
    PlacementError,
    ServiceUnavailable,
)

SERVICE_ROLE_HINT = ('POST /reshaper is refused by policy: the credentials need the "service" role '
                     '(Placement\'s default policy grants placement:reshaper:reshape to role:service '
                     'only), or a policy file granting that rule to them')

#: Seconds between the re-reads that settle a reshape whose answer was lost (about 15 s in all:
#: long enough for a Placement behind a load balancer to come back, short enough for a roll).
SETTLE_DELAYS = (0.5, 1.0, 2.0, 4.0, 8.0)


def send_reshape(backend, body):
    """POST /reshaper; returns Placement's answer (``{"status", "request_id"}``; the embedded store's: None)."""
    try:
        return backend.reshape(body)
    except Forbidden as exc:
        if 'role:service' in exc.detail:
            raise  # the REST backend already explains the policy
        raise Forbidden('%s (%s)' % (SERVICE_ROLE_HINT, exc.detail), code=exc.code,
                        title=exc.title, request_id=exc.request_id)


# -- a reshape whose answer was lost -----------------------------------------------------
SETTLED_APPLIED = 'applied'
SETTLED_NOT_APPLIED = 'not_applied'
SETTLED_CHANGED = 'changed_since'
SETTLED_UNKNOWN = 'unknown'


def body_landed(body, state, read_allocations):
    """True when every provider and consumer of the reshape body holds what the body sent."""
    for rp, entry in body['inventories'].items():
        prov = state['providers'].get(rp)
        if prov is None or _tree.norm_inventories(prov['inventories']) != \
                _tree.norm_inventories(entry['inventories']):
            return False
    for consumer, sent in body['allocations'].items():
        now = state['allocations'].get(consumer)
        if now is None:
            now = read_allocations(consumer)
        if allocation_rules.strip_allocations(now.get('allocations') or {}) != \
                allocation_rules.strip_allocations(sent.get('allocations') or {}):
            return False
    return True


def settle_reshape(backend, root_uuid, body, delays=SETTLE_DELAYS, log=None):
    """Find out whether a ``POST /reshaper`` whose answer was lost was applied.

    A dropped connection, a 502 from a proxy or a client timeout can come after
    Placement committed the reshape, or before it even saw it.  The node is read
    again (each read retried after the next of ``delays`` while Placement does not
    answer) and compared with the body that was sent:

    * every provider and consumer of the body holds what it sent -> ``applied``;
    * every provider of the body is still at the generation the body names, so the
      reshape did not commit (it bumps each of them): one of them (the root when the body
      has it, so that no child this run created is written to) is FENCED,
      its generation bumped by re-writing its own aggregates (a no-op that Placement
      counts as a write), so the request, should it still be in flight, can never
      commit later -> ``not_applied``.  A fence that loses a generation race means
      something committed meanwhile: read again;
    * neither (a generation moved, the content is not the body's): another writer
      touched the node, and the body can no longer commit either -> ``changed_since``;
      the caller re-reads and re-plans, which tells whether the layout is in place;
    * Placement never answered the reads -> ``unknown``.

    Returns ``(verdict, state)`` (``state`` None when unknown).
    """
    read_errors = (ServiceUnavailable,)
    for attempt, delay in enumerate((0.0,) + tuple(delays)):
        if delay:
            time.sleep(delay)
        try:
            state = provider_tree_state(backend, root_uuid)
            if body_landed(body, state, backend.get_allocations):
                return SETTLED_APPLIED, state
            same = [rp for rp, entry in body['inventories'].items()
                    if rp in state['providers']
                    and state['providers'][rp]['generation'] == entry['resource_provider_generation']]
            if len(same) != len(body['inventories']):
                return SETTLED_CHANGED, state
            # the root when it is in the body: a child this run created keeps the generation the
            # run recorded, so a cleanup after a failure can still remove it (compare-and-delete)
            fence = root_uuid if root_uuid in same else same[0]
            backend.set_aggregates(fence, state['providers'][fence]['generation'],
                                   state['providers'][fence]['aggregates'])
            log_line(log, 'settle: fenced provider %s (generation %s -> %s) so the lost reshape can '
                          'never commit later' % (fence, state['providers'][fence]['generation'],
                                                  state['providers'][fence]['generation'] + 1))
            return SETTLED_NOT_APPLIED, state
        except ConcurrentUpdate:
            log_line(log, 'settle: a write landed while settling (attempt %d); reading again' % (attempt + 1))
        except read_errors as exc:
            log_line(log, 'settle: Placement did not answer the re-read (attempt %d): %s' % (attempt + 1, exc.detail))
    return SETTLED_UNKNOWN, None


class ReshapeOutcomeUnknown(ServiceUnavailable):
    """``POST /reshaper`` got no answer and the node could not be read back to settle it."""


# -- what a reshape that did not happen leaves behind ---------------------------------
def remove_created_children(backend, root_uuid, created, log=None):
    """Compare-and-delete the children this run created; ``(removed, left)``.

    ``created`` lists ``{"name", "uuid", "generation"}`` as the run last saw each child.
    A child is deleted only while it is exactly as the run left it: still a child of
    the root, at that generation (so no inventory, allocation, trait or aggregate was
    put on it since: each of those bumps it).  Placement's DELETE takes no generation,
    so the window between that read and the DELETE is the one its API leaves; a DELETE
    that finds allocations is refused by Placement itself.  Whatever is not deleted is
    returned in ``left`` with the reason.
    """
    removed, left = [], []
    for child in created:
        item = {'name': child['name'], 'uuid': child['uuid']}
        try:
            try:
                prov = backend.get_provider(child['uuid'])
            except NotFound:
                removed.append(item)
                continue
            if child.get('generation') is None:
                item['why'] = ('the answer to its creation was lost and it could not be read back then (%s): '
                               'check it holds nothing before deleting it' % child.get('unread'))
            elif prov.get('parent_provider_uuid') != root_uuid:
                item['why'] = 'it is no longer a child of the root'
            elif prov['generation'] != child['generation']:
                item['why'] = ('it was written to since this run created it (generation %s, was %s)'
                               % (prov['generation'], child['generation']))
            else:
                _delete_read_back(backend, child['uuid'])
                removed.append(item)
                log_line(log, 'removed child provider %s (%s), created by this run, empty'
                         % (child['name'], child['uuid']))
                continue
        except PlacementError as exc:
            item['why'] = 'removing it failed: %s' % exc.detail
        left.append(item)
    return removed, left


def _delete_read_back(backend, uuid):
    """DELETE a provider; when the answer is lost (a reset can come after it was applied), read it
    back: gone is removed, still there raises the lost answer (the caller names the child)."""
    try:
        backend.delete_provider(uuid)
    except NoAnswer:
        try:
            backend.get_provider(uuid)
        except NotFound:
            return
        raise


def left_behind(removed, left):
    """One sentence on the children a failed or deferred reshape created (None when none)."""
    parts = []
    if removed:
        parts.append('the %d child provider(s) this run had created (%s) were removed again'
                     % (len(removed), ', '.join(c['name'] for c in removed)))
    if left:
        parts.append('child provider(s) created by this run are LEFT in Placement, empty of '
                     'allocations: %s; once they hold nothing, delete each with `openstack resource '
                     'provider delete <uuid>`, or leave them: a rerun reuses them'
                     % '; '.join('%s (%s): %s' % (c['name'], c['uuid'], c['why']) for c in left))
    return '; '.join(parts) or None


def log_line(log, message):
    if log is not None:
        log(message)


def send_settled(backend, root_uuid, body, progress, delays, log, unknown_hint):
    """``POST /reshaper`` with ``body``; a lost answer is settled (:func:`settle_reshape`).

    Returns when the body is applied (``progress.applied``, a :class:`Progress`; ``progress.settled``
    says how it was known when the answer was lost).  Not applied or overtaken raise
    ConcurrentUpdate, so the caller's retry re-reads and re-plans; unknown raises
    :class:`ReshapeOutcomeUnknown` ending with ``unknown_hint``.

    A 409 refusing an allocation on a provider whose inventory this same body sets (Placement's
    answer when oslo.db retried part of the reshape after a database deadlock, outside the
    reshape's transaction: docs/reliability.md) is settled the same way: the plan checked that
    allocation against that very inventory, so the node is read back before anything else.
    """
    try:
        answer = send_reshape(backend, body)
        progress.answer = answer if isinstance(answer, dict) else {'status': 204, 'request_id': None}
    except ServiceUnavailable as exc:
        # an error status (503 from Placement, 502/504 from a proxy, which may come after the
        # proxy forwarded it; a locked embedded store) or no answer at all (NoAnswer: reset, timed out)
        answered = not isinstance(exc, NoAnswer)
        what = ('POST /reshaper failed with %s %s (%s)' % (exc.status, exc.title, exc.detail) if answered
                else 'the answer to POST /reshaper was lost (%s)' % exc.detail)
        settle_lost(Sending(backend=backend, root_uuid=root_uuid, body=body, progress=progress, delays=delays,
                            log=log, unknown_hint=unknown_hint), exc, what, answered)
    except CapacityExceeded as exc:
        named = sorted(rp for rp in body['inventories'] if rp in str(exc.detail))
        if not named:
            raise
        what = ('POST /reshaper was refused with 409 (%s) on %s, whose inventory this same reshape sets: '
                'Placement answers so when it retries part of a reshape after a database deadlock'
                % (exc.detail, ', '.join(named)))
        settle_lost(Sending(backend=backend, root_uuid=root_uuid, body=body, progress=progress, delays=delays,
                            log=log, unknown_hint=unknown_hint), exc, what, True)
    progress.applied = True


class Sending(_request.Request):
    """One :func:`send_settled` (its arguments), for :func:`settle_lost`."""

    FIELDS = (('backend', None), ('root_uuid', None), ('body', None), ('progress', None), ('delays', SETTLE_DELAYS),
              ('log', None), ('unknown_hint', ''))


def settle_lost(sending, exc, what, answered):
    """Settle a POST /reshaper whose answer was lost or cannot be trusted; returns when it was
    applied, raises ConcurrentUpdate (re-plan) or ReshapeOutcomeUnknown.  ``sending``: a :class:`Sending`."""
    log, progress, unknown_hint = sending.log, sending.progress, sending.unknown_hint
    log_line(log, '%s; reading the node back to settle it' % what)
    verdict, _now = settle_reshape(sending.backend, sending.root_uuid, sending.body, delays=sending.delays, log=log)
    progress.verdict = verdict
    if verdict == SETTLED_UNKNOWN:
        raise ReshapeOutcomeUnknown(
            '%s and Placement did not answer the re-reads meant to settle it: whether it was applied '
            'is UNKNOWN. Nothing was written after it; the snapshot taken just before it is %s. When '
            'Placement answers again, %s.' % (what, progress.snapshot, unknown_hint))
    if verdict != SETTLED_APPLIED:
        progress.settled = ('%s; a re-read showed it %s'
                            % (what, 'was not applied' if verdict == SETTLED_NOT_APPLIED
                               else 'was overtaken by another write'))
        # re-planned by the caller's retry; when the retries run out, the error is the
        # answer's (a 503 stays a 503), not a generation conflict
        progress.resent += 1
        err = ConcurrentUpdate('%s; re-planning from a fresh read' % progress.settled,
                               status=exc.status if answered else None,
                               code=exc.code if answered else None,
                               title=exc.title if answered else None, request_id=exc.request_id)
        err.resend = True               # no generation conflict: the retry's log says what it was
        raise err
    progress.settled = '%s; a re-read showed it was applied' % what
    log_line(log, progress.settled)


def failure(backend, root_prov, progress, exc, log):
    """The error a failed reshape raises: ``exc`` with what the run left behind said.

    Before ``POST /reshaper`` was applied, the children the run created are removed
    (compare-and-delete) and the message says nothing was reshaped, plus what was
    removed or left.  After it (the root's traits failed), the node IS reshaped and the
    message says so.  When the outcome is unknown, nothing is removed: the children
    may hold the moved inventory.
    """
    lead = None         # what the pass left in Placement, said first (issue 46: a disk full mid-reshape)
    changed = False
    if progress.applied:
        note = ('POST /reshaper WAS applied: %s is reshaped (snapshot %s), but what followed it failed; '
                'a rerun completes it' % (root_prov['name'], progress.snapshot))
        changed = True
    elif isinstance(exc, ReshapeOutcomeUnknown):
        note = None
    else:
        note = 'Nothing was reshaped'
        behind, left = None, []
        if progress.created_children:
            removed, left = remove_created_children(backend, root_prov['uuid'], progress.created_children, log)
            if left:
                lead = left_lead(left)
                changed = True
                behind = left_behind(removed, []) if removed else None
            else:
                behind = left_behind(removed, left)
            if behind:
                note += '; ' + behind
        if isinstance(exc, PlacementError) and 'Nothing was changed' in (exc.detail or ''):
            # the error says it already (a plan refused): said once, and true of what is left
            if left:
                exc.detail = exc.detail.replace('Nothing was changed', 'Nothing was reshaped')
            note = behind
    if isinstance(exc, PlacementError):
        if lead:
            exc.detail = '. '.join(p for p in (lead, note, 'What failed: %s' % exc.detail) if p)
        elif note:
            exc.detail = '%s. %s' % (exc.detail.rstrip('.'), note)
        exc.args = (exc.detail,)
        exc.changed = changed
        return exc
    err = PlacementError('%sUnexpected error (%s) during the reshape of %s: %s. %s'
                         % (lead + '. ' if lead else '', type(exc).__name__, root_prov['name'], exc, note or ''),
                         title='Unexpected error')
    err.changed = changed
    err.__cause__ = exc
    return err


def left_lead(left):
    """The sentence that leads a failure's message when children this pass created stay in Placement."""
    named = '; '.join('%s (%s): %s' % (c['name'], c['uuid'], _short(c['why'])) for c in left)
    return ('%d child provider(s) created by this run are LEFT in Placement, empty of allocations: %s; once they '
            'hold nothing, delete each with `openstack resource provider delete <uuid>`, or leave them: a rerun '
            'reuses them' % (len(left), named))


def _short(why):
    """A removal's reason without the store's long advice repeated for every child (its first sentence)."""
    text = str(why)
    cut = text.find('. ')
    return text[:cut] if cut > 0 else text.rstrip('.')


class Progress(object):
    """What a reshape or a rollback of one node has done so far: read by :func:`send_settled`
    (which settles a lost answer) and :func:`failure` (which says what was left)."""

    def __init__(self, snapshot=None):
        self.snapshot = snapshot        # the snapshot file written (or used) for this pass
        self.applied = False            # a POST /reshaper of this pass was applied
        self.settled = None             # how a lost answer was settled (a warning), or None
        self.verdict = None             # settle_reshape's last verdict
        self.resent = 0                 # POST /reshaper sent again after it was not applied
        self.created_children = []      # [{"name", "uuid", "generation"}] created by this pass
        self.answer = None              # Placement's answer to the applied POST /reshaper: {"status", "request_id"}
