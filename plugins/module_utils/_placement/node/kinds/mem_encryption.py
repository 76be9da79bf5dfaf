# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Memory encryption -> one child per model the host supports (``<root>_amd_sev``, ...),
as nova 34 lays them out (``_update_provider_tree_for_memory_encryption``,
``_get_memory_encryption_inventories``); nova's takes-all rule for
MEM_ENCRYPTION_CONTEXT (:func:`taker`).

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ...rules import providers as provider_rules


KIND_MEM_ENCRYPTION = 'mem_encryption'
MEM_ENCRYPTION_CONTEXT = 'MEM_ENCRYPTION_CONTEXT'
# nova moves every MEM_ENCRYPTION_CONTEXT allocation of the root to the child carrying this
# trait (_reshape_memory_encryption_allocations), and takes the trait off the root
SEV_TRAIT = 'HW_CPU_X86_AMD_SEV'


def taker(children, rc):
    """The child every allocation of ``rc`` goes to whatever the consumer, by nova's rule
    (MEM_ENCRYPTION_CONTEXT -> ``<node>_amd_sev``; ``takes_all``), or None: the one place
    the planner (which moves them) and verification (which checks them) read the rule."""
    for child in children:
        if child.get('takes_all') == rc:
            return child
    return None


def mem_encryption_children(root_name, devices):
    """One child per memory encryption model the host supports: ``<root>_amd_sev``, ...

    Inventory as nova 34 writes it (``_get_memory_encryption_inventories``): total =
    the model's slots, min_unit = max_unit = step_size = 1, reserved 0, ratio 1.0;
    traits: the model's trait and OWNER_NOVA.  A model with no slots gets no provider
    (nova removes it).
    """
    report = devices.get('mem_encryption') or {}
    children = []
    for model_id, info in sorted((report.get('models') or {}).items()):
        name = '%s_%s' % (root_name, model_id)
        total = int(info.get('total') or 0)
        child = {'name': name, 'kind': KIND_MEM_ENCRYPTION, 'device': model_id, 'inventories': {},
                 'traits': sorted([info['trait'], 'OWNER_NOVA']), 'inherit': [], 'numa_node': -1}
        if total < 1:
            child['remove'] = True
        else:
            child['inventories'] = {MEM_ENCRYPTION_CONTEXT: {
                'total': total, 'min_unit': 1, 'max_unit': 1, 'step_size': 1, 'reserved': 0,
                'allocation_ratio': 1.0}}
            if info['trait'] == SEV_TRAIT:
                child['takes_all'] = MEM_ENCRYPTION_CONTEXT
                # the model each guest's <launchSecurity> shows, for the planner's warning
                child['guest_models'] = dict(
                    (provider_rules.normalize_uuid(u), i.get('mem_encryption'))
                    for u, i in (devices.get('instances') or {}).items() if i.get('mem_encryption'))
        children.append(child)
    return children
