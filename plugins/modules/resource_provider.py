#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: resource_provider
short_description: Create, update or delete an OpenStack Placement resource provider
version_added: 1.0.0
author: placement.upgrade contributors (@placement-upgrade)
description:
  - Makes a resource provider exist (or not) in OpenStack Placement, or in the embedded
    placement store, with its parent, traits and aggregates.
  - A provider is found by O(uuid) when given, otherwise by O(name) (names are unique in
    Placement). With both, an existing provider found by O(uuid) is renamed to O(name).
  - Custom traits (C(CUSTOM_*)) that do not exist yet are created; a standard trait must
    already be known to Placement.
  - Every write is compare-and-update on the provider generation; a write that loses a race
    is recomputed from a fresh read, at most O(conflict_retries) times.
  - Nothing is sent when the provider already matches, so a second identical run reports no
    change and leaves the provider generation alone.
options:
  name:
    description:
      - Name of the provider (1 to 200 characters, unique in Placement).
      - Required to create a provider.
    type: str
  uuid:
    description:
      - UUID of the provider. When creating without it, Placement picks one.
    type: str
  state:
    description:
      - V(present) creates or updates the provider, V(absent) deletes it.
      - Deleting a provider that has child providers, or allocations, fails with Placement's
        error (C(placement.resource_provider.cannot_delete_parent) or
        C(placement.resource_provider.inuse)) and deletes nothing. Its inventories, traits and
        aggregates go with it.
    type: str
    choices: [present, absent]
    default: present
  parent_provider:
    description:
      - Name or UUID of the parent provider (a value that looks like a UUID is taken as a UUID).
      - An empty string makes the provider a root provider.
      - When not set, a new provider is a root provider and an existing one keeps its parent.
      - Giving a parent to a root provider works with any supported Placement; moving a provider
        to another parent or making it a root needs microversion 1.37, and fails with a clear
        error on an older Placement.
    type: str
  traits:
    description:
      - Traits the provider must have.
      - Added to the current traits, or replacing them when O(traits_exclusive=true).
      - When not set, the traits are left alone.
    type: list
    elements: str
  traits_exclusive:
    description:
      - When V(true), O(traits) is the complete set; other traits are removed.
    type: bool
    default: false
  aggregates:
    description:
      - UUIDs of the aggregates the provider must be a member of.
      - Added to the current aggregates, or replacing them when O(aggregates_exclusive=true).
      - When not set, the aggregates are left alone.
    type: list
    elements: str
  aggregates_exclusive:
    description:
      - When V(true), O(aggregates) is the complete set; other aggregates are removed.
    type: bool
    default: false
attributes:
  check_mode:
    details:
      - Returns the predicted provider, including its predicted generation. A provider created
        without O(uuid) has RV(provider.uuid) V(null) in check mode (Placement picks it).
extends_documentation_fragment:
  - placement.upgrade.auth
  - placement.upgrade.attributes
  - placement.upgrade.attributes.PLACEMENT
  - placement.upgrade.attributes.WRITES
seealso:
  - module: placement.upgrade.resource_provider_info
  - module: placement.upgrade.inventory
'''

EXAMPLES = r'''
- name: Create the compute node provider with a custom trait
  placement.upgrade.resource_provider:
    cloud: overcloud
    name: compute-01
    traits:
      - COMPUTE_NODE
      - CUSTOM_ROLLING_UPGRADE

- name: Create a child provider for a physical GPU
  placement.upgrade.resource_provider:
    cloud: overcloud
    name: compute-01_pci_0000_84_00_0
    parent_provider: compute-01

- name: Set exactly these traits and aggregates on a provider found by UUID
  placement.upgrade.resource_provider:
    cloud: overcloud
    uuid: 8d6bb6c4-4d9f-4ba9-9d60-3d1c17a3ad7f
    traits: [COMPUTE_NODE]
    traits_exclusive: true
    aggregates: [2f0d3b39-3e5a-4d36-8f34-1c7f0e7c0c11]
    aggregates_exclusive: true

- name: Work on the embedded placement store instead of a cloud
  placement.upgrade.resource_provider:
    embedded_db: /var/lib/placement-upgrade/placement.db
    name: compute-01

- name: Delete a provider (fails, changing nothing, while it has children or allocations)
  placement.upgrade.resource_provider:
    cloud: overcloud
    name: compute-01_pci_0000_84_00_0
    state: absent
'''

RETURN = r'''
provider:
  description:
    - The provider after the task (predicted in check mode); V(null) when it is absent.
  returned: always
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
    generation:
      description: Provider generation (predicted in check mode).
      type: int
      returned: success
      sample: 2
    parent_provider_uuid:
      description: UUID of the parent provider, V(null) for a root provider.
      type: str
      returned: success
    root_provider_uuid:
      description: UUID of the root provider of its tree.
      type: str
      returned: success
      sample: 8d6bb6c4-4d9f-4ba9-9d60-3d1c17a3ad7f
    inventories:
      description: Inventory records by resource class.
      type: dict
      returned: success
      sample: {VCPU: {total: 16, reserved: 0, min_unit: 1, max_unit: 16, step_size: 1, allocation_ratio: 4.0}}
    usages:
      description: Amount used, by resource class.
      type: dict
      returned: success
      sample: {VCPU: 4}
    traits:
      description: Traits of the provider, sorted.
      type: list
      elements: str
      returned: success
      sample: [COMPUTE_NODE, CUSTOM_ROLLING_UPGRADE]
    aggregates:
      description: Aggregate UUIDs of the provider, sorted.
      type: list
      elements: str
      returned: success
      sample: [2f0d3b39-3e5a-4d36-8f34-1c7f0e7c0c11]
created_traits:
  description: Custom traits that did not exist and were created (would be, in check mode).
  returned: when O(state=present)
  type: list
  elements: str
  sample: [CUSTOM_ROLLING_UPGRADE]
retries:
  description: How many times a write was recomputed after a generation conflict.
  returned: success
  type: int
  sample: 0
log:
  description: Messages about conflicts retried and objects created on the way.
  returned: always
  type: list
  elements: str
  sample: ["resource provider compute-01: generation conflict on attempt 1 of 6 (...), re-reading and retrying"]
error:
  description: Placement's error (C(status), C(code), C(title), C(detail), C(request_id)) when the task failed on one.
  returned: failure
  type: dict
  sample: {status: 409, code: placement.resource_provider.inuse, title: Conflict,
           detail: "Unable to delete resource provider 8d6b...: Resource provider has allocations.",
           request_id: req-5c1b0c52-7b9c-4c8e-9b65-0c5c4d1f4e2a}
'''

from ansible_collections.placement.upgrade.plugins.module_utils.common import (
    ModuleSpec,
    conflict_attempts,
    error_result,
    run_module,
)
from ansible_collections.placement.upgrade.plugins.module_utils._placement import resources as ops
from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import PlacementError


def _run(module, backend, log):
    params = module.params
    attempts = conflict_attempts(params)
    if params['state'] == 'absent':
        return ops.remove_provider(backend, params['uuid'] or params['name'],
                                   check_mode=module.check_mode, attempts=attempts, log=log)
    return ops.ensure_provider(
        backend,
        name=params['name'],
        uuid=params['uuid'],
        parent_provider=params['parent_provider'],
        traits=params['traits'],
        traits_exclusive=params['traits_exclusive'],
        aggregates=params['aggregates'],
        aggregates_exclusive=params['aggregates_exclusive'],
        check_mode=module.check_mode,
        attempts=attempts,
        log=log,
    )


def execute(module):
    """The module's work (SPEC's one call): the request checked, then the provider through run_module."""
    params = module.params
    if params['state'] == 'present':
        # the checks of the parameters alone, before the backend is opened: a bad name or uuid
        # must not create a new, empty embedded placement before it fails
        try:
            ops.check_provider_request(params['name'], params['uuid'], params['traits'], params['aggregates'])
        except PlacementError as exc:
            module.fail_json(**error_result(exc))
    # a parent must already exist: never create a new store for a child
    run_module(module, _run, creates_store=not params['parent_provider'])


SPEC = ModuleSpec(
    execute=execute,
    options=dict(
        name=dict(type='str'),
        uuid=dict(type='str'),
        state=dict(type='str', default='present', choices=['present', 'absent']),
        parent_provider=dict(type='str'),
        traits=dict(type='list', elements='str'),
        traits_exclusive=dict(type='bool', default=False),
        aggregates=dict(type='list', elements='str'),
        aggregates_exclusive=dict(type='bool', default=False),
    ),
    required_one_of=[('name', 'uuid')],
)


def main():
    SPEC.main()


if __name__ == '__main__':
    main()
