#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: allocation_info
short_description: Read OpenStack Placement allocations by consumer, provider or provider tree
version_added: 1.0.0
author: placement.upgrade contributors (@placement-upgrade)
description:
  - Returns the allocations of one consumer, or of every consumer holding resources on a
    provider or anywhere in a provider tree.
  - Each consumer is returned with its COMPLETE allocation set, including providers outside
    the provider or tree asked for (such as a shared C(DISK_GB) pool), with its generation,
    project, user and consumer type; this is exactly what a replacing write must carry.
  - A consumer without allocations, or a provider or tree that does not exist, gives empty
    results, not a failure.
options:
  consumer_uuid:
    description:
      - UUID of the consumer to read.
    type: str
  resource_provider:
    description:
      - Name or UUID of a provider; every allocation held against it is returned.
      - A value that looks like a UUID is taken as a UUID.
    type: str
  in_tree:
    description:
      - Name or UUID of any provider of a tree; every allocation held against any provider of
        the tree (from its root) is returned.
    type: str
extends_documentation_fragment:
  - placement.upgrade.auth
  - placement.upgrade.attributes
  - placement.upgrade.attributes.PLACEMENT
  - placement.upgrade.attributes.READ_ONLY
seealso:
  - module: placement.upgrade.allocation
  - module: placement.upgrade.resource_provider_info
'''

EXAMPLES = r'''
- name: Read one instance's allocations
  placement.upgrade.allocation_info:
    cloud: overcloud
    consumer_uuid: 7a52a3cd-b39f-5ffc-940a-28d4c1fad8da
  register: i1

- name: Every consumer holding resources on the tree of compute-01
  placement.upgrade.allocation_info:
    cloud: overcloud
    in_tree: compute-01
  register: node_allocations

- name: List the consumers holding VGPU on the root provider
  ansible.builtin.debug:
    msg: "{{ node_allocations.resource_providers[root_uuid].allocations | dict2items
             | selectattr('value.resources.VGPU', 'defined') | map(attribute='key') | list }}"
  vars:
    root_uuid: "{{ node_allocations.resource_providers | dict2items
                   | selectattr('value.name', 'equalto', 'compute-01') | map(attribute='key') | first }}"
'''

RETURN = r'''
consumers:
  description:
    - Each consumer found, by UUID, with its complete allocations.
  returned: success
  type: dict
  contains:
    allocations:
      description: Allocations by provider UUID, each with the provider C(generation) and C(resources).
      type: dict
      returned: success
      sample: {0f5a1c3e-1111-4a4a-8c8c-000000000003: {generation: 9, resources: {DISK_GB: 20}}}
    consumer_generation:
      description: The consumer generation to send with the next write of this consumer.
      type: int
      returned: success
      sample: 3
    project_id:
      description: Project id of the consumer.
      type: str
      returned: success
      sample: 3f9c1b2e5a7d4c8e9f0a1b2c3d4e5f60
    user_id:
      description: User id of the consumer.
      type: str
      returned: success
      sample: 9a8b7c6d5e4f40312a1b2c3d4e5f6a7b
    consumer_type:
      description: Consumer type (V(null) before Placement 1.38).
      type: str
      returned: success
      sample: INSTANCE
resource_providers:
  description:
    - With O(resource_provider) or O(in_tree), each provider by UUID with its C(name), C(generation)
      and the C(allocations) held against it by consumer UUID (only the resources on that provider).
  returned: success and O(resource_provider) or O(in_tree) is given
  type: dict
  sample:
    8d6bb6c4-4d9f-4ba9-9d60-3d1c17a3ad7f:
      name: compute-01
      generation: 12
      allocations: {7a52a3cd-b39f-5ffc-940a-28d4c1fad8da: {resources: {VCPU: 2, MEMORY_MB: 2048}}}
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
  sample: {status: 400, code: placement.undefined_code, title: Bad Request,
           detail: "Malformed consumer_uuid: not-a-uuid", request_id: null}
'''

from ansible_collections.placement.upgrade.plugins.module_utils.common import ModuleSpec
from ansible_collections.placement.upgrade.plugins.module_utils._placement import resources as ops


def _run(module, backend, log):
    params = module.params
    result = ops.allocations_info(backend, consumer_uuid=params['consumer_uuid'],
                                  resource_provider=params['resource_provider'],
                                  in_tree=params['in_tree'])
    result['changed'] = False
    return result


SPEC = ModuleSpec(
    action=_run, creates_store=False,
    options=dict(
        consumer_uuid=dict(type='str'),
        resource_provider=dict(type='str'),
        in_tree=dict(type='str'),
    ),
    mutually_exclusive=[('consumer_uuid', 'resource_provider', 'in_tree')],
    required_one_of=[('consumer_uuid', 'resource_provider', 'in_tree')],
)


def main():
    SPEC.main()


if __name__ == '__main__':
    main()
