#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: resource_provider_info
short_description: Read OpenStack Placement resource providers, their inventories, usages, traits and aggregates
version_added: 1.0.0
author: placement.upgrade contributors (@placement-upgrade)
description:
  - Returns resource providers found by name, by UUID, as a whole provider tree, or all of
    them, each with its parent and root, generation, inventories, usages, traits and
    aggregates, and optionally the allocations held against it.
  - Providers are listed in tree order, roots first, each followed by its descendants
    depth-first, siblings by name.
  - A provider or tree that does not exist gives an empty list, not a failure.
options:
  name:
    description:
      - Name of the provider to return.
    type: str
  uuid:
    description:
      - UUID of the provider to return.
    type: str
  in_tree:
    description:
      - Name or UUID of any provider of a tree; the whole tree (from its root) is returned.
      - A value that looks like a UUID is taken as a UUID.
    type: str
  with_allocations:
    description:
      - Also return, for each provider, the allocations held against it by consumer.
    type: bool
    default: false
  details:
    description:
      - V(false) returns only what Placement lists for each provider (RV(providers[].uuid),
        RV(providers[].name), RV(providers[].generation), RV(providers[].parent_provider_uuid),
        RV(providers[].root_provider_uuid)), read in one request for a whole tree instead of four
        or five per provider. A write of a provider's inventory, traits or aggregates, and an
        allocation written against it, move its generation, and a provider created or deleted in
        the tree shows in the list, so this is enough to see such writes since an earlier read.
        (Deleting an allocation, a consumer moving its allocation away, renaming or re-parenting a
        provider do not move it.)
      - Cannot be V(false) with O(with_allocations=true).
    type: bool
    default: true
notes:
  - Without O(name), O(uuid) or O(in_tree), every provider is returned.
extends_documentation_fragment:
  - placement.upgrade.auth
  - placement.upgrade.attributes
  - placement.upgrade.attributes.PLACEMENT
  - placement.upgrade.attributes.READ_ONLY
seealso:
  - module: placement.upgrade.resource_provider
  - module: placement.upgrade.allocation_info
'''

EXAMPLES = r'''
- name: Read the whole provider tree of a compute node, with allocations
  placement.upgrade.resource_provider_info:
    cloud: overcloud
    in_tree: compute-01
    with_allocations: true
  register: tree

- name: Show the VGPU inventory of every provider of the tree
  ansible.builtin.debug:
    msg: "{{ item.name }}: {{ item.inventories.VGPU | default('no VGPU') }}"
  loop: "{{ tree.providers }}"
  loop_control:
    label: "{{ item.name }}"

- name: Read one provider by UUID from the embedded store
  placement.upgrade.resource_provider_info:
    embedded_db: /var/lib/placement-upgrade/placement.db
    uuid: 8d6bb6c4-4d9f-4ba9-9d60-3d1c17a3ad7f
  register: one
'''

RETURN = r'''
providers:
  description: The providers found, in tree order.
  returned: success
  type: list
  elements: dict
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
      description: Provider generation.
      type: int
      returned: success
      sample: 7
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
      returned: unless O(details=false)
      sample: {VGPU: {total: 8, reserved: 0, min_unit: 1, max_unit: 8, step_size: 1, allocation_ratio: 1.0}}
    usages:
      description: Amount used, by resource class (every class with inventory, 0 when unused).
      type: dict
      returned: unless O(details=false)
      sample: {VGPU: 2}
    traits:
      description: Traits of the provider, sorted.
      type: list
      elements: str
      returned: unless O(details=false)
      sample: [COMPUTE_NODE]
    aggregates:
      description: Aggregate UUIDs of the provider, sorted.
      type: list
      elements: str
      returned: unless O(details=false)
      sample: []
    allocations:
      description: Allocations against this provider, by consumer UUID.
      type: dict
      returned: when O(with_allocations=true)
      sample: {5e4b6f0a-0c38-4f6c-9d4a-0a3c1b8a7d11: {resources: {VGPU: 1}}}
log:
  description: Messages from the task (empty for this read-only module).
  returned: always
  type: list
  elements: str
  sample: []
error:
  description: Placement's error (C(status), C(code), C(title), C(detail), C(request_id)) when the task failed on one.
  returned: failure
  type: dict
  sample: {status: 503, code: placement.undefined_code, title: Service Unavailable,
           detail: "Unable to reach Placement", request_id: null}
'''

from ansible_collections.placement.upgrade.plugins.module_utils.common import ModuleSpec
from ansible_collections.placement.upgrade.plugins.module_utils._placement import resources as ops


def _run(module, backend, log):
    params = module.params
    if params['with_allocations'] and not params['details']:
        module.fail_json(msg='with_allocations=true needs details=true (the allocations are a detail of each provider)')
    providers = ops.providers_info(backend, name=params['name'], uuid=params['uuid'],
                                   in_tree=params['in_tree'],
                                   with_allocations=params['with_allocations'],
                                   details=params['details'])
    return {'changed': False, 'providers': providers}


SPEC = ModuleSpec(
    action=_run, creates_store=False,
    options=dict(
        name=dict(type='str'),
        uuid=dict(type='str'),
        in_tree=dict(type='str'),
        with_allocations=dict(type='bool', default=False),
        details=dict(type='bool', default=True),
    ),
    mutually_exclusive=[('name', 'uuid', 'in_tree')],
)


def main():
    SPEC.main()


if __name__ == '__main__':
    main()
