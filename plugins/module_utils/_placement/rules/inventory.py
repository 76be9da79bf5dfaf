# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Placement's inventory rules: fields, defaults, capacity, the checks of the inventory endpoints.

THE place for them (placement/objects/inventory.py, handlers/inventory.py): the
embedded store, the operations behind the modules, the planner and the verifier
call these functions.

An inventory record is ``{"total", "reserved", "min_unit", "max_unit", "step_size",
"allocation_ratio"}``; the inventories of a provider ``{RC: record}``.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math

from ..errors import BadRequest, InventoryInUse

INT_MAX = 2147483647
#: placement.db.constants.SQL_SP_FLOAT_MAX: the largest allocation_ratio.
SQL_SP_FLOAT_MAX = 3.40282e+38

INVENTORY_FIELDS = ('total', 'reserved', 'min_unit', 'max_unit', 'step_size', 'allocation_ratio')
INVENTORY_DEFAULTS = {
    'reserved': 0,
    'min_unit': 1,
    'max_unit': INT_MAX,
    'step_size': 1,
    'allocation_ratio': 1.0,
}
#: The integer fields and the lowest value each may take (total .. step_size).
INTEGER_FIELDS = (('total', 1), ('reserved', 0), ('min_unit', 1), ('max_unit', 1), ('step_size', 1))


def is_finite(value):
    """Not NaN and not +/- infinity (any int is finite)."""
    if isinstance(value, float):
        return math.isfinite(value)
    return True


def with_defaults(record):
    """Placement's INVENTORY_DEFAULTS filled into a record that passed the schema (no range checks)."""
    inv = dict(INVENTORY_DEFAULTS)
    for key in INVENTORY_FIELDS:
        if key in record:
            inv[key] = record[key]
    for key, _low in INTEGER_FIELDS:
        inv[key] = int(inv[key])
    inv['allocation_ratio'] = float(inv['allocation_ratio'])
    return inv


def normalize_inventory(record, rc='?'):
    """Fill Placement's defaults into one inventory record and check the fields.

    Raises BadRequest with Placement-like wording for values the inventory
    endpoints reject (total missing or out of 1..INT_MAX, min_unit/max_unit/
    step_size out of range, allocation_ratio not a number or above the SQL
    float maximum, unknown fields).  Like Placement's schema, an
    ``allocation_ratio`` of 0 (or below) is NOT refused here: the inventory
    endpoints refuse a negative capacity (:func:`check_capacity`), the reshaper
    refuses neither.
    """
    if not isinstance(record, dict):
        raise BadRequest('inventory for %s must be an object' % rc)
    unknown = set(record) - set(INVENTORY_FIELDS) - {'resource_provider_generation'}
    if unknown:
        raise BadRequest('Additional properties are not allowed (%s were unexpected) in inventory for %s'
                         % (', '.join(repr(u) for u in sorted(unknown)), rc))
    if 'total' not in record:
        raise BadRequest("'total' is a required property in inventory for %s" % rc)
    inv = dict(INVENTORY_DEFAULTS)
    for key in INVENTORY_FIELDS:
        if key in record and record[key] is not None:
            inv[key] = record[key]
    for key, low in INTEGER_FIELDS:
        val = inv[key]
        if isinstance(val, bool) or not isinstance(val, int):
            raise BadRequest("%r is not of type 'integer' (%s of %s)" % (val, key, rc))
        if val < low or val > INT_MAX:
            raise BadRequest('%s of %s must be between %d and %d, got %d' % (key, rc, low, INT_MAX, val))
    ratio = inv['allocation_ratio']
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)):
        raise BadRequest("%r is not of type 'number' (allocation_ratio of %s)" % (ratio, rc))
    if not is_finite(ratio):
        # Placement's schema lets NaN and -Infinity through and then fails with a 500
        # ("cannot convert float NaN to integer"): refused here, naming the field.
        raise BadRequest('allocation_ratio of %s must be a finite number, got %s' % (rc, ratio))
    if ratio > SQL_SP_FLOAT_MAX:
        raise BadRequest('allocation_ratio of %s must be at most 3.40282e+38, got %s' % (rc, ratio))
    inv['allocation_ratio'] = float(ratio)
    return inv


def capacity(inv):
    """Placement's capacity: int((total - reserved) * allocation_ratio)."""
    return int((inv['total'] - inv['reserved']) * inv['allocation_ratio'])


def fits(inv, used_before, used_after):
    """Capacity rule: the new usage must fit, unless usage does not get worse.

    ``used_before`` is the provider's usage of the class before the write,
    ``used_after`` after it.  Placement lets a write through when the new usage
    exceeds capacity but is not greater than the usage it already had
    (overcommitted inventory lowered below usage must not block a consumer
    from shrinking or moving away).
    """
    if used_after <= capacity(inv):
        return True
    return used_after <= used_before


def negative_ratio_text(inv, rc='?'):
    """When a negative ``allocation_ratio`` is what makes the capacity negative, say so (else None).

    Placement says "The reserved value is greater than total." for every negative
    capacity, even when ``reserved`` is 0 and the ratio is the cause.
    """
    if capacity(inv) < 0 and inv['allocation_ratio'] < 0 and inv['total'] > inv['reserved']:
        return ('allocation_ratio %s of %s is negative, which makes the capacity int((total - reserved) * '
                'allocation_ratio) = %d; allocation_ratio must be 0 or more'
                % (inv['allocation_ratio'], rc, capacity(inv)))
    return None


def check_capacity(inv, rc='?', uuid=None):
    """The inventory endpoints refuse a NEGATIVE capacity (1.26+).

    Placement's rule (handlers/inventory.py ``_validate_inventory_capacity``) is
    ``capacity(inv) < 0``, not ``reserved > total``: ``reserved == total`` is
    fine, and ``reserved = total + 1`` with ``allocation_ratio`` 0.5 gives
    ``int(-0.5) == 0`` and is accepted too.  The reshaper checks neither.

    With the provider's ``uuid``, the 400 has Placement's own words (the store);
    without it, the words name the fields (a request checked before any read).
    """
    if capacity(inv) >= 0:
        return
    why = negative_ratio_text(inv, rc)
    if uuid is not None:
        # Placement's 400 (placement.undefined_code) says "The reserved value is greater than
        # total." for any negative capacity; the detail here names the field at fault.
        raise BadRequest('Unable to update inventory for resource provider %s: Invalid inventory '
                         "for '%s' on resource provider '%s'. %s"
                         % (uuid, rc, uuid, why or 'The reserved value is greater than total.'))
    raise BadRequest('Unable to update inventory for resource provider: %s' % (
        why or 'reserved (%d) of %s is greater than total (%d)' % (inv['reserved'], rc, inv['total'])))


def in_use_text(classes, rp_uuid):
    """Placement's words for an allocated class that a write would remove."""
    return "Inventory for '%s' on resource provider '%s' in use." % (', '.join(classes), rp_uuid)


def check_removal(have, new, usages, rp_uuid):
    """PUT of the whole set (and DELETE of all): a class still allocated cannot go (409 inventory.inuse)."""
    in_use = sorted(rc for rc in have if rc not in new and usages.get(rc, 0) > 0)
    if in_use:
        raise InventoryInUse('update conflict: ' + in_use_text(in_use, rp_uuid))


def unknown_class_error(rp_uuid, classes):
    """An inventory naming resource classes that do not exist (400)."""
    return BadRequest('Unknown resource class in inventory for resource provider %s: '
                      'No such resource class %s.' % (rp_uuid, ', '.join(classes)))
