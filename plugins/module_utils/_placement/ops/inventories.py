# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The inventory operations (the inventory module): ensure a provider's inventories, and the
warnings of values Placement accepts but an operator should see.  The steps: :mod:`..resources`.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ..errors import BadRequest
from ..retry import DEFAULT_ATTEMPTS
from ..rules import inventory as inventory_rules
from ..rules import names as name_rules
from .common import normalized_inventories, retried
from .providers import resolve_provider


# -- inventory ---------------------------------------------------------------------
def _missing_classes(backend, names):
    """Split requested resource classes that do not exist into (custom, standard)."""
    if not names:
        return [], []
    known = set(backend.list_resource_classes())
    missing = [n for n in names if n not in known]
    custom = sorted(n for n in missing if name_rules.is_custom(n))
    for rc in custom:
        name_rules.validate_custom_name(rc, 'resource class')
    standard = sorted(n for n in missing if not name_rules.is_custom(n))
    return custom, standard


def ensure_inventory(backend, provider, inventories=None, remove=None, exclusive=False,
                     check_mode=False, attempts=DEFAULT_ATTEMPTS, log=None):
    """Set (or remove) inventory records on one provider (name or uuid).

    ``inventories`` maps a resource class to a record (fields omitted take
    Placement's defaults); they are merged into the current set, or replace it
    when ``exclusive``.  ``remove`` lists classes to drop.  Custom classes that do
    not exist are created.  Removing a class still allocated fails with 409
    placement.inventory.inuse before any write.

    Returns ``{"changed", "resource_provider" ({uuid, name}), "inventories",
    "resource_provider_generation", "usages", "created_resource_classes",
    "diff", "retries", "warnings"}``; ``warnings`` (:func:`inventory_warnings`)
    names what Placement accepts but no operator means.
    """
    inventories = dict(inventories or {})
    remove = list(remove or [])
    for rc in list(inventories) + remove:
        name_rules.validate_name(rc, 'resource class')
    both = sorted(set(inventories) & set(remove))
    if both:
        raise BadRequest('Resource class(es) both set and removed: %s' % ', '.join(both))
    wanted = {}
    for rc, rec in inventories.items():
        inv = inventory_rules.normalize_inventory(rec, rc)
        inventory_rules.check_capacity(inv, rc)
        wanted[rc] = inv

    def step():
        prov = resolve_provider(backend, provider)
        rp_uuid = prov['uuid']
        read = backend.get_inventories(rp_uuid)
        generation = read['resource_provider_generation']
        have = normalized_inventories(read['inventories'])
        usages = dict(backend.get_usages(rp_uuid)['usages'])
        if exclusive:
            new = dict(wanted)
        else:
            new = dict(have)
            new.update(wanted)
        for rc in remove:
            new.pop(rc, None)
        create, unknown = _missing_classes(backend, sorted(rc for rc in wanted if rc not in have))
        if unknown:
            raise inventory_rules.unknown_class_error(rp_uuid, unknown)
        inventory_rules.check_removal(have, new, usages, rp_uuid)
        changed = new != have
        after_gen = generation + 1 if changed else generation
        after_usages = dict((rc, usages.get(rc, 0)) for rc in new)
        result = {
            'changed': changed,
            'warnings': inventory_warnings(prov['name'], wanted, usages),
            'resource_provider': {'uuid': rp_uuid, 'name': prov['name']},
            'inventories': new,
            'resource_provider_generation': after_gen,
            'usages': after_usages,
            'created_resource_classes': create,
            'diff': {
                'before': {'resource_provider_generation': generation, 'inventories': have},
                'after': {'resource_provider_generation': after_gen, 'inventories': new},
            },
        }
        if not changed or check_mode:
            return result
        for rc in create:
            if backend.ensure_resource_class(rc) and log is not None:
                log('created custom resource class %s' % rc)
        backend.set_inventories(rp_uuid, generation, new)
        reread = backend.get_inventories(rp_uuid)
        result['inventories'] = normalized_inventories(reread['inventories'])
        result['resource_provider_generation'] = reread['resource_provider_generation']
        result['usages'] = dict(backend.get_usages(rp_uuid)['usages'])
        result['diff']['after'] = {
            'resource_provider_generation': reread['resource_provider_generation'],
            'inventories': result['inventories'],
        }
        return result

    return retried(step, attempts, log, 'inventory of %s' % provider)


def inventory_warnings(provider_name, records, usages):
    """What Placement accepts silently in ``records`` ({RC: normalized record}) but breaks allocations.

    ``min_unit > max_unit`` (no amount satisfies both: every allocation of the class is
    refused), a capacity below the current usage (allowed so a node can shrink; no new
    allocation fits until usage drops) and an ``allocation_ratio`` of 0 (capacity 0).
    """
    out = []
    for rc in sorted(records):
        inv = records[rc]
        where = '%s on %s' % (rc, provider_name)
        if inv['min_unit'] > inv['max_unit']:
            out.append('inventory of %s: min_unit %d is greater than max_unit %d; Placement accepts it, but no '
                       'amount satisfies both, so every new allocation of %s will be refused'
                       % (where, inv['min_unit'], inv['max_unit'], rc))
        if inv['allocation_ratio'] == 0:
            out.append('inventory of %s: allocation_ratio 0 gives a capacity of 0; Placement accepts it, '
                       'but nothing more can be allocated' % where)
        used = usages.get(rc, 0)
        cap = inventory_rules.capacity(inv)
        if used > cap:
            out.append('inventory of %s: capacity %d (int((total %d - reserved %d) * allocation_ratio %s)) is '
                       'below the current usage %d; Placement accepts it, the existing allocations stay, but no '
                       'new allocation fits until the usage drops below the capacity'
                       % (where, cap, inv['total'], inv['reserved'], inv['allocation_ratio'], used))
    return out
