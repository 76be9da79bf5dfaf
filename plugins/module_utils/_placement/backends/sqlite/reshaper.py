# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""POST /reshaper in the embedded store (placement/objects/reshaper.py): ONE transaction
giving the listed providers the union of their old and new inventory, replacing the
listed consumers' allocations, then setting the providers' new inventory.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections

from ...errors import BadRequest, ConcurrentUpdate, InventoryInUse, RESOURCE_PROVIDER_NOT_FOUND
from ...rules import allocations as allocation_rules
from ...rules import inventory as inventory_rules
from ...rules import schemas
from . import allocations, inventories, providers
from .store import CommitThenRaise


def _reshape(conn, body):
    # 1. providers and their generations, in request order
    targets = collections.OrderedDict()
    for rp, inv_body in body['inventories'].items():
        row = providers.get(conn, rp)
        if row is None:
            raise BadRequest('Resource provider %s in inventories not found: No resource provider '
                             'with uuid %s found' % (rp, rp), code=RESOURCE_PROVIDER_NOT_FOUND)
        if inv_body['resource_provider_generation'] != row['generation']:
            raise ConcurrentUpdate('resource provider generation conflict for provider %s: actual: %s, '
                                   'given: %s' % (rp, row['generation'], inv_body['resource_provider_generation']))
        targets[rp] = collections.OrderedDict(
            (rc, inventory_rules.with_defaults(record)) for rc, record in inv_body['inventories'].items())
    # 2. consumers (generation checks, auto-creation), 3. the allocation list
    data = collections.OrderedDict(body['allocations'].items())
    consumers = allocations.ensure_consumers(conn, data)
    try:
        allocs = allocations.allocation_list(conn, data)
    except BadRequest as exc:
        raise CommitThenRaise(exc)
    # 4. one transaction: interim union inventory, allocations, final inventory
    try:
        fresh = {}
        for rp, wanted in targets.items():
            row = providers.get(conn, rp)
            if wanted:
                union = inventories.records(conn, row['id'])
                union.update(wanted)
                inventories.replace(conn, row, union)
            fresh[rp] = providers.get(conn, rp)
        allocations.replace_all(conn, data, consumers, allocs, provider_rows=fresh)
        for rp, wanted in targets.items():
            inventories.replace(conn, providers.get(conn, rp), wanted)
    except inventories.RcNotFound as exc:
        raise BadRequest('malformed reshaper data: %s' % exc)
    except InventoryInUse as exc:
        raise InventoryInUse('update conflict: %s' % exc.detail)
    except ConcurrentUpdate as exc:
        raise ConcurrentUpdate('update conflict: %s' % exc.detail)


class ReshaperMixin(object):
    """POST /reshaper."""

    def reshape(self, body):
        # Placement at 1.37 (what RestBackend sends when no consumer names a type) keeps each
        # consumer's type; at 1.38+ every consumer must name one.
        typed = allocation_rules.names_consumer_type(body.get('allocations') if isinstance(body, dict) else None)
        schemas.check_reshaper_body(body, require_type=typed)
        with self.writer('reshape') as conn:
            _reshape(conn, body)
        return {'status': 204, 'request_id': None}
