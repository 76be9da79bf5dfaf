# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Placement's data model and the rules that do not depend on storage.

This is THE place for Placement's rules that are pure arithmetic or naming:
inventory fields and defaults, the capacity formula, the per-allocation checks
(min_unit, max_unit, step_size, "fits unless usage does not get worse"),
resource class and trait name validation, and the consumer-generation rule.
The embedded store, the planner and the verifier all use these functions so a
rule is written once.

Shapes follow Placement's JSON at microversion 1.39:

* inventory record: ``{"total", "reserved", "min_unit", "max_unit",
  "step_size", "allocation_ratio"}``
* inventories of a provider: ``{RC: inventory record}``
* a consumer's allocations: ``{rp_uuid: {"resources": {RC: amount}}}``

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import re
import uuid as _uuid

from .errors import BadInput, BadRequest, type_name

MIN_MICROVERSION = (1, 30)   # POST /reshaper
MAX_MICROVERSION = (1, 39)   # the newest this core knows (Placement 16.0.0)

INT_MAX = 2147483647

INVENTORY_FIELDS = ('total', 'reserved', 'min_unit', 'max_unit', 'step_size', 'allocation_ratio')
INVENTORY_DEFAULTS = {
    'reserved': 0,
    'min_unit': 1,
    'max_unit': INT_MAX,
    'step_size': 1,
    'allocation_ratio': 1.0,
}

CUSTOM_PREFIX = 'CUSTOM_'
_CUSTOM_RE = re.compile(r'^CUSTOM_[A-Z0-9_]+$')
# Placement's schema for a resource class / trait name in a request.
_NAME_RE = re.compile(r'^[A-Z0-9_]+$')

DEFAULT_CONSUMER_TYPE = 'INSTANCE'
_CONSUMER_TYPE_RE = re.compile(r'^[A-Z0-9_]+$')


def version_tuple(text):
    """'1.39' -> (1, 39)."""
    major, minor = str(text).split('.', 1)
    return int(major), int(minor)


def version_str(ver):
    return '%d.%d' % tuple(ver)


def normalize_uuid(value):
    """Return the canonical (lower-case, dashed) form of a UUID or raise BadRequest."""
    try:
        return str(_uuid.UUID(str(value)))
    except (ValueError, TypeError, AttributeError):
        raise BadRequest("'%s' is not a 'uuid'" % (value,))


def is_uuid_like(value):
    try:
        _uuid.UUID(str(value))
        return True
    except (ValueError, TypeError, AttributeError):
        return False


def is_custom(name):
    return isinstance(name, str) and name.startswith(CUSTOM_PREFIX)


def validate_custom_name(name, kind='resource class'):
    """A new resource class or trait must be CUSTOM_ followed by [A-Z0-9_]+."""
    if not isinstance(name, str) or not _CUSTOM_RE.match(name):
        raise BadRequest("'%s' is not a valid custom %s name: it must match "
                         "^CUSTOM_[A-Z0-9_]+$" % (name, kind))
    return name


def validate_name(name, kind='resource class'):
    if not isinstance(name, str) or not _NAME_RE.match(name) or len(name) > 255:
        raise BadRequest("'%s' is not a valid %s name: it must match ^[A-Z0-9_]+$"
                         % (name, kind))
    return name


def validate_consumer_type(value):
    if not isinstance(value, str) or not _CONSUMER_TYPE_RE.match(value) or len(value) > 255:
        raise BadRequest("'%s' is not a valid consumer_type: it must match ^[A-Z0-9_]+$" % (value,))
    return value


def normalize_inventory(record, rc='?'):
    """Fill Placement's defaults into one inventory record and check the fields.

    Raises BadRequest with Placement-like wording for values the inventory
    endpoints reject (total missing or out of 1..INT_MAX, min_unit/max_unit/
    step_size out of range, allocation_ratio not a number or above the SQL
    float maximum, unknown fields).  Like Placement's schema, an
    ``allocation_ratio`` of 0 (or below) is NOT refused here: the inventory
    endpoints refuse a negative capacity (:func:`check_reserved`), the reshaper
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
    for key, low in (('total', 1), ('reserved', 0), ('min_unit', 1), ('max_unit', 1), ('step_size', 1)):
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
    if ratio > 3.40282e+38:
        raise BadRequest('allocation_ratio of %s must be at most 3.40282e+38, got %s' % (rc, ratio))
    inv['allocation_ratio'] = float(ratio)
    return inv


def check_reserved(inv, rc='?'):
    """The inventory endpoints refuse a NEGATIVE capacity (1.26+).

    Placement's rule (handlers/inventory.py ``_validate_inventory_capacity``) is
    ``capacity(inv) < 0``, not ``reserved > total``: ``reserved == total`` is
    fine, and ``reserved = total + 1`` with ``allocation_ratio`` 0.5 gives
    ``int(-0.5) == 0`` and is accepted too.  The reshaper checks neither.
    """
    if capacity(inv) < 0:
        raise BadRequest('Unable to update inventory for resource provider: %s' % (
            negative_ratio_text(inv, rc) or 'reserved (%d) of %s is greater than total (%d)'
            % (inv['reserved'], rc, inv['total'])))


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


def is_finite(value):
    """Not NaN and not +/- infinity (any int is finite)."""
    if isinstance(value, float):
        return math.isfinite(value)
    return True


def capacity(inv):
    """Placement's capacity: int((total - reserved) * allocation_ratio)."""
    return int((inv['total'] - inv['reserved']) * inv['allocation_ratio'])


def check_amount(inv, amount, rc, rp_uuid):
    """Per-allocation unit checks, in Placement's order. Returns an error text or None."""
    if amount < inv['min_unit']:
        return ('Unable to allocate inventory: Unable to create allocation for \'%s\' on resource '
                'provider \'%s\'. The requested amount would violate inventory constraints.'
                % (rc, rp_uuid))
    if amount > inv['max_unit']:
        return ('Unable to allocate inventory: Unable to create allocation for \'%s\' on resource '
                'provider \'%s\'. The requested amount would violate inventory constraints.'
                % (rc, rp_uuid))
    if amount % inv['step_size'] != 0:
        return ('Unable to allocate inventory: Unable to create allocation for \'%s\' on resource '
                'provider \'%s\'. The requested amount would violate inventory constraints.'
                % (rc, rp_uuid))
    return None


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


def consumer_totals(allocations):
    """Sum a consumer's allocations per class: {rp: {resources: {RC: n}}} -> {RC: n}."""
    totals = {}
    for entry in allocations.values():
        for rc, amount in entry.get('resources', {}).items():
            totals[rc] = totals.get(rc, 0) + amount
    return totals


def strip_allocations(allocations):
    """Reduce a GET /allocations/{c} 'allocations' map to the PUT shape (drop generations)."""
    return {rp: {'resources': dict(entry.get('resources', {}))}
            for rp, entry in allocations.items() if entry.get('resources')}


# ---------------------------------------------------------------------------
# shapes of what the collection is given (module options, device reports, snapshots, records)

_KINDS = {
    'mapping': (lambda v: isinstance(v, dict), 'a mapping'),
    'list': (lambda v: isinstance(v, list), 'a list'),
    'text': (lambda v: isinstance(v, str), 'a string'),
    'int': (lambda v: isinstance(v, int) and not isinstance(v, bool), 'an integer'),
    'number': (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and is_finite(v), 'a finite number'),
    'bool': (lambda v: isinstance(v, bool), 'true or false'),
    'scalar': (lambda v: isinstance(v, (str, int, float)) and not isinstance(v, bool), 'a string or a number'),
}


def shape_error(field, expected, value):
    """BadInput ``<field> must be <expected>, got <type>`` (the field as a path: ``devices.gpus[0].address``)."""
    return BadInput('%s must be %s, got %s' % (field, expected, type_name(value)), field=field)


def expect(value, kind, field, expected=None, optional=False):
    """``value`` when it is of ``kind`` (see :data:`_KINDS`; None too when ``optional``), else BadInput."""
    if value is None and optional:
        return value
    check, text = _KINDS[kind]
    if not check(value):
        raise shape_error(field, expected or text, value)
    return value


def expect_fields(record, field, kinds, expected='a mapping'):
    """Check a mapping's fields: ``kinds`` is ``{key: kind}``, a kind ending in ``?`` may be
    absent or null, one ending in ``!`` is required; other keys are not checked."""
    expect(record, 'mapping', field, expected)
    for key, kind in kinds.items():
        optional = not kind.endswith('!')
        kind = kind.rstrip('!?')
        if key not in record:
            if not optional:
                raise BadInput('%s.%s is required' % (field, key), field='%s.%s' % (field, key))
            continue
        expect(record[key], kind, '%s.%s' % (field, key), optional=optional)
    return record


def expect_list_of(value, kind, field, expected, item_expected=None, optional=True):
    """A list whose every item is of ``kind`` (``[i]`` in the field named on failure)."""
    if value is None and optional:
        return []
    expect(value, 'list', field, expected)
    for index, item in enumerate(value):
        expect(item, kind, '%s[%d]' % (field, index), item_expected)
    return value
