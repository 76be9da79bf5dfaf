#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: node_preflight
short_description: Read what the pre-flight checks of a compute node need, on the node
version_added: 1.0.0
author: placement.upgrade contributors (@placement-upgrade)
description:
  - Runs on a compute node and reads two things for M(placement.upgrade.placement_preflight) to check
    (its O(placement.upgrade.placement_preflight#module:nodes) option), for a pre-flight of your own.
  - The rolling reshape does not run it (it would be a second module run on every node); the same two
    checks ride on each node's discovery there, judged before the node's reshape
    (M(placement.upgrade.device_info) options O(placement.upgrade.device_info#module:nova_credentials) and
    O(placement.upgrade.device_info#module:check_mdevs)).
  - nova-compute's own C([placement]) options from the node's nova.conf (plus C(nova.conf.d), and the
    section C(auth_section) names), that is the keystoneauth auth, session and adapter options nova 34
    connects to Placement with. Options holding a secret (C(password), C(application_credential_secret), a
    token, ...) are returned apart, in RV(nova_placement.secrets).
  - The persistence of the node's mdevs. The mdevs and their parents are read from sysfs, the guests
    holding them from the libvirt domain definitions, the persistent definitions from mdevctl's store
    (C(/etc/mdevctl.d/<parent>/<uuid>), what C(mdevctl list --defined) lists); C(mdevctl) is looked up,
    not run.
  - The module only reads; it never fails on what it finds (the pre-flight judges it), only on bad options.
options:
  nova_conf:
    description:
      - Path of the node's nova.conf (the file nova-compute reads); C(<nova_conf>.d/*.conf) is read after it.
      - An empty string reads no nova.conf (RV(nova_placement) says why).
    type: str
    default: /etc/nova/nova.conf
  nova_credentials:
    description:
      - Read nova-compute's C([placement]) options. V(false) leaves RV(nova_placement) V(null) (nothing
        secret is read), for example against the embedded store, which has no identity service.
    type: bool
    default: true
  mdevs:
    description:
      - Check the persistence of the mdevs the node's guests hold. V(false) leaves RV(mdevs) V(null).
    type: bool
    default: true
  sysfs_root:
    description: The directory that plays C(/sys).
    type: path
    default: /sys
  domain_xml_glob:
    description: Glob of the persistent libvirt domain definitions (the guests holding mdevs).
    type: str
    default: /etc/libvirt/qemu/*.xml
  mdevctl_dir:
    description: Where mdevctl keeps the persistent mdev definitions.
    type: path
    default: /etc/mdevctl.d
  mdevctl:
    description:
      - The mdevctl command, a name looked up in C(PATH) and in C(/usr/local/sbin), C(/usr/sbin), C(/sbin),
        or a path.
    type: str
    default: mdevctl
  hostname:
    description: Host name recorded with the result (default the node's).
    type: str
extends_documentation_fragment:
  - placement.upgrade.attributes
  - placement.upgrade.attributes.HOST
notes:
  - B(Run it with C(no_log=true)), because RV(nova_placement.secrets) holds nova's secret for Placement
    (its password) so that the controller can probe with it. The pre-flight role does, and passes it to
    M(placement.upgrade.placement_preflight), whose option marks it C(no_log).
  - Reading nova.conf needs root on a real node (it is C(root:nova 0640)); the role uses C(become).
seealso:
  - module: placement.upgrade.placement_preflight
  - module: placement.upgrade.device_info
'''

EXAMPLES = r'''
- name: Read nova-compute's Placement options and the mdevs' persistence
  placement.upgrade.node_preflight:
    nova_conf: /etc/kolla/nova-compute/nova.conf
  become: true
  no_log: true
  register: node_preflight
'''

RETURN = r'''
node:
  description: The host name the result is of.
  returned: always
  type: str
  sample: compute-01
nova_placement:
  description:
    - nova-compute's C([placement]) options as written (the last value of each), or V(null) with
      O(nova_credentials=false).
  returned: always
  type: dict
  contains:
    files:
      description: The files read, in order.
      type: list
      elements: str
      returned: when a file was read
    options:
      description: The options of C([placement]) (option names with C(_)), secrets left out.
      type: dict
      returned: when a file was read
    auth_section:
      description: The section C(auth_section) names, or V(null).
      type: str
      returned: when a file was read
    auth:
      description: The options of the section keystoneauth reads the auth options from, secrets left out.
      type: dict
      returned: when a file was read
    secrets:
      description: The auth options holding a secret. Keep them out of logs (C(no_log)).
      type: dict
      returned: when a file was read
    ca:
      description:
        - The CA nova-compute verifies Placement and Keystone with, read on the node, for the controller's
          probe (not a file of the controller, which may hold another CA). C(cafile) is the option's value;
          C(read) the files read and C(pem) their text (public certificates), or C(missing) why none was.
        - Outside kolla-ansible the file at C(cafile). Under kolla-ansible (O(nova_conf) is the host's
          C(/etc/kolla/<service>/nova.conf)) C(cafile) is a path in the container; one under C(/etc/nova/)
          is read at C(/etc/kolla/<service>/<rest>) (where kolla copies it from), any other (the
          container's system bundle) as the CA certificates kolla adds to it,
          C(/etc/kolla/<service>/ca-certificates/*.crt).
      type: dict
      returned: when the options set C(cafile)
    missing:
      description: Why nothing was read (no nova.conf there, or none asked for).
      type: str
      returned: when no file was read
  sample:
    files: [/etc/nova/nova.conf]
    options: {auth_type: password, auth_url: "https://keystone.internal:5000/v3", username: nova,
              project_name: service, user_domain_name: Default, project_domain_name: Default,
              region_name: RegionOne, valid_interfaces: internal}
    auth_section: null
    auth: {auth_type: password, username: nova}
    secrets: {password: VALUE_SPECIFIED_IN_NO_LOG_PARAMETER}
mdevs:
  description:
    - The persistence of the node's mdevs, or V(null) with O(mdevs=false).
    - The keys of RV(placement.upgrade.device_info#module:mdev_persistence) (C(mdev_node), C(mdevctl),
      C(mdevctl_dir), C(held), C(not_persistent), C(unreadable)), read the same way, without its
      C(problems).
  returned: always
  type: dict
  contains:
    error:
      description: Why the node's devices could not be read, when they could not.
      type: str
      returned: when discovery failed
'''

import socket

from ansible_collections.placement.upgrade.plugins.module_utils.common import ModuleSpec, unexpected_error
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends import factory
from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import PlacementError
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import discovery
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import mdev_persistence
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import novaconf


def read_nova_placement(path):
    """nova-compute's [placement] options of ``path``, or ``{missing: why}``."""
    if not path:
        return {'missing': 'no nova.conf to read (nova_conf is empty)'}
    try:
        found = novaconf.placement_section(path, is_secret=factory.is_secret_name)
    except PlacementError as exc:
        return {'missing': exc.detail}
    if found is None:
        return {'missing': 'no nova.conf at %s' % path}
    return found


def read_mdevs(params, hostname):
    try:
        report = discovery.discover(sysfs_root=params['sysfs_root'], domain_xml_glob=params['domain_xml_glob'] or None,
                                    numa=False, hostname=hostname, nova_conf=None)
    except PlacementError as exc:
        return {'mdev_node': False, 'mdevctl': None, 'mdevctl_dir': params['mdevctl_dir'], 'held': 0,
                'not_persistent': [], 'unreadable': [], 'error': exc.detail}
    return mdev_persistence.check(report, params['mdevctl_dir'], params['mdevctl'])


def execute(module):
    params = module.params
    hostname = params['hostname'] or socket.gethostname()
    try:
        nova = read_nova_placement(params['nova_conf']) if params['nova_credentials'] else None
        mdevs = read_mdevs(params, hostname) if params['mdevs'] else None
    except Exception as exc:  # pylint: disable=broad-except
        module.fail_json(msg=unexpected_error(exc))
    # the result carries nova's secret for the controller's probe: run the task no_log
    module.exit_json(changed=False, node=hostname, nova_placement=nova, mdevs=mdevs)


SPEC = ModuleSpec(
    auth=False,
    execute=execute,
    options=dict(
        nova_conf=dict(type='str', default=novaconf.DEFAULT_NOVA_CONF),
        nova_credentials=dict(type='bool', default=True),
        mdevs=dict(type='bool', default=True),
        sysfs_root=dict(type='path', default='/sys'),
        domain_xml_glob=dict(type='str', default=discovery.DEFAULT_DOMAIN_XML_GLOB),
        mdevctl_dir=dict(type='path', default=mdev_persistence.DEFAULT_MDEVCTL_DIR),
        mdevctl=dict(type='str', default='mdevctl'),
        hostname=dict(type='str'),
    ),
)


def main():
    SPEC.main()


if __name__ == '__main__':
    main()
