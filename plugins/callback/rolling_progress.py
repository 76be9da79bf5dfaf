# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: rolling_progress
type: aggregate
short_description: Progress of a rolling reshape, batch by batch, with an estimate of the time left
version_added: 1.0.0
author: placement.upgrade contributors (@placement-upgrade)
description:
  - For every play that rolls through its hosts in batches (C(serial)), prints when a batch
    starts (which nodes, their position in the roll) and when it ends (nodes done out of the
    total, how many were reshaped, updated without a reshape (only traits or empty children
    were missing and were written), skipped, deferred or failed, the time taken and an
    estimate of the time left, from the mean time per node so far).
  - Reads each node's outcome from the C(rolling_reshape_result) fact the
    P(placement.upgrade.rolling_reshape#role) role sets, or from the C(status) a
    M(placement.upgrade.reshape) task returns.
  - For each node, prints the outcome of each step of its pass when its reshape task ends, that
    is what discovery found, the plan (consumers and allocations to move), the reshape (one
    C(POST /reshaper)) or what was written without one (the traits added, such as C(OWNER_NOVA), and
    on which provider) and the verification, or why nothing was done.
  - When the role read the version of a node's nova-compute before and after its reshape, prints
    the node's name and C(nova-compute 33.0.0 -> 34.0.0).
  - At the end of the playbook prints the fleet summary, the deferred nodes with their reasons
    (the head of a long reason, and where the whole of it is, when the run wrote its report), the
    node and reason the roll stopped at, and the nodes it did not reach.
  - Plays without C(serial) are not reported.
  - It is an aggregate callback, so it prints next to the normal output; enable it with
    C(callbacks_enabled = placement.upgrade.rolling_progress) in the C([defaults]) section of
    C(ansible.cfg) or with the E(ANSIBLE_CALLBACKS_ENABLED) environment variable.
requirements:
  - enabled through C(callbacks_enabled)
'''

import re
import time

from ansible import constants as C
from ansible.plugins.callback import CallbackBase

from ansible_collections.placement.upgrade.plugins.module_utils._placement import journal as _journal
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet.data import (
    nova_compute_text as _nova_compute_text,
    nova_compute_versions as _nova_compute_versions,
    written_of as _written_of,
    written_text as _written_text,
)
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet.labels import (
    format_duration as _duration,
    short_reason as _short_reason,
)
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet.render import anchor as _anchor

_OUTCOMES = ('reshaped', 'updated', 'planned', 'planned_update', 'noop', 'deferred', 'rolled_back', 'verified', 'failed')
_LABELS = {
    'reshaped': 'reshaped',
    'updated': 'updated without a reshape',
    'planned': 'would reshape',
    'planned_update': 'would update without a reshape',
    'noop': 'skipped',
    'deferred': 'deferred',
    'rolled_back': 'rolled back',
    'verified': 'verified',
    'failed': 'failed',
    'done': 'done',
}
_RESHAPE_ACTIONS = ('placement.upgrade.reshape', 'reshape')
_REPORT_ACTIONS = ('placement.upgrade.fleet_report', 'fleet_report')
_DISCOVERY_ACTIONS = ('placement.upgrade.device_info', 'device_info')
_FOUND = (('gpus', 'GPU'), ('sriov_pfs', 'SR-IOV PF'), ('pci_devices', 'PCI device'), ('instances', 'guest'))


def _count(number, noun):
    return '%d %s%s' % (number, noun, '' if number == 1 else 's')


def _found_text(devices):
    """What discovery found on the node: ``2 GPUs, 5 guests``."""
    parts = [_count(len(devices.get(key) or ()), noun) for key, noun in _FOUND if devices.get(key)]
    return ', '.join(parts) or 'no device'


def _updated_only(res):
    """What a reshape result says it wrote without a POST /reshaper (traits, empty children), or ''."""
    written = _written_of(res)
    if res.get('status') != 'reshaped' or not written or written['reshaper'] is not False:
        return ''
    return _written_text(written)


def _planned_update(res):
    """What a planned reshape (check mode) would write without a POST /reshaper, or ''."""
    would = res.get('would_write') if isinstance(res.get('would_write'), dict) else {}
    if res.get('status') != 'reshaped' or would.get('reshaper') is not False:
        return ''
    return _written_text({'traits': would.get('traits') or [], 'children': would.get('children') or []})


def _journal_text(res):
    """``: allocations moved 3, allocations created 2`` of the pass's journal, in its mode's words ('' without)."""
    journal = res.get('journal') if isinstance(res.get('journal'), dict) else None
    if journal is None or journal.get('mode') not in _journal.MODES:
        return ''
    text = _journal.figures_text(_journal.figures(journal), journal['mode'], keep_zero=())
    return ': ' + text if text else ''


def _steps_text(found, res, check_mode):
    """The node's pass, step by step: ``discover (2 GPUs) - plan (...) - reshape (...) - verify (...)``."""
    steps = ['discover (%s)' % found] if found else []
    status = res.get('status')
    moved = res.get('moved') if isinstance(res.get('moved'), dict) else {}
    journal_mode = res.get('journal', {}).get('mode') if isinstance(res.get('journal'), dict) else None
    if status == 'noop' and journal_mode == 'restored':
        steps.append('rollback (nothing to restore: the node is at its snapshot)')
        return ' - '.join(steps)
    if status == 'rolled_back' and isinstance(res.get('journal'), dict):
        # a rollback restores: its own words, never a reshape's
        if check_mode or res.get('verified') is None:
            steps.append('rollback (planned, not applied%s)' % _journal_text(res))
        else:
            steps.append('rollback (%s%s)' % ('one POST /reshaper' if res.get('reshaper_applied') else
                                              'no POST /reshaper', _journal_text(res)))
            steps.append('verify (%s)' % ('passed' if res.get('verified') else 'FAILED'))
        return ' - '.join(steps)
    if status == 'noop':
        steps.append('plan (nothing to move: already in the layout)')
    elif status == 'deferred':
        steps.append('plan (deferred: %s)' % str(res.get('deferred_reason') or '').split(':', 1)[0])
    elif status in ('reshaped', 'rolled_back'):
        units = ', '.join('%s %s' % (rc, n) for rc, n in sorted((moved.get('units') or {}).items()))
        steps.append('plan (%s, %s%s)' % (
            _count(moved.get('consumers') or 0, 'consumer'), _count(moved.get('allocations') or 0, 'allocation'),
            ': ' + units if units else ''))
        if (check_mode or res.get('verified') is None) and _planned_update(res):
            steps.append('update (planned, not applied: %s; no POST /reshaper)' % _planned_update(res))
        elif check_mode or res.get('verified') is None:
            steps.append('reshape (planned, not applied%s)' % _journal_text(res))
        elif _updated_only(res):
            steps.append('update (%s; no POST /reshaper)' % _updated_only(res))
            steps.append('verify (%s)' % ('passed' if res.get('verified') else 'FAILED'))
        else:
            steps.append('reshape (one POST /reshaper%s%s)' % (
                ', %s' % _count(res['retries'], 'retry') if res.get('retries') else '', _journal_text(res)))
            steps.append('verify (%s)' % ('passed' if res.get('verified') else 'FAILED'))
    return ' - '.join(steps)


class _Roll(object):
    """One serial play: its hosts, the current batch and every node's outcome."""

    def __init__(self, name, hosts):
        self.name = name
        self.hosts = list(hosts)
        self.started = time.time()
        self.batch = 0
        self.batch_hosts = []
        self.batch_started = None
        self.done = []
        self.batch_of = {}      # host -> the number of the batch it was done in
        self.outcome = {}
        self.reason = {}
        self.nova_compute = {}
        self.found = {}

    def counts(self):
        counts = {}
        for host in self.done:
            key = self.outcome.get(host, 'done')
            counts[key] = counts.get(key, 0) + 1
        return counts


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'placement.upgrade.rolling_progress'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super(CallbackModule, self).__init__(*args, **kwargs)
        self._rolls = {}
        self._current = None
        self._finished = []
        self._report_html = None

    # -- output ---------------------------------------------------------
    def _say(self, text, color=C.COLOR_VERBOSE):
        self._display.display('[rolling_progress] %s' % text, color=color)

    def set_play_context(self, play_context):
        self._play_context = play_context

    def _check_mode(self):
        context = getattr(self, '_play_context', None)
        return bool(getattr(context, 'check_mode', False))

    def _counts_text(self, roll):
        counts = roll.counts()
        always = ('planned' if self._check_mode() else 'reshaped', 'noop', 'deferred', 'failed')
        parts = []
        for key in _OUTCOMES + ('done',):
            if counts.get(key) or key in always:
                parts.append('%d %s' % (counts.get(key, 0), _LABELS[key]))
        return ', '.join(parts)

    # -- batches ----------------------------------------------------------
    def _end_batch(self, roll):
        if roll.batch_started is None:
            return
        for host in roll.batch_hosts:
            if host not in roll.done:
                roll.done.append(host)
                roll.batch_of[host] = roll.batch
        now = time.time()
        done, total = len(roll.done), len(roll.hosts)
        elapsed = now - roll.started
        text = 'batch %d done in %s: %d/%d nodes (%s); elapsed %s' % (
            roll.batch, _duration(now - roll.batch_started), done, total, self._counts_text(roll),
            _duration(elapsed))
        left = total - done
        if left > 0 and done > 0:
            text += ', about %s left for %d more node%s' % (
                _duration(elapsed / done * left), left, '' if left == 1 else 's')
        failed = [h for h in roll.batch_hosts if roll.outcome.get(h) == 'failed']
        self._say(text, color=C.COLOR_ERROR if failed else C.COLOR_OK)
        for host in failed:
            self._say('%s failed: %s' % (host, roll.reason.get(host) or 'see the task output above'),
                      color=C.COLOR_ERROR)
        roll.batch_started = None

    def _play_hosts(self, play, ignore_restrictions):
        try:
            inventory = play.get_variable_manager()._inventory
            hosts = inventory.get_hosts(play.hosts, ignore_restrictions=ignore_restrictions)
            return [h.name for h in hosts]
        except Exception:  # pylint: disable=broad-except
            return []

    def v2_playbook_on_play_start(self, play):
        serial = play.serial
        # each batch starts the play again; AWX's and ansible-runner's display callback (awx_display)
        # renames a play's uuid when it starts again, '<uuid>_2', '<uuid>_3', ...: one roll all the same
        uuid = re.sub(r'_[0-9]+$', '', str(getattr(play, '_uuid', None) or id(play)))
        if not serial:
            if self._current is not None:
                self._end_batch(self._current)
            self._current = None
            return
        roll = self._rolls.get(uuid)
        if roll is None:
            roll = _Roll(play.get_name(), self._play_hosts(play, ignore_restrictions=True))
            self._rolls[uuid] = roll
            self._finished.append(roll)
            plural = '' if len(roll.hosts) == 1 else 's'
            self._say('rolling through %d node%s: %s' % (len(roll.hosts), plural, roll.name))
        else:
            self._end_batch(roll)
        if self._current is not None and self._current is not roll:
            self._end_batch(self._current)
        self._current = roll
        batch = self._play_hosts(play, ignore_restrictions=False)
        roll.batch += 1
        roll.batch_hosts = batch
        roll.batch_started = time.time()
        first = len(roll.done) + 1
        self._say('batch %d: %s (nodes %d-%d of %d)' % (
            roll.batch, ', '.join(batch) or '(none)', first, first + max(len(batch), 1) - 1, len(roll.hosts)))

    # -- results ----------------------------------------------------------
    def _note(self, result, failed=False, unreachable=False):
        roll = self._current
        if roll is None:
            return
        host = result._host.get_name()
        res = result._result if isinstance(result._result, dict) else {}
        facts = res.get('ansible_facts') or {}
        record = facts.get('rolling_reshape_result')
        if isinstance(record, dict) and record.get('status'):
            status = record['status']
            if self._check_mode() and status in ('reshaped', 'rolled_back'):
                status = 'planned'
            if status == 'reshaped' and roll.outcome.get(host) == 'updated':
                status = 'updated'   # (the reshape task's result said what it wrote)
            if status == 'planned' and roll.outcome.get(host) == 'planned_update':
                status = 'planned_update'
            roll.outcome[host] = status
            if record.get('reason'):
                roll.reason[host] = record['reason']
            versions = _nova_compute_versions(record)
            if versions and roll.nova_compute.get(host) != versions:
                roll.nova_compute[host] = versions
                self._say('%s: %s' % (host, _nova_compute_text(versions)))
            return
        action = getattr(result._task, 'action', '')
        paths = res.get('paths') if isinstance(res.get('paths'), dict) else {}
        if not failed and action in _REPORT_ACTIONS and res.get('summary_line') and paths.get('html'):
            self._report_html = str(paths['html'])   # a whole report was written there
        if not failed and action in _DISCOVERY_ACTIONS and isinstance(res.get('devices'), dict):
            roll.found[host] = _found_text(res['devices'])
        if not failed and action in _RESHAPE_ACTIONS and res.get('status') in _OUTCOMES:
            planning = self._check_mode() or getattr(result._task, 'check_mode', False) is True
            self._say('%s: %s' % (host, _steps_text(roll.found.pop(host, None), res, planning)))
            status = res['status']
            if self._check_mode() and _planned_update(res):
                status = 'planned_update'
            elif self._check_mode() and status in ('reshaped', 'rolled_back'):
                status = 'planned'
            elif _updated_only(res):
                status = 'updated'
                roll.outcome[host] = status   # (over the plan's 'reshaped' of the path with steps)
            roll.outcome.setdefault(host, status)
            if res.get('deferred_reason'):
                roll.reason.setdefault(host, res['deferred_reason'])
        if unreachable or failed:
            roll.outcome[host] = 'failed'
            roll.reason.setdefault(host, str(res.get('msg') or ('unreachable' if unreachable else 'failed')))

    def _reason_text(self, host, reason):
        """A long reason once: its head and where the whole of it is, when a report was written."""
        head = _short_reason(reason)
        if head == reason or not self._report_html:
            return reason
        return '%s (the whole reason: %s#%s)' % (head, self._report_html, _anchor(host))

    def v2_runner_on_ok(self, result):
        self._note(result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        if not ignore_errors:
            self._note(result, failed=True)

    def v2_runner_on_unreachable(self, result):
        self._note(result, unreachable=True)

    def v2_playbook_on_stats(self, stats):
        if self._current is not None:
            self._end_batch(self._current)
            self._current = None
        for roll in self._finished:
            total = len(roll.hosts)
            done = len(roll.done)
            elapsed = time.time() - roll.started
            failed = [h for h in roll.done if roll.outcome.get(h) == 'failed']
            text = '%s: %d/%d nodes in %s (%s)' % (roll.name, done, total, _duration(elapsed),
                                                   self._counts_text(roll))
            self._say(text, color=C.COLOR_ERROR if failed else C.COLOR_OK)
            deferred = [h for h in roll.done if roll.outcome.get(h) == 'deferred']
            for host in deferred:
                self._say('deferred %s: %s' % (host, self._reason_text(host, roll.reason.get(host, ''))),
                          color=C.COLOR_WARN)
            for host in failed:
                # a roll that went on past a failed node (a sliced roll within the fleet's failure budget)
                # did not stop there
                went_on = any(roll.batch_of.get(other, 0) > roll.batch_of.get(host, 0) for other in roll.done)
                self._say('%s %s: %s' % ('failed, the roll went on past it:' if went_on else 'stopped at', host,
                                         roll.reason.get(host) or 'failed'), color=C.COLOR_ERROR)
            untouched = [h for h in roll.hosts if h not in roll.done]
            if untouched:
                self._say('not reached (untouched): %s' % ', '.join(untouched), color=C.COLOR_WARN)
        self._finished = []
        self._rolls = {}
