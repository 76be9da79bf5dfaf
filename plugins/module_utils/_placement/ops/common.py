# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the single-resource operations (:mod:`..resources`: providers, inventories, allocations) share.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ..rules import inventory as inventory_rules
from ..rules import microversions
from ..retry import with_conflict_retry


def microversion_of(backend):
    """The backend's microversion as a tuple (the newest this core speaks when it cannot say)."""
    try:
        return microversions.version_tuple(backend.microversion)
    except (ValueError, TypeError, AttributeError):
        return microversions.MAX_MICROVERSION


def retried(step, attempts, log, what):
    """``step()`` under the bounded conflict retry; its result with ``retries`` added."""
    result, retries = with_conflict_retry(step, attempts=attempts, log=log, what=what)
    result['retries'] = retries
    return result


def normalized_inventories(invs):
    """``{RC: record}`` with every record's defaults filled in (rules/inventory.py)."""
    return dict((rc, inventory_rules.normalize_inventory(rec, rc)) for rc, rec in invs.items())
