# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark only (benchmarks/bench_fleet.py): the cheapest node pass Ansible can run.

ONE module process per node that discovers the node's devices, plans, snapshots, reshapes
and verifies it (the collection's own core, the same calls the role's modules make) and
returns the node's record.  Not shipped as a module: it has no documentation, check mode
or error mapping, and it assumes the module runs where both the node's files and the
embedded Placement are (a local-connection simulated fleet).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends import factory
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import discovery, reshaper


def main():
    module = AnsibleModule(argument_spec=dict(
        node=dict(type='str', required=True),
        provider=dict(type='str', required=True),
        sysfs_root=dict(type='path', required=True),
        domain_xml_glob=dict(type='str', required=True),
        nova_conf=dict(type='str', default=''),
        domain_capabilities=dict(type='str', default=''),
        pci_filters=dict(type='raw', default=[]),
        backend=dict(type='dict', required=True),
        snapshot_dir=dict(type='path', required=True),
        run_id=dict(type='str', required=True),
    ))
    params = module.params
    started = time.time()
    devices = discovery.discover(
        sysfs_root=params['sysfs_root'], domain_xml_glob=params['domain_xml_glob'],
        pci_filters=params['pci_filters'] or [], numa=True, hostname=params['provider'],
        nova_conf=params['nova_conf'] or None, domain_capabilities=params['domain_capabilities'] or None)
    backend = factory.get_backend(params['backend'], create=False)
    try:
        result = reshaper.reshape_node(backend, params['provider'], devices,
                                       snapshot_dir=params['snapshot_dir'], run_id=params['run_id'])
    finally:
        backend.close()
    record = dict(node=params['node'], provider=params['provider'], status=result['status'],
                  run_id=params['run_id'], reason=result.get('deferred_reason') or '',
                  started=started, finished=time.time(), reshape=result,
                  instances=devices.get('instances', {}), nova_compute={})
    module.exit_json(changed=result.get('changed', False), record=record)


if __name__ == '__main__':
    main()
