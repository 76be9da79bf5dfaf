# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cloud twin's 2-node stage (`make cloud-twin-stage`): a live cloud rolled from nova 33 to 34.

On the control plane of tests/cloud_twin/cloud.py (nova 34's api/conductor/scheduler, Keystone,
Placement under uWSGI on MariaDB, RabbitMQ) two nodes run nova-compute 33 (their own venv) on
fakelibvirt: ``cmp-vgpu`` (two T4 GPUs: nova 33 already puts VGPU on the pGPU children, the roll only
adds nova 34's ``OWNER_NOVA`` trait) and ``cmp-pcpu`` (legacy ``vcpu_pin_set``: pinned guests hold VCPU,
the roll converts them to PCPU).  Guests are booted through nova-api with
openstacksdk: one asking VGPU (as the user ``demo``), one pinned-CPU (as the operator, on cmp-pcpu: it
would fit both nodes).  Then the roll as an operator
runs it: ``playbooks/rolling_reshape.yml`` (serial 2: both nodes in one batch, the nova steps on: disable, stop nova-compute
33, reshape, switch the node to nova 34's venv in the post hook, start, wait up and reported,
enable) with a clouds.yaml of the user ``operator`` (password auth, endpoints from the catalog).

Asserted: the roll succeeds; every consumer's per-class totals are the same before and after; the
VGPU guest's VGPU stays on its pGPU child provider, the pinned guest holds PCPU (not VCPU) on the
root; the nova service user's only writes to Placement during the roll (Placement's own request log)
are, per node, the PUTs of the root's traits with which nova-compute answers the disable (nova 33
adds COMPUTE_STATUS_DISABLED) and the enable (nova 34 takes it off), and where nova 33 raced the
disable by itself, its racing report (docs/cloud-twin.md; operator_run.check_status_answers): split
at the node's start on nova 34 (novactl's journal against Placement's log times), nova 34 wrote one
PUT, the enable's answer, and no inventory, allocation, reshape or child provider, and its start-up
pass left the tree the roll laid (the role itself fails a node whose provider generation moves
between nova's start and its report); both nodes run nova 34, enabled and up;
``nova-manage placement audit --verbose`` finds nothing; ``heal_allocations --dry-run`` has nothing
to do for the pinned guest (rc 4) and refuses the vGPU guest as nova always does (rc 8);
``nova-status upgrade check`` passes.  Printed: the roll's minutes and the figures.
"""

import os
import time

import openstack
import openstack.config
import pytest

import cloud as cloud_mod
import novactl
import operator_run

pytestmark = [pytest.mark.real, pytest.mark.slow]

NODES = (('vgpu', 'cmp-vgpu'), ('pcpu', 'cmp-pcpu'))
STATUS_RACE_TASKS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'nova33_status_race.yml')


def _connect(clouds_yaml, name):
    config = openstack.config.OpenStackConfig(config_files=[clouds_yaml])
    return openstack.connection.Connection(config=config.get_one(name))


def _provider_names(state):
    return dict((uuid, rp['name']) for uuid, rp in state.items())


def test_two_node_roll_33_to_34(cloud, clouds_yaml):
    figures = {}
    began = time.monotonic()
    made = operator_run.start_nodes(cloud, NODES, release='33')
    figures['nodes up on nova 33 (s)'] = time.monotonic() - began
    for node in made.values():
        assert novactl.installed_version(novactl.release_of(node)).startswith('33.')

    # a user's clouds.yaml next to the operator's
    user_yaml = cloud.clouds_yaml(cloud.path('clouds-demo.yaml'), name='twin-demo', user='demo')
    admin = _connect(clouds_yaml, 'twin')
    demo = _connect(user_yaml, 'twin-demo')
    flavors = {
        'vgpu': operator_run.flavor(admin, 'twin-vgpu', extra_specs={'resources:VGPU': '1'}),
        'pcpu': operator_run.flavor(admin, 'twin-pinned', vcpus=2, extra_specs={'hw:cpu_policy': 'dedicated'}),
    }
    guests = {}
    boot_times = []
    # the VGPU guest fits cmp-vgpu only (the user boots it); a pinned guest fits both nodes through nova's
    # VCPU fallback query, so the operator places it on cmp-pcpu (availability zone nova:cmp-pcpu, admin only)
    for kind, flv in sorted(flavors.items()):
        conn, host = (demo, None) if kind == 'vgpu' else (admin, 'cmp-pcpu')
        server, took = operator_run.boot(conn, 'guest-%s' % kind, flv.id, cloud_mod.IMAGE_ID, host=host)
        boot_times.append(took)
        guests[kind] = admin.compute.get_server(server.id)
        assert guests[kind].status == 'ACTIVE', guests[kind]
    figures['boots before the roll (s)'] = ', '.join('%.1f' % t for t in boot_times)
    assert guests['vgpu'].compute_host == 'cmp-vgpu'
    assert guests['pcpu'].compute_host == 'cmp-pcpu'

    before = operator_run.placement_state(cloud)
    totals_before = operator_run.consumer_totals(before)
    # nova 33's layout: VGPU on a pGPU child (nova has put it there since Stein: nothing to move for
    # vGPU from 33, the roll adds nova 34's OWNER_NOVA trait), the pinned guest's CPUs as VCPU (the move)
    vgpu_before = operator_run.consumer_providers(before, guests['vgpu'].id)['VGPU']
    assert len(vgpu_before) == 1 and vgpu_before[0].startswith('cmp-vgpu_pci_'), vgpu_before
    assert 'VCPU' in totals_before[guests['pcpu'].id] and 'PCPU' not in totals_before[guests['pcpu'].id]

    out = cloud.path('roll')
    os.makedirs(out, exist_ok=True)
    # on cmp-pcpu, nova 33's race at the disable is replayed (tests/cloud_twin/nova33_status_race.yml, a
    # pre hook): its root's traits without COMPUTE_STATUS_DISABLED, as nova 33's periodic report once wrote
    # them right after the disable (a stage run caught it); the reshape lays the trait again, as nova reports
    # a disabled service's root, so nova 34's start on the still-disabled service has nothing to add
    inventory = operator_run.inventory(made, out, host_vars={'cmp-pcpu': {'cloud_twin_status_race': True}})
    log_offset = cloud.placement_log_size()
    roll_began = time.time()
    result, roll_seconds = operator_run.run_roll(out, inventory, clouds_yaml, {
        'rolling_reshape_serial': 2,
        'rolling_reshape_nova_expected_version': '34.0.0',
        'rolling_reshape_nova_timeout': 300,
        'rolling_reshape_run_id': 'cloud-twin-stage',
        'rolling_reshape_pre_tasks': STATUS_RACE_TASKS,
    })
    figures['roll (s)'] = roll_seconds
    assert result.returncode == 0, result.stdout[-6000:]

    after = operator_run.placement_state(cloud)
    totals_after = operator_run.consumer_totals(after)
    expected = dict(totals_before)
    # the pinned guest's CPUs move from VCPU to PCPU (the reshape's one change of class)
    pinned = dict(expected[guests['pcpu'].id])
    pinned['PCPU'] = pinned.pop('VCPU')
    expected[guests['pcpu'].id] = pinned
    assert totals_after == expected

    names = _provider_names(after)
    vgpu_on = operator_run.consumer_providers(after, guests['vgpu'].id)
    assert vgpu_on['VGPU'] == vgpu_before, vgpu_on
    vgpu_rp = [u for u, n in names.items() if n == vgpu_on['VGPU'][0]][0]
    assert names[after[vgpu_rp]['parent']] == 'cmp-vgpu'
    assert 'VGPU' not in after[[u for u, n in names.items() if n == 'cmp-vgpu'][0]]['inventories']
    assert operator_run.consumer_providers(after, guests['pcpu'].id)['PCPU'] == ['cmp-pcpu']

    # nova's writes during the roll, by node: the only ones are the PUT of the root's traits that nova-compute
    # makes when its service is disabled (nova 33 adds COMPUTE_STATUS_DISABLED) and enabled again (nova 34
    # takes it off), nova's answer to the os-services update, and on a node where nova 33's status race
    # happened by itself, its racing report (the pass laid the trait again); nova 34's start wrote nothing;
    # no inventory, allocation, reshaper or child provider write, and no trait left behind
    split, writes = operator_run.nova_writes_by_release(
        cloud, after, list(made), log_offset, operator_run.started_on(made, '34', roll_began))
    records = dict((h, operator_run.node_record(out, h, 'cloud-twin-stage')) for h in made)
    raced = operator_run.check_status_answers(split, records)
    roots = dict((rp['name'], uuid) for uuid, rp in after.items() if rp['parent'] is None)
    for hostname in sorted(split):
        traits = operator_run.placement_get(cloud, '/resource_providers/%s/traits' % roots[hostname])['traits']
        assert 'COMPUTE_STATUS_DISABLED' not in traits and 'OWNER_NOVA' in traits, (hostname, traits)
    operator_writes = cloud.placement_requests(user='operator', since=log_offset, writes_only=True)
    assert operator_writes, 'the roll reshaped through Placement as the operator'
    # the replay took the trait off cmp-pcpu's root before its reshape (the operator's first trait PUT
    # there, before its POST /reshaper), and the reshape put it back with OWNER_NOVA (the journal's words);
    # when nova 33 raced there by itself (its racing report already took the trait off), the replay had
    # nothing to change and wrote nothing
    # (a POST /reshaper answered 400 is device_info's probe of nova's credentials: it changed nothing)
    pcpu_writes = [(w['method'], w['uri']) for w in operator_writes
                   if (w['uri'] == '/reshaper' and w['status'] < 300) or roots['cmp-pcpu'] in w['uri']]
    reshape_at = pcpu_writes.index(('POST', '/reshaper'))
    replayed = ('PUT', '/resource_providers/%s/traits' % roots['cmp-pcpu']) in pcpu_writes[:reshape_at]
    assert replayed == ('cmp-pcpu' not in raced), (raced, pcpu_writes)
    pcpu_record = operator_run.node_record(out, 'cmp-pcpu', 'cloud-twin-stage')
    assert 'COMPUTE_STATUS_DISABLED' in operator_run.root_traits_added(pcpu_record), pcpu_record
    figures['Placement writes during the roll'] = 'operator %d; nova %d (%s)' % (
        len(operator_writes), len(writes), ', '.join(
            '%s: disable%s + enable traits' % (h, ' + its racing report' if h in raced else '') for h in sorted(split)))

    services = dict((s['host'], s) for s in cloud.services() if s['binary'] == 'nova-compute')
    for hostname, node in made.items():
        assert novactl.installed_version(novactl.release_of(node)) == '34.0.0'
        assert (services[hostname]['status'], services[hostname]['state']) == ('enabled', 'up'), services[hostname]

    audit = cloud.nova_manage('placement', 'audit', '--verbose', check=False)
    assert audit.returncode == 0, audit.stdout[-3000:]
    assert 'orphaned allocation' not in audit.stdout.lower(), audit.stdout[-3000:]
    # 4: "Command completed successfully but no allocations were created" (nothing to heal)
    heal = cloud.nova_manage('placement', 'heal_allocations', '--dry-run', '--verbose', '--skip-port-allocations',
                             '--instance', guests['pcpu'].id, check=False)
    assert heal.returncode == 4, heal.stdout[-3000:]
    # nova's heal_allocations does not handle vGPU guests at all (rc 8, its documented answer; see
    # docs/upgrade-twin.md "vGPU: heal_allocations cannot check a vGPU host")
    heal = cloud.nova_manage('placement', 'heal_allocations', '--dry-run', '--verbose', '--skip-port-allocations',
                             '--instance', guests['vgpu'].id, check=False)
    assert heal.returncode == 8 and 'vGPU resource request is not supported' in heal.stdout, heal.stdout[-3000:]
    status = cloud.nova_tool('nova-status', 'upgrade', 'check', check=False)
    assert status.returncode == 0, status.stdout[-3000:]

    print('\ncloud twin stage figures:')
    for key, value in figures.items():
        print('  %s: %s' % (key, '%.1f' % value if isinstance(value, float) else value))
    print('  control plane start-up (s): %s' % ', '.join('%s %.1f' % kv for kv in cloud.timings.items()))
    print('  run folder: %s' % cloud.run_dir)
