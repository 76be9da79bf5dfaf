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
from .common import Kind, PlanError


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


def mem_encryption_seen(devices):
    """What the report says of memory encryption, for the planner's messages: None when no
    domain capabilities were given, else ``{"source", "models": {model: total}}`` (the models
    nova 34 would report, with their slots)."""
    report = devices.get('mem_encryption')
    if report is None:
        return None
    return {'source': report.get('source'),
            'models': dict((m, int((i or {}).get('total') or 0))
                           for m, i in sorted((report.get('models') or {}).items()))}


MEM_ENCRYPTION_COMMANDS = (
    'openstack --os-placement-api-version 1.28 resource provider allocation unset --provider {root} '
    '--resource-class MEM_ENCRYPTION_CONTEXT <consumer>',
    'openstack resource provider inventory delete {root} --resource-class MEM_ENCRYPTION_CONTEXT')


def _refusal(work, holders):
    """Why a root with MEM_ENCRYPTION_CONTEXT and no AMD SEV child cannot be planned, and what to do."""
    root = work.root
    name = root['name']
    mec = MEM_ENCRYPTION_CONTEXT
    nova_does = ('At start-up nova 34 moves every %s allocation of the root to the AMD SEV child '
                 '%s_amd_sev and to no other provider (_reshape_memory_encryption_allocations), '
                 'then removes the class from the root; with no AMD SEV child its start-up reshape '
                 'fails (ReshapeFailed: the child resource provider for AMD SEV is not found)%s'
                 % (mec, name, ' while a consumer holds it on the root' if holders else
                    '; as no consumer holds it, nova only removes the root\'s inventory'))
    held = (' allocated by consumers %s' % ', '.join(holders)) if holders else ' no consumer holds'
    seen = work.layout.get('mem_encryption')
    if seen is None:
        missing = ['libvirt\'s domain capabilities (device_info use_virsh or domain_capabilities), '
                   'which with the kernel\'s kvm_amd parameters tell whether nova 34 finds AMD SEV']
        if work.layout.get('nova') is None:
            missing.append('the node\'s nova.conf (device_info nova_conf; none was read)')
        return ('the root provider %s has %s inventory (AMD SEV before 2025.2),%s, and the '
                'device report cannot tell whether this host supports AMD SEV. %s. Missing '
                'input: %s. Give it and plan again. Nothing was changed.'
                % (name, mec, held, nova_does, '; '.join(missing)))
    models = seen.get('models') or {}
    source = seen.get('source') or 'domain capabilities'
    if models.get('amd_sev') == 0:
        found = ('this host has AMD SEV with no guest slots (maxGuests 0 in %s), so nova 34 makes no '
                 '%s_amd_sev child' % (source, name))
    else:
        found = ('this host has no AMD SEV support (the kernel\'s kvm_amd sev parameter and <sev '
                 'supported=\'yes\'> in %s, which were read), so nova 34 makes no %s_amd_sev child'
                 % (source, name))
    others = sorted(m for m, n in models.items() if n and m != 'amd_sev')
    if others:
        found += ('; the models it does report (%s) get their own children, which nova never moves '
                  'root allocations to' % ', '.join(others))
    cmds = [c.format(root=root['uuid']) for c in MEM_ENCRYPTION_COMMANDS]
    if holders:
        todo = ('No reshape leads from this state to one nova 34 accepts. What you can do: if these '
                'guests are AMD SEV guests and the host does support it, enable it (kvm_amd sev=1, '
                'a libvirt and firmware that show <sev supported=\'yes\'>) and plan again; otherwise '
                'their %s on the root backs nothing nova 34 knows: remove it from each consumer with '
                '`%s`, then the root\'s inventory with `%s`, and plan again (or keep this node\'s '
                'nova-compute on its current release)' % (mec, cmds[0], cmds[1]))
    else:
        todo = ('This reshape does not remove inventory nova would remove: delete it with `%s` and plan '
                'again' % cmds[1])
    return ('the root provider %s has %s inventory (AMD SEV before 2025.2),%s, but %s. %s. %s. '
            'Nothing was changed.' % (name, mec, held, found, nova_does, todo))


class MemEncryption(Kind):
    """Memory encryption models -> ``<root>_<model>`` children; nova's takes-all rule for
    MEM_ENCRYPTION_CONTEXT and the SEV trait it takes off the root."""

    name = 'mem_encryption'
    discovery = 'node/discover/mem_encryption.py'
    need = 'mem_encryption'

    def children(self, root_name, devices, opts, nova, numa_source, warnings):
        return mem_encryption_children(root_name, devices)

    def describe(self, devices, nova, opts):
        return {'mem_encryption': mem_encryption_seen(devices)}

    def root_traits_remove(self, children):
        return [SEV_TRAIT] if any(c['takes_all'] for c in children) else []

    def taker(self, children, rc):
        return taker(children, rc)

    def check_root(self, work):
        """Stops a plan that would leave MEM_ENCRYPTION_CONTEXT on the root with no AMD SEV child
        to take it: nova 34's start-up reshape would fail or change the node."""
        if MEM_ENCRYPTION_CONTEXT not in work.root_inv or taker(work.children, MEM_ENCRYPTION_CONTEXT) is not None:
            return
        holders = work.tree.consumers_of(work.root['uuid'], MEM_ENCRYPTION_CONTEXT)
        raise PlanError(_refusal(work, holders), consumers=holders)

    def root_cleanup(self, layout, moved):
        # nova takes HW_CPU_X86_AMD_SEV off the root when it moves MEM_ENCRYPTION_CONTEXT
        if MEM_ENCRYPTION_CONTEXT in moved:
            return set(layout.get('root_traits_remove') or [])
        return set()

    def root_class(self, rc):
        return rc == 'MEM_ENCRYPTION_CONTEXT'


KIND = MemEncryption()
