#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: allocation
short_description: Set a consumer's complete OpenStack Placement allocations, atomically
version_added: 1.0.0
author: placement.upgrade contributors (@placement-upgrade)
description:
  - Makes a consumer's (an instance's, a migration's) allocations exactly the ones given, on
    every provider, in one atomic C(PUT /allocations/{consumer}). Placement REPLACES the
    consumer's whole allocation set, so a provider left out loses its allocation; list every
    provider the consumer keeps, for example the shared provider of its C(DISK_GB).
  - A move such as "VCPU and MEMORY_MB from rpA to rpB, DISK_GB stays on rpC" is one task
    and one call; nothing is ever half-moved.
  - O(consumers) writes several consumers in one C(POST /allocations) transaction, all of
    them or none.
  - The consumer generation is handled for you (V(null) for a new consumer, the generation
    read otherwise). On a generation conflict the write is recomputed from a fresh read and
    sent again, at most O(conflict_retries) times.
  - The request is checked before anything is written, with Placement's rules and messages;
    every provider must exist and have inventory of each class, each amount must respect
    C(min_unit), C(max_unit) and C(step_size), and must fit the capacity (unless the usage
    does not get worse). A request Placement would refuse fails without a write, in check
    mode too.
  - Nothing is sent when the consumer already has exactly these allocations, project, user
    and consumer type.
options:
  consumer_uuid:
    description:
      - UUID of the consumer (the instance or migration UUID).
      - Mutually exclusive with O(consumers).
    type: str
  allocations:
    description:
      - The consumer's complete allocations, one entry per provider. Required with
        O(consumer_uuid) when O(state=present).
    type: list
    elements: dict
    suboptions:
      resource_provider:
        description: Name or UUID of the provider (a value that looks like a UUID is taken as a UUID).
        type: str
        required: true
      resources:
        description: Amount of each resource class held on this provider, for example C(VCPU=2) and C(MEMORY_MB=2048).
        type: dict
        required: true
  project_id:
    description:
      - Project (tenant) id owning the consumer. Required for a consumer that has no allocations
        yet; an existing consumer keeps its project when not given.
    type: str
  user_id:
    description:
      - User id owning the consumer. Required for a consumer that has no allocations yet; an
        existing consumer keeps its user when not given.
    type: str
  consumer_type:
    description:
      - Consumer type (Placement 1.38), for example V(INSTANCE) or V(MIGRATION).
      - When not given, an existing consumer keeps its type and a new one gets V(INSTANCE).
    type: str
  state:
    description:
      - V(present) makes O(allocations) the consumer's allocations; V(absent) removes all of
        them (the consumer disappears from Placement).
      - Applies to O(consumer_uuid); each entry of O(consumers) has its own O(consumers[].state).
    type: str
    choices: [present, absent]
    default: present
  consumers:
    description:
      - Several consumers written in ONE C(POST /allocations) transaction; only the consumers
        that change are sent.
      - Mutually exclusive with O(consumer_uuid), O(allocations), O(project_id), O(user_id) and
        O(consumer_type).
    type: list
    elements: dict
    suboptions:
      consumer_uuid:
        description: UUID of the consumer.
        type: str
        required: true
      allocations:
        description: The consumer's complete allocations. Required when the entry's O(consumers[].state=present).
        type: list
        elements: dict
        suboptions:
          resource_provider:
            description: Name or UUID of the provider.
            type: str
            required: true
          resources:
            description: Amount of each resource class held on this provider.
            type: dict
            required: true
      project_id:
        description: Project id; required for a consumer without allocations yet.
        type: str
      user_id:
        description: User id; required for a consumer without allocations yet.
        type: str
      consumer_type:
        description: Consumer type; an existing consumer keeps its own, a new one gets V(INSTANCE).
        type: str
      state:
        description: V(absent) empties this consumer's allocations.
        type: str
        choices: [present, absent]
        default: present
attributes:
  check_mode:
    details:
      - Returns the predicted allocations with the predicted provider and consumer generations,
        and fails exactly where a real run would.
extends_documentation_fragment:
  - placement.upgrade.auth
  - placement.upgrade.attributes
  - placement.upgrade.attributes.PLACEMENT
  - placement.upgrade.attributes.WRITES
seealso:
  - module: placement.upgrade.allocation_info
  - module: placement.upgrade.inventory
'''

EXAMPLES = r'''
- name: Move VCPU and MEMORY_MB of instance i1 from rpA to rpB, DISK_GB stays on rpC (one atomic call)
  placement.upgrade.allocation:
    cloud: overcloud
    consumer_uuid: 7a52a3cd-b39f-5ffc-940a-28d4c1fad8da
    allocations:
      - resource_provider: rpB
        resources:
          VCPU: 2
          MEMORY_MB: 2048
      - resource_provider: rpC
        resources:
          DISK_GB: 20

- name: Allocate for a new consumer (project and user are required the first time)
  placement.upgrade.allocation:
    cloud: overcloud
    consumer_uuid: 0d6f2b8e-95a4-4d2f-a6f3-2c0a4b1d9e77
    project_id: 3f9c1b2e5a7d4c8e9f0a1b2c3d4e5f60
    user_id: 9a8b7c6d5e4f40312a1b2c3d4e5f6a7b
    allocations:
      - resource_provider: compute-01
        resources: {VCPU: 1, MEMORY_MB: 512}

- name: Remove a leaked migration allocation
  placement.upgrade.allocation:
    cloud: overcloud
    consumer_uuid: 5e4b6f0a-0c38-4f6c-9d4a-0a3c1b8a7d11
    state: absent

- name: Two consumers in one transaction
  placement.upgrade.allocation:
    cloud: overcloud
    consumers:
      - consumer_uuid: 7a52a3cd-b39f-5ffc-940a-28d4c1fad8da
        allocations:
          - resource_provider: compute-01_pci_0000_84_00_0
            resources: {VGPU: 1}
          - resource_provider: compute-01
            resources: {VCPU: 2, MEMORY_MB: 2048}
      - consumer_uuid: 5e4b6f0a-0c38-4f6c-9d4a-0a3c1b8a7d11
        state: absent
'''

RETURN = r'''
consumer_uuid:
  description: The consumer, with O(consumer_uuid).
  returned: success and O(consumer_uuid) is given
  type: str
  sample: 7a52a3cd-b39f-5ffc-940a-28d4c1fad8da
allocations:
  description:
    - The consumer's allocations after the task (predicted in check mode), by provider UUID,
      with each provider's generation; empty when the consumer has none.
  returned: success and O(consumer_uuid) is given
  type: dict
  sample:
    0f5a1c3e-1111-4a4a-8c8c-000000000002: {generation: 5, resources: {VCPU: 2, MEMORY_MB: 2048}}
    0f5a1c3e-1111-4a4a-8c8c-000000000003: {generation: 9, resources: {DISK_GB: 20}}
consumer_generation:
  description: The consumer generation after the task (predicted in check mode); V(null) when it has no allocations.
  returned: success and O(consumer_uuid) is given
  type: int
  sample: 3
project_id:
  description: Project id of the consumer; V(null) when it has no allocations.
  returned: success and O(consumer_uuid) is given
  type: str
  sample: 3f9c1b2e5a7d4c8e9f0a1b2c3d4e5f60
user_id:
  description: User id of the consumer; V(null) when it has no allocations.
  returned: success and O(consumer_uuid) is given
  type: str
  sample: 9a8b7c6d5e4f40312a1b2c3d4e5f6a7b
consumer_type:
  description: Consumer type; V(null) when it has no allocations (or Placement is older than 1.38).
  returned: success and O(consumer_uuid) is given
  type: str
  sample: INSTANCE
consumers:
  description:
    - Every consumer of the task, by UUID, each with RV(allocations), RV(consumer_generation),
      RV(project_id), RV(user_id) and RV(consumer_type) as above.
  returned: success
  type: dict
  sample:
    7a52a3cd-b39f-5ffc-940a-28d4c1fad8da:
      allocations: {0f5a1c3e-1111-4a4a-8c8c-000000000002: {generation: 5, resources: {VGPU: 1}}}
      consumer_generation: 2
      project_id: 3f9c1b2e5a7d4c8e9f0a1b2c3d4e5f60
      user_id: 9a8b7c6d5e4f40312a1b2c3d4e5f6a7b
      consumer_type: INSTANCE
retries:
  description: How many times the write was recomputed after a generation conflict.
  returned: success
  type: int
  sample: 0
log:
  description: Messages about conflicts retried on the way.
  returned: always
  type: list
  elements: str
  sample: []
error:
  description: Placement's error (C(status), C(code), C(title), C(detail), C(request_id)) when the task failed on one.
  returned: failure
  type: dict
  sample: {status: 409, code: placement.undefined_code, title: Conflict,
           detail: "Unable to allocate inventory: Unable to create allocation for 'VCPU' on resource provider '0f5a...'.
             The requested amount would exceed the capacity.", request_id: req-5c1b0c52-7b9c-4c8e-9b65-0c5c4d1f4e2a}
'''

from ansible_collections.placement.upgrade.plugins.module_utils.common import ModuleSpec, conflict_attempts
from ansible_collections.placement.upgrade.plugins.module_utils._placement import resources as ops

VIEW_KEYS = ('allocations', 'consumer_generation', 'project_id', 'user_id', 'consumer_type')


def _allocations_spec():
    return dict(
        resource_provider=dict(type='str', required=True),
        resources=dict(type='dict', required=True),
    )


def _run(module, backend, log):
    params = module.params
    attempts = conflict_attempts(params)
    if params['consumers'] is not None:
        if not params['consumers']:
            module.fail_json(msg='consumers must list at least one consumer')
        result = ops.ensure_allocations(backend, params['consumers'], multi=True,
                                        check_mode=module.check_mode, attempts=attempts, log=log)
        return result
    request = dict((key, params[key]) for key in ('consumer_uuid', 'allocations', 'project_id',
                                                  'user_id', 'consumer_type', 'state'))
    result = ops.ensure_allocations(backend, [request], multi=False,
                                    check_mode=module.check_mode, attempts=attempts, log=log)
    consumer = next(iter(result['consumers']))
    view = result['consumers'][consumer]
    result['consumer_uuid'] = consumer
    for key in VIEW_KEYS:
        result[key] = view[key]
    result['diff'] = {'before': result['diff']['before'][consumer],
                      'after': result['diff']['after'][consumer]}
    return result


SPEC = ModuleSpec(
    # allocations name providers that must exist already: never create a new store
    action=_run, creates_store=False,
    options=dict(
        consumer_uuid=dict(type='str'),
        allocations=dict(type='list', elements='dict', options=_allocations_spec()),
        project_id=dict(type='str'),
        user_id=dict(type='str'),
        consumer_type=dict(type='str'),
        state=dict(type='str', default='present', choices=['present', 'absent']),
        consumers=dict(type='list', elements='dict', options=dict(
            consumer_uuid=dict(type='str', required=True),
            allocations=dict(type='list', elements='dict', options=_allocations_spec()),
            project_id=dict(type='str'),
            user_id=dict(type='str'),
            consumer_type=dict(type='str'),
            state=dict(type='str', default='present', choices=['present', 'absent']),
        )),
    ),
    mutually_exclusive=[('consumer_uuid', 'consumers'), ('allocations', 'consumers'),
                        ('project_id', 'consumers'), ('user_id', 'consumers'),
                        ('consumer_type', 'consumers')],
    required_one_of=[('consumer_uuid', 'consumers')],
)


def main():
    SPEC.main()


if __name__ == '__main__':
    main()
