# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""VCPU -> PCPU on the root, as nova's libvirt driver reports it since Train
(``_update_provider_tree_for_pcpu``, ``_get_pcpu_available``, ``_get_vcpu_available``)
under ``[compute]cpu_dedicated_set``, and which guests are pinned.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


from ...rules import inventory as inventory_rules
from ...rules import providers as provider_rules
from .common import KIND_PCPU, Kind, LayoutError, PlanError, amount_on, plan_count


def nova_cpu(devices, nova, opts):
    """The root's CPU inventory nova 34 reports under this nova.conf, and which guests are
    pinned; None when ``[compute]cpu_dedicated_set`` is not set (nothing to do).

    PCPU = the dedicated set (nova: ``_get_pcpu_available``), min_unit 1, max_unit =
    total, ratio 1, reserved 0; VCPU = ``cpu_shared_set`` (or ``vcpu_pin_set``), none
    when only the dedicated set is given (``_get_vcpu_available``).  A guest is pinned
    when every vCPU is pinned to one host CPU of the dedicated set (how nova defines a
    ``hw:cpu_policy=dedicated`` domain), unpinned when it floats; anything else is
    undecided unless ``opts`` (layout ``pcpu.pinned`` / ``pcpu.unpinned``) says.
    """
    compute = nova.get('compute') or {}
    dedicated = compute.get('cpu_dedicated_set')
    if not dedicated:
        return None
    online = set(devices.get('cpus_online') or [])
    files = ', '.join(nova.get('files') or ['nova.conf'])
    if online and not set(dedicated) <= online:
        raise LayoutError('%s: [compute]cpu_dedicated_set names CPUs %s that are not online on this '
                          'host (online: %s): nova 34 refuses to start with it'
                          % (files, cpus_text(sorted(set(dedicated) - online)), cpus_text(sorted(online))))
    shared = compute.get('cpu_shared_set') or compute.get('vcpu_pin_set')
    vcpus = len(shared) if shared else 0
    pinned = {}
    for uuid, info in sorted((devices.get('instances') or {}).items()):
        cpus = info.get('pinned_cpus')
        if not cpus:
            pinned[uuid] = False
        elif set(cpus) <= set(dedicated):
            pinned[uuid] = True
        else:
            pinned[uuid] = ('its vCPUs are pinned to host CPUs %s, not all in cpu_dedicated_set %s'
                            % (cpus_text(cpus), cpus_text(dedicated)))
    for uuid in opts.get('pinned') or []:
        pinned[provider_rules.normalize_uuid(uuid)] = True
    for uuid in opts.get('unpinned') or []:
        pinned[provider_rules.normalize_uuid(uuid)] = False
    return {
        'dedicated': list(dedicated), 'shared': list(shared) if shared else None,
        'pcpu': {'total': len(dedicated), 'min_unit': 1, 'max_unit': len(dedicated), 'step_size': 1,
                 'allocation_ratio': 1.0, 'reserved': 0},
        'vcpu_total': vcpus, 'pinned': pinned, 'files': files,
    }


def cpus_text(cpus):
    return ','.join(str(c) for c in cpus)


def cpu_inventory(root_inv, cpu, nova):
    """The root's VCPU/PCPU records nova 34 reports under ``cpu_dedicated_set``."""
    default = nova.get('default') or {}
    out = {'set': {'PCPU': inventory_rules.normalize_inventory(dict(cpu['pcpu']), 'PCPU')}, 'drop': []}
    if cpu['vcpu_total']:
        rec = dict(root_inv.get('VCPU') or {})
        n = cpu['vcpu_total']
        rec.update({'total': n, 'max_unit': n, 'min_unit': 1, 'step_size': 1,
                    'reserved': default.get('reserved_host_cpus') or 0})
        if default.get('cpu_allocation_ratio') is not None:
            rec['allocation_ratio'] = default['cpu_allocation_ratio']
        out['set']['VCPU'] = inventory_rules.normalize_inventory(rec, 'VCPU')
    else:
        out['drop'].append('VCPU')
    return out


def check_root_cpu(root, inv, used, used_before):
    """The root's VCPU/PCPU usage after the conversion fits what nova 34 reports."""
    for rc in ('VCPU', 'PCPU'):
        after = used.get(rc, 0)
        if rc not in inv:
            if after:
                raise PlanError('unpinned guests hold %d VCPU on %s but nova 34 would report no VCPU '
                                '(cpu_dedicated_set without cpu_shared_set). Set cpu_shared_set, or '
                                'name them in pcpu.pinned. Nothing was changed.' % (after, root['name']))
            continue
        if not inventory_rules.fits(inv[rc], used_before.get(rc, 0), after):
            raise PlanError('%s would have %d %s allocated but nova 34 reports a capacity of %d under '
                            'cpu_dedicated_set / cpu_shared_set. Nothing was changed.'
                            % (root['name'], after, rc, inventory_rules.capacity(inv[rc])))


def _converts(layout, root_inv):
    return bool(layout.get('cpu')) and 'PCPU' not in root_inv


class PCPU(Kind):
    """VCPU -> PCPU on the root (Train's cpu_dedicated_set): the root's CPU inventory as nova 34
    reports it, and the pinned guests' VCPU converted to PCPU in the same reshape."""

    name = 'pcpu'
    discovery = 'node/discover/numa.py (online CPUs) and node/discover/domains.py (vCPU pinning)'
    options = (KIND_PCPU,)
    plan_keys = ('cpu',)

    def describe(self, devices, nova, opts):
        return {'cpu': None if nova is None else nova_cpu(devices, nova, opts[KIND_PCPU])}

    def writes(self, layout, root_inv):
        return (set(['VCPU']) if _converts(layout, root_inv) else set()), set()

    def explained(self, layout):
        return set((layout.get('cpu') or {}).get('pinned') or {})

    def prepare_root(self, work):
        """Decides who is pinned before anything moves (a reason to defer when it cannot tell),
        then sets the root's VCPU/PCPU inventory nova 34 reports."""
        if not _converts(work.layout, work.root_inv):
            return None
        cpu = work.layout['cpu']
        pinned, undecided = [], []
        for consumer in sorted(work.current):
            if not amount_on(work.current[consumer], work.root_uuid, 'VCPU'):
                continue
            verdict = cpu['pinned'].get(consumer, 'no guest domain on this host is this consumer (a '
                                                  'migration in flight, or an orphan allocation)')
            if verdict is True:
                pinned.append(consumer)
            elif verdict is not False:
                undecided.append('%s: %s' % (consumer, verdict))
        if undecided:
            return ('VCPU to PCPU ([compute]cpu_dedicated_set in %s): cannot tell whether these '
                    'consumers are pinned guests: %s. Name them in the layout option pcpu.pinned or '
                    'pcpu.unpinned, or reshape once the migration is over'
                    % (cpu['files'], '; '.join(undecided)))
        cpu_plan = cpu_inventory(work.root_inv, cpu, work.layout.get('nova') or {})
        root_after = work.root_inventory_after()
        root_after.update(cpu_plan['set'])
        for rc in cpu_plan['drop']:
            root_after.pop(rc, None)
        work.set_result('cpu', cpu_plan)
        work.remember(self.name, pinned)
        return None

    def settle(self, work):
        """The pinned guests' VCPU on the root becomes PCPU; the root's usage must fit."""
        cpu_plan = work.result('cpu')
        if cpu_plan is None:
            return
        root_uuid, current = work.root_uuid, work.current
        pinned = work.recall(self.name) or []
        for consumer in pinned:
            allocs = work.allocations_of(consumer)
            res = allocs[root_uuid]['resources']
            n = res.pop('VCPU')
            res['PCPU'] = res.get('PCPU', 0) + n
            work.use(root_uuid, 'VCPU', -n)
            work.use(root_uuid, 'PCPU', n)
        cpu_plan['pinned'] = list(pinned)
        # what the conversion writes, for the result message (summary)
        cpu_plan['units'] = sum(amount_on(current[c], root_uuid, 'VCPU') for c in pinned)
        root_inv, after = work.root_inv, work.inv_after[root_uuid]
        cpu_plan['root_inventory'] = {
            'before': dict((rc, root_inv[rc]['total']) for rc in ('VCPU', 'PCPU') if rc in root_inv),
            'after': dict((rc, after[rc]['total']) for rc in ('VCPU', 'PCPU') if rc in after)}
        check_root_cpu(work.root, after, work.used.get(root_uuid) or {}, work.used_before.get(root_uuid) or {})

    def said(self, plan, past):
        cpu = plan.get('cpu')
        if not cpu:
            return []
        pinned = len(cpu.get('pinned') or [])
        if pinned:
            text = ('converted %d VCPU to PCPU of %d pinned consumer(s)' if past
                    else '%d VCPU to PCPU of %d pinned consumer(s) to convert') % (cpu.get('units', 0), pinned)
        else:
            text = 'no pinned consumer to convert from VCPU to PCPU'
        inv = cpu.get('root_inventory') or {}
        before, after = inv.get('before') or {}, inv.get('after') or {}
        changes = []
        for rc in ('PCPU', 'VCPU'):
            if rc in after and rc not in before:
                changes.append('%s inventory %d (new)' % (rc, after[rc]))
            elif rc in before and rc not in after:
                changes.append('%s inventory %d removed' % (rc, before[rc]))
            elif rc in before and before[rc] != after[rc]:
                changes.append('%s inventory %d -> %d' % (rc, before[rc], after[rc]))
        if changes:
            text += ' (root %s: %s)' % (plan['root']['name'], ', '.join(changes))
        return [text]

    def defer_hint(self, hits):
        if hits and not set(hits) - set(['VCPU']):
            return 'the layout option pcpu.pinned or pcpu.unpinned if you know whether it is pinned'
        return None

    def snapshot_summary(self, plan, tree):
        """``cpu_pinned``: the VCPU units on the root each pinned guest has converted to PCPU."""
        root_uuid = plan['root']['uuid']
        return {'cpu_pinned': dict((c, tree.amount(c, root_uuid, 'VCPU'))
                                   for c in ((plan.get('cpu') or {}).get('pinned') or []))}

    def planned_changes(self, plan, consumer, then, planned, moves, delta):
        """The VCPU -> PCPU conversion turns a pinned guest's VCPU on the root into PCPU
        (``cpu_pinned``; a plan recorded before it existed: the consumer's PCPU increase the
        kinds before this one (``delta``) do not account for, taken from its VCPU)."""
        pinned = plan.get('cpu_pinned')
        if isinstance(pinned, dict):
            n = plan_count(pinned.get(consumer)) or 0
        else:
            n = max(0, planned.get('PCPU', 0) - then.get('PCPU', 0) - delta.get('PCPU', 0))
        return {'VCPU': -n, 'PCPU': n} if n else {}

    def root_classes_changed(self, plan):
        """The conversion changes the root's VCPU and PCPU totals in place."""
        return ('VCPU', 'PCPU')


KIND = PCPU()
