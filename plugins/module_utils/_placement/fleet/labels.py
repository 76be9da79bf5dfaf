# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the fleet report says things: the statuses and their labels and colours, times, durations,
amounts, the head of a long reason, an error in one line, and the error the report raises.

The bottom of the report's modules: everything else of ``fleet/`` that words or formats an outcome
(the report's data, its commands, its pictures, the progress callback) reads it from here.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ..errors import REPORT, BadInput, PlacementError

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


class ReportError(PlacementError):
    """The report cannot be written as asked (e.g. ``dest`` holds another run's records)."""

    status = 0
    default_code = REPORT
    default_title = 'Report Error'


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


def short_uuid(uuid):
    """The first 8 characters of a uuid: how a provider or consumer without a name is shown."""
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
# errors in words

def error_text(exc):
    """One line for an operator: a Placement error with its status, title, code and detail (only
    its detail when it has no HTTP status), anything else with its type."""
    if isinstance(exc, PlacementError):
        return exc.detail if not exc.status else str(exc)
    return '%s: %s' % (type(exc).__name__, exc)


def shape_text(exc):
    """A shape error names its field already; anything else also says what it was."""
    if isinstance(exc, BadInput):
        return exc.detail
    return '%s: %s' % (type(exc).__name__, exc)
