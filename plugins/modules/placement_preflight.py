#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: placement_preflight
short_description: Check that a rolling reshape can start, before any node is touched
version_added: 1.0.0
author: placement.upgrade contributors (@placement-upgrade)
description:
  - Runs the checks a rolling reshape needs once, before the first node, and fails with every
    failed check listed when one does not pass. It changes nothing.
  - C(reachable) - Placement answers (a real API through openstacksdk, or the embedded store
    opens).
  - C(microversion) - the negotiated microversion is at least O(min_microversion) (C(POST
    /reshaper) needs 1.30).
  - C(reshape_permission) - the credentials may call C(POST /reshaper). On a real Placement the
    module sends a harmless probe, a reshape body with empty C(inventories) and C(allocations). Placement checks
    the policy before the request body, so an allowed caller gets C(400 Bad Request) (the
    schema wants at least one provider) and nothing is written, a refused one C(403
    Forbidden). The embedded store has no policy, so the check passes without a probe.
  - C(root_providers) - every name or UUID in O(providers) is an existing B(root) provider
    (the compute node provider nova creates).
  - C(directories) - every path in O(directories) (the run's snapshot and report directories)
    is a writable directory, or can be created (its nearest existing parent is a writable
    directory). Nothing is created here; the reshape and the report create them (mode C(0700)) when
    they write their first file.
  - C(nova_credentials) - for every node of O(nodes) whose nova.conf was read, nova-compute's OWN
    C([placement]) credentials do what nova-compute needs at start-up, probed from where this module
    runs as nova 34 connects (keystoneauth's options of the section). That is a token from the identity
    service (Keystone), the Placement endpoint nova would use (C(endpoint_override), else the catalog's
    C(service_type) endpoint for the first of C(valid_interfaces), default C(internal,public), in
    C(region_name)), its version discovery, and the same C(POST /reshaper) probe as
    C(reshape_permission). Nodes with the same options are probed once. A node whose nova cannot
    reshape (no token, no endpoint, or C(403) on the probe when the credentials lack the C(service) role)
    fails the check, named with the step and what Keystone or Placement answered. A node whose nova.conf
    was not found or sets no C(auth_type) in C([placement]) cannot be checked, and a warning names it.
    Against the embedded store nothing is probed.
  - C(mdev_persistence) - on every node of O(nodes) with mdevs, C(mdevctl) is installed and every
    mdev a guest holds is defined persistently (C(/etc/mdevctl.d/<parent>/<uuid>)). A reboot of the
    host loses a transient mdev, and nova 34 starts only defined mdevs, so its guest cannot start.
    Each problem is a warning naming the node, the mdevs, their parent and the guest, with the
    C(mdevctl define) command that fixes it; with O(fail_on_transient_mdevs=true) it fails the check.
options:
  providers:
    description:
      - Names or UUIDs of the root providers of the nodes the roll will touch (nova's compute
        node providers, named after the hypervisor hostname).
    type: list
    elements: str
    default: []
  min_microversion:
    description:
      - Lowest acceptable Placement microversion, as C(X.Y).
    type: str
    default: '1.30'
  check_reshape_permission:
    description:
      - Probe whether the credentials may call C(POST /reshaper).
    type: bool
    default: true
  directories:
    description:
      - Directories the run will write into where this module runs (the snapshot and report
        directories, on the controller), checked to be writable or creatable. C(~) is expanded.
    type: list
    elements: path
    default: []
  commands:
    description:
      - Commands looked up where this module runs, without running them (the optional upgrade
        checks of the P(placement.upgrade.preflight#role) role that run on the controller).
      - One is found when the first word of its O(commands[].command) is an executable in C(PATH) (or
        an executable path) and its O(commands[].requires), when set, exists. A command not found does
        not fail the pre-flight; RV(commands_found) says which were found.
    type: list
    elements: dict
    default: []
    suboptions:
      command:
        description: The command line, for example C(nova-status upgrade check).
        type: str
        required: true
      requires:
        description: A file the command needs (its service's configuration).
        type: str
  nodes:
    description:
      - What the P(placement.upgrade.preflight#role) role read on each node the roll will touch, with
        M(placement.upgrade.node_preflight) (each element is that module's result plus the node's name),
        that is nova-compute's C([placement]) options and the node's mdevs. Used by the C(nova_credentials) and
        C(mdev_persistence) checks.
      - The secret options (C(nova_placement.secrets)) are never logged or returned.
    type: list
    elements: dict
    default: []
    suboptions:
      node:
        description: The node's name, as messages name it (its inventory name).
        type: str
        required: true
      nova_placement:
        description:
          - M(placement.upgrade.node_preflight)'s RV(placement.upgrade.node_preflight#module:nova_placement)
            (V(null) when it was not read).
        type: dict
        suboptions:
          files:
            description: The files read, in order.
            type: list
            elements: str
            default: []
          options:
            description: The options of C([placement]), secrets left out.
            type: dict
            default: {}
          auth_section:
            description: The section C(auth_section) names, when set.
            type: str
          auth:
            description: The options of the section the auth options are read from, secrets left out.
            type: dict
            default: {}
          secrets:
            description: The auth options holding a secret (C(password), C(application_credential_secret), ...).
            type: dict
            default: {}
          missing:
            description: Why nothing was read (no nova.conf), when nothing was.
            type: str
      mdevs:
        description:
          - M(placement.upgrade.node_preflight)'s RV(placement.upgrade.node_preflight#module:mdevs)
            (V(null) when it was not read).
        type: dict
  fail_on_transient_mdevs:
    description:
      - Fail the C(mdev_persistence) check when a node's guests hold mdevs that are not defined
        persistently or C(mdevctl) is missing on an mdev node. By default each is a warning, since the
        reshape does not touch the mdevs (they are lost at the next reboot of the host, not by the roll).
    type: bool
    default: false
attributes:
  check_mode:
    details: The module only reads; the permission probe is refused by Placement's schema and writes nothing.
extends_documentation_fragment:
  - placement.upgrade.auth
  - placement.upgrade.attributes
  - placement.upgrade.attributes.PLACEMENT
  - placement.upgrade.attributes.READ_ONLY
notes:
  - The roll's P(placement.upgrade.preflight#role) role runs this module once per run, delegated to the
    controller, together with the optional C(placement-status upgrade check) and C(nova-status
    upgrade check) commands.
  - All providers are read with one C(GET /resource_providers) call, so the check costs the
    same for ten nodes or a thousand.
seealso:
  - module: placement.upgrade.reshape
'''

EXAMPLES = r'''
- name: Check Placement before rolling through the compute nodes
  placement.upgrade.placement_preflight:
    cloud: overcloud
    providers: "{{ groups['compute'] }}"
  delegate_to: localhost
  run_once: true

- name: Same against the embedded store, without the permission probe
  placement.upgrade.placement_preflight:
    embedded_db: /var/lib/placement-upgrade/placement.db
    providers:
      - compute-01
      - compute-02
    check_reshape_permission: false
    directories:
      - ~/placement-upgrade/snapshots
      - ~/placement-upgrade/reports
'''

RETURN = r'''
checks:
  description: Every check that ran, in order, with its outcome.
  returned: always
  type: list
  elements: dict
  contains:
    check:
      description: >-
        Name of the check (reachable, microversion, reshape_permission, root_providers, directories,
        nova_credentials, mdev_persistence).
      type: str
      returned: always
      sample: microversion
    passed:
      description: Whether the check passed.
      type: bool
      returned: always
      sample: true
    detail:
      description: What was found.
      type: str
      returned: always
      sample: negotiated 1.39 (need at least 1.30)
microversion:
  description: The negotiated Placement microversion.
  returned: when Placement was reached
  type: str
  sample: '1.39'
backend:
  description: Which backend answered, C(embedded) or C(rest).
  returned: when Placement was reached
  type: str
  sample: rest
providers:
  description: Each provider of O(providers) that exists, by the name or UUID given, with its uuid and name.
  returned: always
  type: dict
  sample: {compute-01: {uuid: 8d6bb6c4-4d9f-4ba9-9d60-3d1c17a3ad7f, name: compute-01}}
commands_found:
  description: For each entry of O(commands), in order, whether it was found (it can run here).
  returned: always
  type: list
  elements: bool
  sample: [false, true]
missing:
  description: Entries of O(providers) that are not an existing root provider.
  returned: always
  type: list
  elements: str
  sample: []
nova_credentials:
  description:
    - For each node of O(nodes) whose nova.conf was read, by node name, what probing nova-compute's own
      C([placement]) credentials found. No secret is returned.
    - C(passed) (V(null) when the node could not be checked), C(detail) (what was found, or why the node
      could not be checked), C(user), C(roles) (of the token Keystone gave; empty when none was given) and
      C(endpoint) (the Placement endpoint nova-compute would use; V(null) when not found).
  returned: when O(nodes) holds nova.conf options
  type: dict
  sample:
    compute-01:
      passed: false
      detail: "nova-compute may not reshape with its own credentials (user nova, project service, ...): 403 Forbidden ..."
      user: nova
      roles: [admin, member, reader]
      endpoint: https://placement.internal.example:8778
mdev_problems:
  description: For each node of O(nodes) whose mdevs are not all persistent, the problems found.
  returned: when O(nodes) holds mdevs
  type: dict
  sample:
    compute-03:
      - "compute-03: 1 mdev(s) held by guests are not defined persistently ..."
log:
  description: Messages from the task.
  returned: always
  type: list
  elements: str
  sample: []
error:
  description: Placement's error when Placement could not be reached or a read failed.
  returned: failure
  type: dict
'''
from ansible_collections.placement.upgrade.plugins.module_utils.common import (
    ModuleSpec,
    backend_options,
    protect_secrets,
)
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import preflight


def _run(module, _backend, log):
    """run_module's action: the core opens Placement itself (a connection failure is a failed check)."""
    params = module.params
    problem = preflight.microversion_problem(params['min_microversion'])
    if problem:
        module.fail_json(msg=problem)
    result = preflight.preflight(
        backend_options(params), providers=params['providers'], min_microversion=params['min_microversion'],
        check_reshape_permission=params['check_reshape_permission'], directories=params['directories'],
        commands=params['commands'], nodes=params['nodes'], fail_on_transient_mdevs=params['fail_on_transient_mdevs'],
        warn=module.warn, log=log, opened=lambda backend: protect_secrets(module, backend))
    if result.get('failed'):
        module.fail_json(**result)
    return result


SPEC = ModuleSpec(
    action=_run, open_backend=False,
    options=dict(
        providers=dict(type='list', elements='str', default=[]),
        min_microversion=dict(type='str', default='1.30'),
        check_reshape_permission=dict(type='bool', default=True),
        directories=dict(type='list', elements='path', default=[]),
        commands=dict(type='list', elements='dict', default=[], options=dict(
            command=dict(type='str', required=True),
            requires=dict(type='str'),
        )),
        nodes=dict(type='list', elements='dict', default=[], options=dict(
            node=dict(type='str', required=True),
            nova_placement=dict(type='dict', options=dict(
                files=dict(type='list', elements='str', default=[]),
                options=dict(type='dict', default={}),
                auth_section=dict(type='str'),
                auth=dict(type='dict', default={}),
                secrets=dict(type='dict', default={}, no_log=True),
                missing=dict(type='str'),
            )),
            mdevs=dict(type='dict'),
        )),
        fail_on_transient_mdevs=dict(type='bool', default=False),
    ),
)


def main():
    SPEC.main()


if __name__ == '__main__':
    main()
