# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Placement's allocation and consumer rules.

THE place for them (placement/objects/allocation.py and consumer.py): the
per-allocation checks with their messages (class on the provider, min_unit,
max_unit, step_size, capacity unless usage does not get worse), the consumer
generation, replace-per-consumer shapes and the consumer type.  The embedded
store, the operations behind the modules, the planner and the verifier call
these functions.

A consumer's allocations: ``{rp_uuid: {"resources": {RC: amount}}}``.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ..errors import BadRequest, CapacityExceeded, ConcurrentUpdate
from . import inventory as _inventory
from . import providers as _providers

DEFAULT_CONSUMER_TYPE = 'INSTANCE'
#: Longest project_id / user_id of a consumer (they must not be empty).
ID_MAX = 255
#: consumer_type is required in allocation bodies from this microversion; below it (1.37)
#: Placement keeps each existing consumer's type.
CONSUMER_TYPE_MICROVERSION = (1, 38)


def consumer_uuid(value):
    """The canonical form of a consumer uuid from a URL, or Placement's 400."""
    if not _providers.is_uuid_like(value):
        raise BadRequest('Malformed consumer_uuid: %s' % (value,))
    return _providers.normalize_uuid(value)


def names_consumer_type(allocations):
    """True when a consumer of a POST /allocations or reshaper ``allocations`` map names a type.

    None does: the request is sent at 1.37, where Placement keeps each consumer's type
    (1.38+ requires one and would relabel nova's untyped consumers).
    """
    return isinstance(allocations, dict) and any(
        isinstance(r, dict) and 'consumer_type' in r for r in allocations.values())


# -- consumer generation ---------------------------------------------------------------
def check_consumer_generation(current, given):
    """``current``: the consumer's generation (None: no such consumer); ``given``: what the write sent."""
    if current is not None:
        if given is None or int(given) != current:
            raise ConcurrentUpdate('consumer generation conflict - expected %s but got %s' % (current, given))
    elif given is not None:
        raise ConcurrentUpdate('consumer generation conflict - expected null but got %s' % (given,))


def next_consumer_generation(generation):
    """The generation a consumer reads after a write that leaves it allocations."""
    return 1 if generation is None else generation + 1


# -- the per-allocation checks ------------------------------------------------------
def unknown_provider_error(rp_uuid):
    return BadRequest("Allocation for resource provider '%s' that does not exist." % rp_uuid)


def no_inventory_error(classes, providers):
    """A class (or classes) the provider(s) have no inventory of."""
    return CapacityExceeded("Unable to allocate inventory: Inventory for '%s' on resource provider "
                            "'%s' invalid." % (', '.join(classes), ', '.join(providers)))


def check_amount(inv, amount, rc, rp_uuid):
    """Per-allocation unit checks, in Placement's order. Returns an error text or None."""
    if amount < inv['min_unit'] or amount > inv['max_unit'] or amount % inv['step_size'] != 0:
        return ('Unable to allocate inventory: Unable to create allocation for \'%s\' on resource '
                'provider \'%s\'. The requested amount would violate inventory constraints.'
                % (rc, rp_uuid))
    return None


def check_allocation(inv, amount, rc, rp_uuid, used_before, used_after):
    """Placement's _check_capacity_exceeded for one allocation of ``amount`` of ``rc`` on ``rp_uuid``.

    ``inv`` is the provider's record of the class (None: it has none), ``used_before`` the
    provider's usage of the class before the write, ``used_after`` after it.
    """
    if inv is None:
        raise no_inventory_error([rc], [rp_uuid])
    text = check_amount(inv, amount, rc, rp_uuid)
    if text:
        raise CapacityExceeded(text)
    if not _inventory.fits(inv, used_before, used_after):
        raise CapacityExceeded(
            "Unable to allocate inventory: Unable to create allocation for '%s' on resource "
            "provider '%s'. The requested amount would exceed the capacity." % (rc, rp_uuid))


# -- shapes ------------------------------------------------------------------------
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
