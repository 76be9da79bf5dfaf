# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Placement's JSON request schemas at 1.39 (placement/schemas/), checked by hand.

THE place for the request schemas: the embedded store checks every body (and the
query parameters Placement validates) here before it touches the database, with
the 400 ``JSON does not validate: ...`` the real service answers.  No dependency:
jsonschema is not imported.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import re

from ..errors import BadRequest, PlacementError
from . import allocations as _allocations
from . import inventory as _inventory
from . import names as _names
from . import providers as _providers

#: placement.schemas.common.UUID_PATTERN (keys of allocations, consumers, reshaper inventories).
UUID_KEY_PATTERN = re.compile(r'^[0-9a-fA-F-]{36}$')
#: placement.schemas.allocation: a request group suffix in ``mappings``.
GROUP_PATTERN = re.compile(r'^[a-zA-Z0-9_-]{1,64}$')

ALLOCATION_KEYS = ('allocations', 'project_id', 'user_id', 'consumer_generation',
                   'consumer_type', 'mappings')
INVENTORY_RECORD_KEYS = ('resource_provider_generation',) + _inventory.INVENTORY_FIELDS


def bad(message):
    """The 400 Placement answers for a body its schema refuses."""
    return BadRequest('JSON does not validate: %s' % message)


def is_int(value):
    # jsonschema (latest draft, as Placement uses it) counts 3.0 as an integer.
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and value.is_integer()


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_uuid_key(value):
    return isinstance(value, str) and bool(UUID_KEY_PATTERN.search(value))


def _unexpected(keys):
    return ', '.join(repr(k) for k in keys)


# -- resource providers ------------------------------------------------------------------
def check_provider_query(uuid=None, in_tree=None):
    """GET /resource_providers: the ``uuid`` and ``in_tree`` query parameters."""
    if uuid is not None and not _providers.is_uuid_like(uuid):
        raise BadRequest("Invalid query string parameters: '%s' is not a 'uuid'" % (uuid,))
    if in_tree is not None and not _providers.is_uuid_like(in_tree):
        raise BadRequest("Invalid query string parameters: Expected 'in_tree' parameter to be "
                         "a format of uuid. Got: %s" % (in_tree,))


def check_provider_body(name, parent_provider_uuid, uuid=None):
    """POST_RP_SCHEMA_V1_14 (with ``uuid``) / PUT_RP_SCHEMA_V1_14 (name and parent)."""
    text = _providers.name_error(name)
    if text:
        raise bad(text)
    if uuid is not None and not _providers.is_uuid_like(uuid):
        raise bad("%r is not a 'uuid' (uuid)" % (uuid,))
    if parent_provider_uuid is not None and not _providers.is_uuid_like(parent_provider_uuid):
        raise bad("%r is not valid under any of the given schemas (parent_provider_uuid)"
                  % (parent_provider_uuid,))


def check_generation(generation):
    if not is_int(generation):
        raise bad("%r is not of type 'integer' (resource_provider_generation)" % (generation,))


def check_traits_body(traits, generation):
    """SET_TRAITS_FOR_RP_SCHEMA."""
    if not isinstance(traits, (list, tuple)):
        raise bad("%r is not of type 'array' (traits)" % (traits,))
    for trait in traits:
        if not isinstance(trait, str) or not 1 <= len(trait) <= _names.NAME_MAX:
            raise bad('%r is not a valid trait name (traits)' % (trait,))
    check_generation(generation)


def check_aggregates_body(aggregates, generation):
    """PUT_AGGREGATES_SCHEMA_V1_19."""
    if not isinstance(aggregates, (list, tuple)):
        raise bad("%r is not of type 'array' (aggregates)" % (aggregates,))
    for agg in aggregates:
        if not _providers.is_uuid_like(agg):
            raise bad("%r is not a 'uuid' (aggregates)" % (agg,))
    if len(set(aggregates)) != len(aggregates):
        raise bad('%r has non-unique elements (aggregates)' % (list(aggregates),))
    check_generation(generation)


# -- inventories -------------------------------------------------------------------
def _check_int_field(record, key, low, where):
    if key not in record:
        return
    value = record[key]
    if not is_int(value):
        raise bad("%r is not of type 'integer' (%s of %s)" % (value, key, where))
    if value < low:
        raise bad('%r is less than the minimum of %d (%s of %s)' % (value, low, key, where))
    if value > _inventory.INT_MAX:
        raise bad('%r is greater than the maximum of %d (%s of %s)' % (value, _inventory.INT_MAX, key, where))


def check_inventory_record(record, where, generation_required=False):
    """One inventory record (PUT_INVENTORY_RECORD_SCHEMA / BASE_INVENTORY_SCHEMA)."""
    if not isinstance(record, dict):
        raise bad('%r is not of type \'object\' (%s)' % (record, where))
    extra = sorted(set(record) - set(INVENTORY_RECORD_KEYS))
    if extra:
        raise bad('Additional properties are not allowed (%s were unexpected) in %s' % (_unexpected(extra), where))
    if 'total' not in record:
        raise bad("'total' is a required property (%s)" % where)
    if generation_required and 'resource_provider_generation' not in record:
        raise bad("'resource_provider_generation' is a required property (%s)" % where)
    if 'resource_provider_generation' in record:
        check_generation(record['resource_provider_generation'])
    for key, low in _inventory.INTEGER_FIELDS:
        _check_int_field(record, key, low, where)
    if 'allocation_ratio' in record:
        ratio = record['allocation_ratio']
        if not is_number(ratio):
            raise bad("%r is not of type 'number' (allocation_ratio of %s)" % (ratio, where))
        if ratio > _inventory.SQL_SP_FLOAT_MAX:
            raise bad('%r is greater than the maximum of %r (allocation_ratio of %s)'
                      % (ratio, _inventory.SQL_SP_FLOAT_MAX, where))
        if not _inventory.is_finite(ratio):
            # The schema lets NaN and -Infinity through; Placement then fails computing the
            # capacity with a 500 (placement.undefined_code): the same status and code here.
            raise PlacementError('allocation_ratio of %s is %s, not a finite number: Placement fails '
                                 'with "cannot convert float %s to integer"'
                                 % (where, ratio, 'NaN' if math.isnan(ratio) else 'infinity'), status=500)


def check_inventories_body(body, where='inventories'):
    """PUT_INVENTORY_SCHEMA: {"resource_provider_generation": int, "inventories": {RC: record}}."""
    if not isinstance(body, dict):
        raise bad('%r is not of type \'object\' (%s)' % (body, where))
    extra = sorted(set(body) - {'resource_provider_generation', 'inventories'})
    if extra:
        raise bad('Additional properties are not allowed (%s were unexpected) in %s' % (_unexpected(extra), where))
    for key in ('resource_provider_generation', 'inventories'):
        if key not in body:
            raise bad("'%s' is a required property (%s)" % (key, where))
    check_generation(body['resource_provider_generation'])
    invs = body['inventories']
    if not isinstance(invs, dict):
        raise bad("%r is not of type 'object' (inventories)" % (invs,))
    for rc, record in invs.items():
        # Only names matching the class pattern are validated by the schema; any
        # other key fails later as an unknown resource class.
        if _names.matches_name(rc):
            check_inventory_record(record, 'inventory of %s' % rc)


# -- allocations -------------------------------------------------------------------
def _check_resources(resources, where, rp):
    if not isinstance(resources, dict):
        raise bad("%r is not of type 'object' (resources of %s on %s)" % (resources, where, rp))
    if not resources:
        raise bad('{} does not have enough properties (resources of %s on %s)' % (where, rp))
    for rc, amount in resources.items():
        if not _names.matches_name(rc):
            raise bad('Additional properties are not allowed (%r was unexpected) in resources '
                      'of %s on %s' % (rc, where, rp))
        if not is_int(amount):
            raise bad("%r is not of type 'integer' (%s of %s on %s)" % (amount, rc, where, rp))
        if amount < 1:
            raise bad('%r is less than the minimum of 1 (%s of %s on %s)' % (amount, rc, where, rp))


def _check_allocations_map(allocs, where):
    if not isinstance(allocs, dict):
        raise bad("%r is not of type 'object' (allocations of %s)" % (allocs, where))
    for rp, entry in allocs.items():
        if not _is_uuid_key(rp):
            raise bad("Additional properties are not allowed (%r was unexpected) in allocations of %s"
                      % (rp, where))
        if not isinstance(entry, dict):
            raise bad("%r is not of type 'object' (allocation of %s on %s)" % (entry, where, rp))
        bad_keys = sorted(set(entry) - {'resources', 'generation'})
        if bad_keys:
            raise bad('Additional properties are not allowed (%s were unexpected) in allocation '
                      'of %s on %s' % (_unexpected(bad_keys), where, rp))
        if 'resources' not in entry:
            raise bad("'resources' is a required property (allocation of %s on %s)" % (where, rp))
        if 'generation' in entry and not is_int(entry['generation']):
            raise bad("%r is not of type 'integer' (generation of %s)" % (entry['generation'], rp))
        _check_resources(entry['resources'], where, rp)


def check_allocation_request(body, where, require_type=True):
    """ALLOCATION_SCHEMA_V1_38 (PUT) / one consumer of POST_ALLOCATIONS_V1_38.

    ``require_type=False``: the 1.37 form (no ``consumer_type``; an existing
    consumer keeps its type), which the reshaper accepts when no consumer of
    the request names a type.
    """
    if not isinstance(body, dict):
        raise bad("%r is not of type 'object' (%s)" % (body, where))
    extra = sorted(set(body) - set(ALLOCATION_KEYS))
    if extra:
        raise bad('Additional properties are not allowed (%s were unexpected) in %s' % (_unexpected(extra), where))
    required = ('allocations', 'project_id', 'user_id', 'consumer_generation', 'consumer_type')
    for key in required if require_type else required[:-1]:
        if key not in body:
            raise bad("'%s' is a required property (%s)" % (key, where))
    _check_allocations_map(body['allocations'], where)
    for key in ('project_id', 'user_id'):
        value = body[key]
        if not isinstance(value, str):
            raise bad("%r is not of type 'string' (%s of %s)" % (value, key, where))
        if not 1 <= len(value) <= _allocations.ID_MAX:
            raise bad('%s of %s must be 1 to %d characters long' % (key, where, _allocations.ID_MAX))
    gen = body['consumer_generation']
    if gen is not None and not is_int(gen):
        raise bad("%r is not of type 'integer', 'null' (consumer_generation of %s)" % (gen, where))
    ctype = body.get('consumer_type')
    if ctype is not None or require_type:
        if not isinstance(ctype, str):
            raise bad("%r is not of type 'string' (consumer_type of %s)" % (ctype, where))
        if not ctype or not _names.is_valid_name(ctype):
            raise bad("%r does not match '^[A-Z0-9_]+$' (consumer_type of %s)" % (ctype, where))
    if 'mappings' in body:
        mappings = body['mappings']
        if not isinstance(mappings, dict) or not mappings:
            raise bad('mappings of %s must be a non-empty object' % where)
        for group, rps in mappings.items():
            if GROUP_PATTERN.search(group) and (
                    not isinstance(rps, list) or not rps or
                    not all(_providers.is_uuid_like(r) for r in rps)):
                raise bad('mappings[%r] of %s must be a non-empty list of uuids' % (group, where))


def check_post_allocations(body, min_consumers=1, where='allocations', require_type=True):
    """POST_ALLOCATIONS_V1_38: {consumer: allocation request}."""
    if not isinstance(body, dict):
        raise bad("%r is not of type 'object' (%s)" % (body, where))
    if len(body) < min_consumers:
        raise bad('{} does not have enough properties (%s)' % where)
    for consumer, request in body.items():
        if not _is_uuid_key(consumer):
            raise bad('Additional properties are not allowed (%r was unexpected) in %s' % (consumer, where))
        check_allocation_request(request, 'consumer %s' % consumer, require_type=require_type)


# -- reshaper --------------------------------------------------------------------
def check_reshaper_body(body, require_type):
    """POST_RESHAPER_SCHEMA_V1_38 (``require_type`` false: the 1.37 form without consumer types)."""
    if not isinstance(body, dict):
        raise bad("%r is not of type 'object' (reshaper)" % (body,))
    extra = sorted(set(body) - {'inventories', 'allocations'})
    if extra:
        raise bad('Additional properties are not allowed (%s were unexpected) in the reshaper body' % _unexpected(extra))
    for key in ('inventories', 'allocations'):
        if key not in body:
            raise bad("'%s' is a required property (reshaper)" % key)
    inventories = body['inventories']
    if not isinstance(inventories, dict):
        raise bad("%r is not of type 'object' (reshaper inventories)" % (inventories,))
    if not inventories:
        raise bad('{} does not have enough properties (reshaper inventories)')
    for rp, inv_body in inventories.items():
        if not _is_uuid_key(rp):
            raise bad('Additional properties are not allowed (%r was unexpected) in reshaper inventories' % (rp,))
        check_inventories_body(inv_body, 'inventories of %s' % rp)
    check_post_allocations(body['allocations'], min_consumers=0, where='reshaper allocations',
                           require_type=require_type)
