# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bounded, logged re-read-and-retry for compare-and-update writes.

A write that loses a generation race (409 placement.concurrent_update) is
retried by re-running the WHOLE read-compute-write step, so the retry is
computed from fresh state; anything else propagates at once.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import random
import time

from .errors import ConcurrentUpdate

DEFAULT_ATTEMPTS = 5


def retries_warning(retries, resent=0):
    """The warning of a write retried (the task's; the node's record carries it too): ``retries``
    in all, ``resent`` of them a POST /reshaper sent again after it failed or got no answer (a
    re-read showed it was not applied), the others generation conflicts; each said as what it was."""
    resent = min(max(resent or 0, 0), retries)
    parts = []
    if retries - resent:
        parts.append('%d generation conflict(s): the write was recomputed from a fresh read and retried'
                     % (retries - resent))
    if resent:
        parts.append('POST /reshaper sent again %d time(s) after it failed or got no answer (a re-read showed '
                     'it was not applied)' % resent)
    return '%s (see log)' % '; '.join(parts)


def with_conflict_retry(step, attempts=DEFAULT_ATTEMPTS, log=None, what='write', backoff=0.05):
    """Run ``step()`` until it does not raise ConcurrentUpdate, at most ``attempts`` times.

    ``step`` must read what it needs and then write; it is called again from
    scratch after a conflict.  ``log`` is a callable taking one message (the
    module's warning/debug list, a logger's method) and receives one line per
    conflict.  Between attempts it waits ``backoff * attempt``, jittered by +-50%.  Returns ``(result, retries)``; after the last attempt the
    ConcurrentUpdate is raised with the count in its detail.
    """
    if attempts < 1:
        attempts = 1
    for attempt in range(1, attempts + 1):
        try:
            return step(), attempt - 1
        except ConcurrentUpdate as exc:
            if log is not None:
                # a POST /reshaper that failed (a 503) or got no answer and was not applied is re-planned
                # the same way, but it is no generation conflict (settle.py marks it)
                log('%s: %s on attempt %d of %d (%s)%s'
                    % (what, 'POST /reshaper not applied' if getattr(exc, 'resend', False) else 'generation conflict',
                       attempt, attempts, exc.detail,
                       ', re-reading and retrying' if attempt < attempts else ', giving up'))
            if attempt == attempts:
                exc.detail = '%s (gave up after %d attempts)' % (exc.detail, attempts)
                raise
            # jittered: writers that lost the same race (a roll's batch on one shared pool)
            # do not all come back at the same instant
            time.sleep(backoff * attempt * random.uniform(0.5, 1.5))
    raise AssertionError('unreachable')  # pragma: no cover
