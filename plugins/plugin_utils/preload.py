# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Import, once in ansible-playbook's own process, the code every node's pass runs on the controller.

Ansible's collection loader compiles a collection's Python from source each time a process
imports it (it keeps no bytecode), and every task runs in a new worker process forked from
ansible-playbook.  The reshape and the node's record (and discovery, on a node that is the
controller itself) run in process on the controller
(plugin_utils/in_process.py): without this, every node's worker would compile the collection's
Placement core again (about 0.1 s a task, as much as the work), and every in-process task
against a real Placement or nova (the reshape, nova-compute's waits, the tree read) would import
openstacksdk and keystoneauth again (about 0.25 s a task).  Imported here, in the parent, the
workers inherit it.

:func:`warm` is called in the parent process by the ``placement.upgrade.batches`` filter: the
rolling playbooks' ``serial`` (playbooks/rolling_reshape.yml, sliced_roll.yml, rollback.yml), which
ansible-playbook templates before the play's first batch.  It never fails: a roll without it is slower,
not different.  It also makes the memory file in which the run's tasks share their Keystone
tokens (module_utils/_placement/backends/tokens.py): made here, before ansible-playbook forks a
worker, every worker shares it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib

#: The controller-side code of a node's pass (the modules run in process, their actions).
MODULES = (
    'ansible_collections.placement.upgrade.plugins.modules.reshape',
    'ansible_collections.placement.upgrade.plugins.modules.fleet_report',
    'ansible_collections.placement.upgrade.plugins.action.reshape',
    'ansible_collections.placement.upgrade.plugins.action.fleet_report',
    'ansible_collections.placement.upgrade.plugins.modules.device_info',
    'ansible_collections.placement.upgrade.plugins.action.device_info',
    'ansible_collections.placement.upgrade.plugins.modules.placement_preflight',
    'ansible_collections.placement.upgrade.plugins.action.placement_preflight',
    'ansible_collections.placement.upgrade.plugins.modules.node_preflight',
    'ansible_collections.placement.upgrade.plugins.action.node_preflight',
    'ansible_collections.placement.upgrade.plugins.modules.compute_service',
    'ansible_collections.placement.upgrade.plugins.action.compute_service',
    'ansible_collections.placement.upgrade.plugins.modules.resource_provider_info',
    'ansible_collections.placement.upgrade.plugins.action.resource_provider_info',
)

#: What the REST backend imports on its first use (backends/rest_transport.py, nova/compute.py import them
#: there, not at the top: the embedded store needs none of it).  Importing openstacksdk and
#: keystoneauth takes about 0.3 s of CPU; imported in a forked worker, every in-process task
#: against a real Placement or nova would pay it again (measured: a compute_service run in a
#: fresh fork 0.25-0.29 s without this, 0.02-0.03 s with it).  Absent libraries are skipped.
REST_LIBRARIES = (
    'openstack',
    'openstack.connection',
    'openstack.exceptions',
    'keystoneauth1.adapter',
    'keystoneauth1.exceptions',
    'keystoneauth1.loading',
    'keystoneauth1.session',
    'keystoneauth1.token_endpoint',
)

_DONE = []


#: Where the run's Keystone tokens are shared between its tasks (made here, in the parent).
TOKENS = 'ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.tokens'


def warm():
    """Import :data:`MODULES` (once), and make the memory file the run's workers share their
    Keystone tokens in (:data:`TOKENS`); return the names that could not be imported."""
    if _DONE:
        return _DONE[0]
    missing = []
    for name in MODULES + REST_LIBRARIES:
        try:
            importlib.import_module(name)
        except Exception:  # pylint: disable=broad-except
            missing.append(name)
    try:
        importlib.import_module(TOKENS).install()
    except Exception:  # pylint: disable=broad-except
        missing.append(TOKENS)
    _DONE.append(missing)
    return missing
