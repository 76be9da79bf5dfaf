#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: inventory
short_description: Set or remove the inventory of an OpenStack Placement resource provider
version_added: 1.0.0
author: placement.upgrade contributors (@placement-upgrade)
description:
  - Sets one resource class (O(resource_class)) or several (O(inventories)) on a resource
    provider, with every field of a Placement inventory record. A field that is not given
    takes Placement's default, as Placement's own C(PUT) does.
  - The classes given are merged into the provider's current inventory, or replace it
    entirely with O(exclusive=true).
  - Custom resource classes (C(CUSTOM_*)) that do not exist yet are created; a standard class
    must already be known to Placement.
  - The whole inventory is written in one compare-and-update C(PUT) naming the generation
    that was read. On a generation conflict the desired inventory is recomputed from a fresh
    read and sent again, at most O(conflict_retries) times; the retries are reported in
    RV(retries) and RV(log).
  - Nothing is sent when the inventory already matches (Placement would bump the generation
    for an identical C(PUT)), so a second identical run reports no change.
  - Bad values (total out of 1..2147483647, reserved greater than total, an unknown standard
    class), and removing a class that is still allocated (Placement's
    C(placement.inventory.inuse)), fail before anything is written.
  - An O(allocation_ratio) that is negative, NaN or infinite fails before anything is written, with
    a message naming O(allocation_ratio) (Placement refuses a negative capacity saying the reserved
    value is greater than total, and answers NaN with a server error).
  - What Placement accepts but no allocation can use is written as asked, with a warning naming the
    provider, the class and the values - O(min_unit) greater than O(max_unit), a capacity below the
    class's current usage, an O(allocation_ratio) of 0.
options:
  resource_provider:
    description:
      - Name or UUID of the provider (a value that looks like a UUID is taken as a UUID).
    type: str
    required: true
  state:
    description:
      - V(present) sets the classes given, V(absent) removes them.
    type: str
    choices: [present, absent]
    default: present
  resource_class:
    description:
      - The one resource class to set or remove, for example V(VGPU) or V(CUSTOM_NVIDIA_222).
      - Mutually exclusive with O(inventories).
    type: str
  total:
    description:
      - Total amount of O(resource_class). Required with O(resource_class) when O(state=present).
    type: int
  reserved:
    description:
      - Amount of O(resource_class) reserved for the host, not allocatable.
    type: int
    default: 0
  min_unit:
    description:
      - Smallest amount of O(resource_class) one allocation may ask for.
    type: int
    default: 1
  max_unit:
    description:
      - Largest amount of O(resource_class) one allocation may ask for.
    type: int
    default: 2147483647
  step_size:
    description:
      - An allocation of O(resource_class) must be a multiple of this.
    type: int
    default: 1
  allocation_ratio:
    description:
      - Overcommit ratio of O(resource_class); the capacity is (total - reserved) times the ratio, rounded down.
    type: float
    default: 1.0
  inventories:
    description:
      - Several classes at once. With O(state=absent) only O(inventories[].resource_class) is used.
      - With O(exclusive=true) and O(state=present), V([]) removes every class.
      - Mutually exclusive with O(resource_class).
    type: list
    elements: dict
    suboptions:
      resource_class:
        description: The resource class.
        type: str
        required: true
      total:
        description: Total amount. Required when O(state=present).
        type: int
      reserved:
        description: Amount reserved for the host.
        type: int
        default: 0
      min_unit:
        description: Smallest amount one allocation may ask for.
        type: int
        default: 1
      max_unit:
        description: Largest amount one allocation may ask for.
        type: int
        default: 2147483647
      step_size:
        description: An allocation must be a multiple of this.
        type: int
        default: 1
      allocation_ratio:
        description: Overcommit ratio.
        type: float
        default: 1.0
  exclusive:
    description:
      - With O(state=present), make the classes given the provider's complete inventory;
        classes not given are removed (which fails, changing nothing, if one is allocated).
    type: bool
    default: false
attributes:
  check_mode:
    details:
      - Returns the predicted inventory and provider generation, and fails exactly where a
        real run would.
extends_documentation_fragment:
  - placement.upgrade.auth
  - placement.upgrade.attributes
  - placement.upgrade.attributes.PLACEMENT
  - placement.upgrade.attributes.WRITES
seealso:
  - module: placement.upgrade.resource_provider
  - module: placement.upgrade.resource_provider_info
'''

EXAMPLES = r'''
- name: Eight vGPUs on a physical GPU provider
  placement.upgrade.inventory:
    cloud: overcloud
    resource_provider: compute-01_pci_0000_84_00_0
    resource_class: VGPU
    total: 8
    max_unit: 8

- name: The compute node's whole inventory, nothing else
  placement.upgrade.inventory:
    cloud: overcloud
    resource_provider: compute-01
    exclusive: true
    inventories:
      - resource_class: VCPU
        total: 64
        allocation_ratio: 4.0
      - resource_class: MEMORY_MB
        total: 515072
        reserved: 4096
      - resource_class: CUSTOM_NVIDIA_222
        total: 4

- name: Remove VGPU from the root provider (fails while an instance holds a vGPU there)
  placement.upgrade.inventory:
    cloud: overcloud
    resource_provider: compute-01
    resource_class: VGPU
    state: absent
'''

RETURN = r'''
resource_provider:
  description: The provider the inventory belongs to.
  returned: success
  type: dict
  contains:
    uuid:
      description: UUID of the provider.
      type: str
      returned: success
      sample: 8d6bb6c4-4d9f-4ba9-9d60-3d1c17a3ad7f
    name:
      description: Name of the provider.
      type: str
      returned: success
      sample: compute-01
inventories:
  description:
    - The provider's complete inventory after the task (predicted in check mode), by resource class.
  returned: success
  type: dict
  sample: {VGPU: {total: 8, reserved: 0, min_unit: 1, max_unit: 8, step_size: 1, allocation_ratio: 1.0}}
resource_provider_generation:
  description: The provider generation after the task (predicted in check mode).
  returned: success
  type: int
  sample: 4
usages:
  description: Amount used of each class of the inventory.
  returned: success
  type: dict
  sample: {VGPU: 2}
created_resource_classes:
  description: Custom resource classes that did not exist and were created (would be, in check mode).
  returned: success
  type: list
  elements: str
  sample: [CUSTOM_NVIDIA_222]
retries:
  description: How many times the write was recomputed after a generation conflict.
  returned: success
  type: int
  sample: 0
log:
  description: Messages about conflicts retried and classes created on the way.
  returned: always
  type: list
  elements: str
  sample: ["inventory of compute-01: generation conflict on attempt 1 of 6 (...), re-reading and retrying"]
error:
  description: Placement's error (C(status), C(code), C(title), C(detail), C(request_id)) when the task failed on one.
  returned: failure
  type: dict
  sample: {status: 409, code: placement.inventory.inuse, title: Conflict,
           detail: "update conflict: Inventory for 'VGPU' on resource provider '8d6b...' in use.",
           request_id: req-5c1b0c52-7b9c-4c8e-9b65-0c5c4d1f4e2a}
'''

from ansible_collections.placement.upgrade.plugins.module_utils.common import ModuleSpec, conflict_attempts
from ansible_collections.placement.upgrade.plugins.module_utils._placement import resources as ops
from ansible_collections.placement.upgrade.plugins.module_utils._placement.rules import inventory as inventory_rules
from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import BadInput

FIELDS = ('total', 'reserved', 'min_unit', 'max_unit', 'step_size', 'allocation_ratio')


def _record_spec(with_class_required):
    spec = dict(
        total=dict(type='int'),
        reserved=dict(type='int', default=inventory_rules.INVENTORY_DEFAULTS['reserved']),
        min_unit=dict(type='int', default=inventory_rules.INVENTORY_DEFAULTS['min_unit']),
        max_unit=dict(type='int', default=inventory_rules.INVENTORY_DEFAULTS['max_unit']),
        step_size=dict(type='int', default=inventory_rules.INVENTORY_DEFAULTS['step_size']),
        allocation_ratio=dict(type='float', default=inventory_rules.INVENTORY_DEFAULTS['allocation_ratio']),
    )
    spec['resource_class'] = dict(type='str', required=with_class_required)
    return spec


def _run(module, backend, log):
    params = module.params
    present = params['state'] == 'present'
    if params['inventories'] is not None:
        entries = params['inventories']
    else:
        entries = [dict((key, params[key]) for key in FIELDS + ('resource_class',))]
    if not present and params['exclusive']:
        module.fail_json(msg='exclusive=true applies to state=present only')
    records, remove = {}, []
    for entry in entries:
        rc = entry['resource_class']
        if rc in records or rc in remove:
            module.fail_json(msg='resource class %s is given more than once' % rc)
        if not present:
            remove.append(rc)
            continue
        if entry['total'] is None:
            module.fail_json(msg='total is required to set inventory of %s' % rc)
        records[rc] = dict((key, entry[key]) for key in FIELDS)
        _check_ratio(params['resource_provider'], rc, records[rc]['allocation_ratio'])
    result = ops.ensure_inventory(backend, params['resource_provider'], inventories=records,
                                  remove=remove, exclusive=params['exclusive'],
                                  check_mode=module.check_mode,
                                  attempts=conflict_attempts(params), log=log)
    for warning in result.pop('warnings', None) or []:
        module.warn(warning)
    return result


def _check_ratio(provider, rc, ratio):
    """A ratio Placement cannot take gets a message about the ratio (Placement's says "reserved")."""
    if not inventory_rules.is_finite(ratio):
        raise BadInput('allocation_ratio of %s on %s must be a finite number, got %s' % (rc, provider, ratio),
                       field='allocation_ratio')
    if ratio < 0:
        raise BadInput('allocation_ratio of %s on %s must be 0 or more, got %s: a negative ratio makes the '
                       'capacity int((total - reserved) * allocation_ratio) negative (Placement refuses it with '
                       '"The reserved value is greater than total")' % (rc, provider, ratio),
                       field='allocation_ratio')


SPEC = ModuleSpec(
    # the provider must exist already: a wrong embedded_db path is an error, never a new store
    action=_run, creates_store=False,
    options=dict(
        _record_spec(False),
        resource_provider=dict(type='str', required=True),
        state=dict(type='str', default='present', choices=['present', 'absent']),
        inventories=dict(type='list', elements='dict', options=_record_spec(True)),
        exclusive=dict(type='bool', default=False),
    ),
    mutually_exclusive=[('resource_class', 'inventories')],
    required_one_of=[('resource_class', 'inventories')],
)


def main():
    SPEC.main()


if __name__ == '__main__':
    main()
