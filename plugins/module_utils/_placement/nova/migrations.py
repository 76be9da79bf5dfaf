# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nova's migration records: which are still in flight.

The lowest floor of :mod:`.compute` and of the node pass's :mod:`..node.inflight`: the
statuses nova gives a migration that is over, and the predicate both read (the compute
client keeps only the records in flight; the node pass defers on them).  Imports nothing.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

#: statuses of nova's migration records that are over (nova's objects.migration and
#: MigrationList.get_in_progress_by_host_and_node): every other status is a move in flight
DONE_STATUSES = frozenset(('confirmed', 'reverted', 'error', 'failed', 'completed', 'cancelled',
                           'done'))


def in_progress(migration):
    """Whether a migration record (os-migrations shape) is still in flight."""
    return str((migration or {}).get('status') or '').lower() not in DONE_STATUSES
