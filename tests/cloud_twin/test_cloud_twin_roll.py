# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cloud twin's 6-node roll of a live cloud under load (`make cloud-twin`, not `make test`).

Its own control plane (tests/cloud_twin/cloud.py, with ``allow_resize_to_same_host``: the resize below
stays on its node) and six nodes on nova-compute 33 (``.venv-nova33``), one per kind of
tests/cloud_twin/nodes.py: ``roll-vgpu`` (2 T4 GPUs), ``roll-pci`` (report_in_placement, turned on with
nova 34), ``roll-pcpu`` (legacy vcpu_pin_set), ``roll-sev``, ``roll-mixed`` (vGPU + vcpu_pin_set),
``roll-new`` (already cpu_dedicated_set / cpu_shared_set).  As an operator keeps pinned guests off
shared hosts, two availability zones (host aggregates): ``pinned`` (roll-pcpu, roll-mixed) and
``shared`` (the four others).

Before the roll, guests booted through nova-api with openstacksdk: a vGPU guest and a PCI-alias guest
(the user ``demo``, AZ shared), pinned guests on roll-pcpu, roll-mixed (vGPU + pinned) and roll-new, a
SEV guest (an image with hw_firmware_type=uefi, hw_machine_type=q35: set through nova's image metadata
API, nova's in-memory test images being the twin's Glance), and a second SEV guest resized (2 -> 3
vCPUs, on its node: the SEV flavor fits roll-sev only) and left in VERIFY_RESIZE: a migration in flight.

The roll: ``playbooks/rolling_reshape.yml`` (operator_run.run_roll: serial 2, nova steps on, as the
stage).  While it runs, load.LoadGenerator boots and deletes guests through nova-api as ``demo`` (AZ
shared: a plain flavor and a vGPU one, which only roll-vgpu can take there), load.ServiceWatcher reads
nova's os-services every 0.5 s, and once the first node is enabled again the operator confirms the
resize (its node, roll-sev, is in the last batch).

Asserted (every failure collected, all printed after the figures): the roll succeeds; every boot is
ACTIVE, or ERROR with NoValidHost only while the only enabled hosts of its AZ lacked the flavor's
resources (for the vGPU flavor: roll-vgpu disabled; the test names them); no boot was scheduled on a
host while the watcher saw it disabled; every pre-existing consumer's per-class totals are the same
before and after but the intended moves (the pinned guests' VCPU -> PCPU on roll-pcpu and roll-mixed,
the PCI guest's device into Placement) and the confirmed migration's allocation (gone); every guest's
allocation sits on the provider nova 34 lays out (VGPU on the GPU holding its mdev, the PCI class on
its device's child, MEM_ENCRYPTION_CONTEXT on the SEV child, PCPU on the root); nova's writes to
Placement during the roll are, per node, the two trait PUTs of the disable and enable (roll-new, which
the roll leaves alone, restarted on nova 34 as a deployment tool does: one PUT adding OWNER_NOVA, nova
34's mark that nova 33 never wrote, and no other trait change), plus the
allocations of the load's guests and the confirm (no inventory, provider, reshape or other trait write,
no allocation of a pre-existing guest); every node runs nova 34, enabled and up; ``nova-manage
placement audit --verbose`` finds nothing; ``heal_allocations --dry-run --skip-port-allocations`` has
nothing to do (rc 4; rc 8 for vGPU guests, nova's own refusal); ``nova-status upgrade check`` passes;
the resize is confirmed.

Printed: per node the downtime (first seen disabled -> first seen enabled again, os-services), nova-
compute's own stop and start (tests/cloud_twin/novactl.py's journal), what the roll adds (downtime
minus stop and start) and the node's pass (the roll's report); the boots during the roll: count,
p50/p95 seconds to ACTIVE, failures by cause.
"""

import glob
import json
import os
import threading
import time

import openstack
import openstack.config
import pytest

import cloud as cloud_mod
import load
import nodes
import novactl
import operator_run

pytestmark = [pytest.mark.real, pytest.mark.slow]

NODES = (('vgpu', 'roll-vgpu'), ('pci', 'roll-pci'), ('pcpu', 'roll-pcpu'), ('sev', 'roll-sev'),
         ('mixed', 'roll-mixed'), ('new', 'roll-new'))
ZONES = {'pinned': ('roll-pcpu', 'roll-mixed'), 'shared': ('roll-vgpu', 'roll-pci', 'roll-sev', 'roll-new')}
#: nova's test image the SEV guests boot from (GlanceFixture's image ``a2459075``), given the
#: properties nova requires of a memory-encrypted guest
SEV_IMAGE = 'a2459075-d96c-40d5-893e-577ff92e721c'
SEV_PROPERTIES = {'hw_firmware_type': 'uefi', 'hw_machine_type': 'q35'}
PCI_CLASS = 'CUSTOM_PCI_10DE_25B6'
#: hosts of AZ shared that have each load flavor's resources (the NoValidHost rule)
LOAD_CAPABLE = {'plain': ('roll-vgpu', 'roll-pci', 'roll-sev', 'roll-new'), 'vgpu': ('roll-vgpu',)}
SCHEDULER_FILTERS = ('ComputeFilter', 'ComputeCapabilitiesFilter', 'ImagePropertiesFilter',
                     'ServerGroupAntiAffinityFilter', 'ServerGroupAffinityFilter', 'PciPassthroughFilter',
                     'NUMATopologyFilter')
LOAD_MAX_BOOTS = int(os.environ.get('CLOUD_TWIN_ROLL_MAX_BOOTS', '60'))


class RollCloud(cloud_mod.Cloud):
    """The twin's control plane with ``allow_resize_to_same_host``, the PCI alias of the pci node
    (nova-api turns a flavor's alias into the guest's PCI request) and the scheduler filters of a cloud
    with PCI passthrough and pinned guests (nova's defaults plus PciPassthroughFilter and
    NUMATopologyFilter, as devstack enables them)."""

    def nova_conf_text(self, host='controller', state_path=None):
        text = super(RollCloud, self).nova_conf_text(host, state_path)
        text = text.replace('[DEFAULT]\n', '[DEFAULT]\nallow_resize_to_same_host = true\n', 1)
        return text + ('\n[pci]\nalias = %s\n\n[filter_scheduler]\nenabled_filters = %s\n'
                       % (nodes.PCI_ALIAS, ','.join(SCHEDULER_FILTERS)))


@pytest.fixture(scope='module')
def roll_cloud(request):
    run_dir = os.environ.get('CLOUD_TWIN_ROLL_RUN_DIR') or os.path.join(
        cloud_mod.REPO, 'tests', 'output', 'cloud-twin',
        '%s-%d-roll' % (time.strftime('%Y%m%dT%H%M%SZ', time.gmtime()), os.getpid()))
    twin = RollCloud(run_dir)
    request.addfinalizer(twin.stop)
    twin.start()
    return twin


def _connect(clouds_yaml, name):
    config = openstack.config.OpenStackConfig(config_files=[clouds_yaml])
    return openstack.connection.Connection(config=config.get_one(name))


class Problems(list):
    def check(self, ok, message):
        if not ok:
            self.append(message)
        return ok


def _compute(conn, method, path, microversion='2.88', body=None):
    resp = conn.compute.request(path, method, json=body, microversion=microversion, raise_exc=True)
    return resp.json() if resp.content else None


def _set_image_properties(conn, image_id, properties, tries=40):
    """nova's image metadata API (microversion 2.35; nova-api's in-memory image service is per worker
    process: set until 12 reads in a row, spread over the workers, show the properties)."""
    for _attempt in range(tries):
        _compute(conn, 'POST', '/images/%s/metadata' % image_id, '2.35', {'metadata': properties})
        reads = [_compute(conn, 'GET', '/images/%s' % image_id, '2.35')['image']['metadata'] for _read in range(12)]
        if all(all(r.get(k) == v for k, v in properties.items()) for r in reads):
            return
    raise AssertionError('nova-api does not keep the properties %s of image %s' % (properties, image_id))


def _aggregate(conn, name, zone, hosts):
    made = _compute(conn, 'POST', '/os-aggregates', body={'aggregate': {'name': name, 'availability_zone': zone}})
    for host in hosts:
        _compute(conn, 'POST', '/os-aggregates/%s/action' % made['aggregate']['id'], body={'add_host': {'host': host}})


def _wait_status(conn, server_id, status, timeout=300):
    deadline = time.monotonic() + timeout
    while True:
        server = conn.compute.get_server(server_id)
        if server.status == status:
            return server
        if server.status == 'ERROR' or time.monotonic() > deadline:
            raise AssertionError('%s is %s (not %s): %s' % (server_id, server.status, status, server.fault))
        time.sleep(1)


def _migrations(conn, server_id):
    return _compute(conn, 'GET', '/os-migrations?instance_uuid=%s' % server_id, '2.80')['migrations']


def _roots(state):
    return dict((rp['name'], uuid) for uuid, rp in state.items() if rp['parent'] is None)


def _held(state, consumer):
    """{provider name: {rc: amount}} of ``consumer``."""
    out = {}
    for rp in state.values():
        if consumer in rp['allocations']:
            out[rp['name']] = dict(rp['allocations'][consumer])
    return out


def _mdev_gpu(node_dir, guest_name):
    """The child provider name suffix of the GPU whose mdev the guest's domain holds (host.json)."""
    for gpu in nodes.read_spec(node_dir).get('gpus', []):
        for mdev in gpu.get('mdevs', []):
            if mdev.get('holder') == guest_name:
                return 'pci_' + gpu['address'].replace(':', '_').replace('.', '_')
    return None


def _pci_held(node_dir, guest_name):
    for dev in nodes.read_spec(node_dir).get('pci_devices', []):
        if dev.get('holder') == guest_name:
            return dev['address']
    return None


def _instance_name(conn, server_id):
    return _compute(conn, 'GET', '/servers/%s' % server_id)['server']['OS-EXT-SRV-ATTR:instance_name']


def _fmt(value):
    return '-' if value is None else ('%.1f' % value)


def test_six_node_roll_under_load(roll_cloud):
    cloud = roll_cloud
    problems = Problems()
    figures = {}
    clouds_yaml = cloud.clouds_yaml(cloud.path('clouds.yaml'))
    demo_yaml = cloud.clouds_yaml(cloud.path('clouds-demo.yaml'), name='twin-demo', user='demo')
    began = time.monotonic()
    made = operator_run.start_nodes(cloud, NODES, release='33')
    figures['6 nodes up on nova 33 (s)'] = time.monotonic() - began
    hosts = [h for _k, h in NODES]

    admin = _connect(clouds_yaml, 'twin')
    demo = _connect(demo_yaml, 'twin-demo')
    for zone, members in sorted(ZONES.items()):
        _aggregate(admin, 'agg-' + zone, zone, members)
    _set_image_properties(admin, SEV_IMAGE, SEV_PROPERTIES)
    flv = {
        'vgpu': operator_run.flavor(admin, 'roll-vgpu', extra_specs=nodes.FLAVORS['vgpu']),
        'pci': operator_run.flavor(admin, 'roll-pci', extra_specs=nodes.FLAVORS['pci']),
        'pinned': operator_run.flavor(admin, 'roll-pinned', vcpus=2, extra_specs=nodes.FLAVORS['pcpu']),
        'mixed': operator_run.flavor(admin, 'roll-mixed', vcpus=2, extra_specs=nodes.FLAVORS['mixed']),
        'sev': operator_run.flavor(admin, 'roll-sev', vcpus=2, extra_specs=nodes.FLAVORS['sev']),
        'sev-big': operator_run.flavor(admin, 'roll-sev-big', vcpus=3, extra_specs=nodes.FLAVORS['sev']),
        'plain': operator_run.flavor(admin, 'roll-plain', ram=256),
    }

    # -- guests before the roll --------------------------------------------------------------
    began = time.monotonic()
    wanted = (  # (key, user, flavor, image, availability zone, host it must land on)
        ('vgpu', demo, 'vgpu', cloud_mod.IMAGE_ID, 'shared', 'roll-vgpu'),
        ('pci', demo, 'pci', cloud_mod.IMAGE_ID, 'shared', 'roll-pci'),
        ('sev', demo, 'sev', SEV_IMAGE, 'shared', 'roll-sev'),
        ('resized', demo, 'sev', SEV_IMAGE, 'shared', 'roll-sev'),
        ('pinned', admin, 'pinned', cloud_mod.IMAGE_ID, 'pinned:roll-pcpu', 'roll-pcpu'),
        ('mixed', admin, 'mixed', cloud_mod.IMAGE_ID, 'pinned:roll-mixed', 'roll-mixed'),
        ('new', admin, 'pinned', cloud_mod.IMAGE_ID, 'shared:roll-new', 'roll-new'),
    )
    guests = {}
    for key, conn, flavor_key, image, zone, host in wanted:
        server = conn.compute.create_server(name='guest-%s' % key, flavor_id=flv[flavor_key].id, image_id=image,
                                            networks='none', availability_zone=zone)
        guests[key] = server.id
    for key, _conn, _f, _i, _z, host in wanted:
        shown = _wait_status(admin, guests[key], 'ACTIVE')
        assert shown.compute_host == host, (key, shown.compute_host)
    figures['7 guests booted (s)'] = time.monotonic() - began
    names = dict((key, _instance_name(admin, sid)) for key, sid in guests.items())

    began = time.monotonic()
    admin.compute.resize_server(guests['resized'], flv['sev-big'].id)
    _wait_status(admin, guests['resized'], 'VERIFY_RESIZE')
    figures['resize to VERIFY_RESIZE (s)'] = time.monotonic() - began
    migration = [m for m in _migrations(admin, guests['resized']) if m['migration_type'] == 'resize'][0]
    assert migration['status'] == 'finished' and migration['source_compute'] == migration['dest_compute'] == 'roll-sev'

    before = operator_run.placement_state(cloud)
    totals_before = operator_run.consumer_totals(before)
    assert migration['uuid'] in totals_before, 'the migration holds the old flavor on roll-sev'
    for key in ('pinned', 'mixed'):
        assert 'VCPU' in totals_before[guests[key]] and 'PCPU' not in totals_before[guests[key]]
    assert PCI_CLASS not in totals_before[guests['pci']]

    # -- the roll, under load ----------------------------------------------------------------
    out = cloud.path('roll')
    os.makedirs(out, exist_ok=True)
    inventory = operator_run.inventory(made, out)
    log_offset = cloud.placement_log_size()
    watcher = load.ServiceWatcher(cloud, hosts, interval=0.5)
    watcher.start()
    generator = load.LoadGenerator(lambda: _connect(demo_yaml, 'twin-demo'), lambda: _connect(clouds_yaml, 'twin'),
                                   [('plain', flv['plain'].id), ('vgpu', flv['vgpu'].id)], cloud_mod.IMAGE_ID,
                                   max_boots=LOAD_MAX_BOOTS, max_seconds=1200.0, workers=2, prefix='load',
                                   availability_zone='shared')
    confirm = {}

    def confirm_midway():
        # the operator confirms the resize once the first node of the roll is back in service
        deadline = time.monotonic() + 1500
        while time.monotonic() < deadline and not confirm.get('cancel'):
            if any(iv[3] for h in hosts for iv in watcher.disabled_intervals(h)):
                break
            time.sleep(0.5)
        if confirm.get('cancel'):
            return
        try:
            conn = _connect(clouds_yaml, 'twin')
            confirm['at'] = time.time()
            confirm['node_state'] = dict((h, watcher.samples[-1][1].get(h)) for h in hosts)
            conn.compute.confirm_server_resize(guests['resized'])
            _wait_status(conn, guests['resized'], 'ACTIVE')
            while [m for m in _migrations(conn, guests['resized']) if m['status'] != 'confirmed']:
                time.sleep(0.5)
            confirm['done'] = time.time()
        except Exception as exc:  # pylint: disable=broad-except  # asserted below
            confirm['error'] = '%s: %s' % (type(exc).__name__, exc)
    confirmer = threading.Thread(target=confirm_midway, name='confirm', daemon=True)
    roll_began = time.time()
    generator.start()
    confirmer.start()
    try:
        result, roll_seconds = operator_run.run_roll(out, inventory, clouds_yaml, {
            'rolling_reshape_serial': 2,
            'rolling_reshape_nova_expected_version': '34.0.0',
            'rolling_reshape_nova_timeout': 300,
            'rolling_reshape_run_id': 'cloud-twin-roll',
        })
    finally:
        roll_ended = time.time()
        still = generator.stop()
        confirm['cancel'] = True
        confirmer.join(120)
        watcher.stop()
    figures['roll (s)'] = roll_seconds
    assert result.returncode == 0, result.stdout[-8000:]
    problems.check(not still, 'load workers still running: %s' % still)
    problems.check(not generator.errors, 'load generator: %s' % generator.errors)
    problems.check(confirm.get('done') and not confirm.get('error'), 'the midway confirm: %s' % confirm)

    # -- per node: downtime, nova-compute's stop and start, what the roll adds -------------
    report_dir = os.path.join(out, 'reports', 'cloud-twin-roll', 'nodes')
    records = {}
    for path in glob.glob(os.path.join(report_dir, '*.json')):
        with open(path) as handle:
            rec = json.load(handle)
        records[rec.get('node')] = rec
    # the outcome in the report's own words (its summary: "updated" is a record that wrote only traits
    # or empty children, no POST /reshaper)
    with open(os.path.join(out, 'reports', 'cloud-twin-roll', 'summary.json')) as handle:
        outcomes = dict((n['node'], n['status']) for n in json.load(handle)['nodes'])
    # a node with nothing to reshape is not touched by the roll (not disabled, stopped or switched: the
    # role's design); its upgrade is the deployment tool's plain restart on the new release, done here
    skipped = sorted(h for h in hosts if (records.get(h) or {}).get('status') == 'noop')
    rolled = [h for h in hosts if h not in skipped]
    problems.check(all((records.get(h) or {}).get('status') in ('reshaped', 'updated') for h in rolled),
                   'the nodes\' outcomes: %s' % dict((h, (records.get(h) or {}).get('status')) for h in hosts))
    plain = {}
    # nova 33 does not mark its compute nodes OWNER_NOVA (nova 34's resource tracker does, at its first
    # start: one PUT of the root's traits).  The roll adds it only with a write it makes anyway (a
    # reshape, children, their traits); a node with nothing else to change is left alone, so nova 34
    # adds it there itself, and that must be the only change it makes.
    traits_before_restart = dict((h, set(operator_run.placement_get(
        cloud, '/resource_providers/%s/traits' % _roots(before)[h])['traits'])) for h in skipped)
    for host in skipped:
        novactl.stop(made[host])
        novactl.switch(made[host], '34')
        novactl.start(made[host], '34', wait_up=True, timeout=300)
    if skipped:
        cloud.wait_services(('nova-compute',), timeout=300, hosts=skipped)
    per_node = {}
    for host in hosts:
        intervals = watcher.disabled_intervals(host)
        journal = novactl.read_journal(made[host])
        stops = [e for e in journal if e['action'] == 'stop' and e['began'] >= roll_began]
        starts = [e for e in journal if e['action'] == 'start' and e['began'] >= roll_began]
        if host in skipped:
            problems.check(intervals == [], '%s (skipped by the roll) was disabled: %s' % (host, intervals))
            problems.check(all(e['began'] >= roll_ended for e in stops + starts),
                           '%s (skipped) was restarted during the roll: %s' % (host, stops + starts))
        else:
            problems.check(len(intervals) == 1 and intervals[0][3] is not None,
                           '%s: os-services disabled intervals %s (one, ended, expected)' % (host, intervals))
        problems.check(len(stops) == 1 and len(starts) == 1 and starts[0]['release'] == '34',
                       '%s: novactl journal since the roll began %s' % (host, stops + starts))
        row = {'intervals': intervals}
        if intervals and intervals[0][3]:
            row['downtime'] = intervals[0][3] - intervals[0][1]
        if stops:
            row['stop'] = stops[0]['ended'] - stops[0]['began']
        if starts:
            row['start'] = starts[0]['ended'] - starts[0]['began']
            row['started_34'] = starts[0]['began']
        if 'downtime' in row and 'stop' in row and 'start' in row:
            row['roll_adds'] = row['downtime'] - row['stop'] - row['start']
        rec = records.get(host) or {}
        if rec.get('started') and rec.get('finished'):
            row['pass'] = float(rec['finished']) - float(rec['started'])
        row['status'] = '%s%s' % (outcomes.get(host), ' + plain restart' if host in skipped else '')
        per_node[host] = row

    # -- the boots during the roll -------------------------------------------------------------
    boots = generator.records
    causes = {}
    latencies = []
    for boot in boots:
        problems.check(boot['error'] is None, '%s: %s' % (boot['name'], boot['error']))
        problems.check(boot['deleted'] == 'deleted', '%s: delete %s' % (boot['name'], boot['deleted']))
        if boot['status'] == 'ACTIVE':
            latencies.append(boot['end'] - boot['start'])
            causes['ACTIVE'] = causes.get('ACTIVE', 0) + 1
            host = boot['host']
            problems.check(host in LOAD_CAPABLE[boot['flavor']], '%s landed on %s' % (boot['name'], host))
            scheduled = [e for e in boot['events'] if e[0].startswith('conductor')]
            when = scheduled[0][2] if scheduled else boot['start']
            for iv in watcher.disabled_intervals(host):
                inside = iv[1] <= when <= iv[2]
                problems.check(not inside, '%s was scheduled on %s at %.1f while os-services showed it disabled '
                               '(%.1f-%.1f)' % (boot['name'], host, when, iv[1], iv[2]))
            continue
        fault = boot['fault'] or boot['status'] or 'no status'
        if 'No valid host' in fault:
            # NoValidHost is right only when every host of AZ shared with the flavor's resources was out
            # of service (disabled as the watcher saw it: between its last read enabled and its first read
            # enabled again) when the boot was asked (the scheduler runs within about a second of it)
            capable = LOAD_CAPABLE[boot['flavor']]
            enabled_somewhere = [h for h in capable
                                 if not any((iv[0] or 0) <= boot['start'] and (iv[3] is None or boot['start'] <= iv[3])
                                            for iv in watcher.disabled_intervals(h))]
            key = 'NoValidHost (%s: %s disabled)' % (boot['flavor'], ', '.join(capable))
            problems.check(not enabled_somewhere, '%s: NoValidHost while %s could take it (%s)'
                           % (boot['name'], enabled_somewhere, fault))
        else:
            key = '%s: %s' % (boot['status'], fault[:120])
            problems.check(False, '%s ended %s on %s: %s' % (boot['name'], boot['status'], boot['host'], fault))
        causes[key] = causes.get(key, 0) + 1
    problems.check(len(boots) >= 4, 'the load generator booted only %d guests' % len(boots))
    problems.check(any(b['flavor'] == 'vgpu' and b['status'] == 'ACTIVE' for b in boots),
                   'no vGPU guest booted during the roll')

    # -- Placement after the roll ---------------------------------------------------------------
    after = operator_run.placement_state(cloud)
    totals_after = operator_run.consumer_totals(after)
    expected = dict((c, dict(t)) for c, t in totals_before.items())
    expected.pop(migration['uuid'])                # confirmed: the old flavor's allocation goes
    for key in ('pinned', 'mixed'):                # the reshape's change of class
        expected[guests[key]]['PCPU'] = expected[guests[key]].pop('VCPU')
    expected[guests['pci']][PCI_CLASS] = 1         # the device, now in Placement
    load_ids = set(b['id'] for b in boots if b['id'])
    leftover = sorted(set(totals_after) & load_ids)
    problems.check(not leftover, 'load guests still hold allocations: %s' % leftover)
    problems.check(dict((c, t) for c, t in totals_after.items() if c not in load_ids) == expected,
                   'consumer totals: expected %s, found %s' % (expected, totals_after))

    roots = _roots(after)
    where = dict((key, _held(after, sid)) for key, sid in guests.items())
    root_classes = {'VCPU', 'PCPU', 'MEMORY_MB', 'DISK_GB'}

    def on(key, rc):
        return sorted(name for name, res in where[key].items() if rc in res)
    for key, host in (('vgpu', 'roll-vgpu'), ('mixed', 'roll-mixed')):
        gpu = _mdev_gpu(made[host], names[key])
        problems.check(gpu and on(key, 'VGPU') == ['%s_%s' % (host, gpu)],
                       '%s: VGPU on %s, its mdev on %s' % (key, on(key, 'VGPU'), gpu))
    address = _pci_held(made['roll-pci'], names['pci'])
    # nova names the device's provider <host>_<ADDRESS> with the address upper-cased
    problems.check(address and on('pci', PCI_CLASS) == ['roll-pci_%s' % address.upper()],
                   'pci: %s on %s, its device %s' % (PCI_CLASS, on('pci', PCI_CLASS), address))
    for key in ('sev', 'resized'):
        problems.check(on(key, 'MEM_ENCRYPTION_CONTEXT') == ['roll-sev_amd_sev'],
                       '%s: MEM_ENCRYPTION_CONTEXT on %s' % (key, on(key, 'MEM_ENCRYPTION_CONTEXT')))
    for key, host in (('pinned', 'roll-pcpu'), ('mixed', 'roll-mixed'), ('new', 'roll-new')):
        problems.check(on(key, 'PCPU') == [host] and not on(key, 'VCPU'), '%s: PCPU on %s' % (key, on(key, 'PCPU')))
    for key, host in [(w[0], w[5]) for w in wanted]:
        for rc in root_classes:
            problems.check(on(key, rc) in ([], [host]), '%s: %s on %s' % (key, rc, on(key, rc)))

    # -- nova's own checks -----------------------------------------------------------------------
    services = dict((s['host'], s) for s in cloud.services() if s['binary'] == 'nova-compute')
    for host in hosts:
        problems.check(novactl.installed_version(novactl.release_of(made[host])) == '34.0.0', '%s not on 34' % host)
        problems.check((services[host]['status'], services[host]['state']) == ('enabled', 'up'),
                       '%s: %s' % (host, services[host]))
    audit = cloud.nova_manage('placement', 'audit', '--verbose', check=False)
    problems.check(audit.returncode == 0 and 'orphaned allocation' not in audit.stdout.lower(),
                   'placement audit rc %d: %s' % (audit.returncode, audit.stdout[-2000:]))
    heal_rc = {}
    for key, sid in sorted(guests.items()):
        heal = cloud.nova_manage('placement', 'heal_allocations', '--dry-run', '--verbose',
                                 '--skip-port-allocations', '--instance', sid, check=False)
        heal_rc[key] = heal.returncode
        if key in ('vgpu', 'mixed'):
            problems.check(heal.returncode == 8 and 'vGPU resource request is not supported' in heal.stdout,
                           'heal %s rc %d: %s' % (key, heal.returncode, heal.stdout[-1500:]))
        else:
            problems.check(heal.returncode == 4, 'heal %s rc %d: %s' % (key, heal.returncode, heal.stdout[-1500:]))
    status = cloud.nova_tool('nova-status', 'upgrade', 'check', check=False)
    problems.check(status.returncode == 0, 'nova-status rc %d: %s' % (status.returncode, status.stdout[-2000:]))
    resized = admin.compute.get_server(guests['resized'])
    problems.check(resized.status == 'ACTIVE' and resized.flavor.vcpus == 3
                   and [m['status'] for m in _migrations(admin, guests['resized'])] == ['confirmed'],
                   'the resized guest: %s %s' % (resized.status, _migrations(admin, guests['resized'])))

    # -- nova's writes to Placement from the roll's start to now (nova 34's periodic passes included) --
    provider_node = {}
    for uuid, rp in after.items():
        for host in hosts:
            if rp['name'] == host or rp['name'].startswith(host + '_'):
                provider_node[uuid] = host
    allowed_consumers = load_ids | {migration['uuid'], guests['resized']}
    writes = cloud.placement_requests(user='nova', since=log_offset, writes_only=True)
    # each node's trait PUTs by nova, before and after its start on nova 34 (novactl's journal)
    new_started = operator_run.started_on(made, '34', roll_began)
    trait_puts = dict((h, 0) for h in hosts)
    split = dict((h, {'old': [], 'new': []}) for h in hosts)
    load_writes = 0
    for write in writes:
        parts = write['uri'].split('?')[0].split('/')
        if parts[1:2] == ['allocations'] and (len(parts) < 3 or parts[2] in allowed_consumers):
            load_writes += 1
            continue
        if (write['method'] == 'PUT' and len(parts) == 4 and parts[1] == 'resource_providers'
                and parts[3] == 'traits' and parts[2] in roots.values()):
            host = provider_node.get(parts[2], '?')
            trait_puts[host] = trait_puts.get(host, 0) + 1
            if host in split:
                split[host]['old' if write['at'] < new_started[host] else 'new'].append(operator_run.ROOT_TRAITS)
            continue
        problems.check(False, 'a write by nova during the roll: %s' % write['line'])
    raced = []
    for host in hosts:
        traits = operator_run.placement_get(cloud, '/resource_providers/%s/traits' % roots[host])['traits']
        if host in skipped:
            # the plain restart on nova 34: at most its one PUT adding OWNER_NOVA, and nothing else
            owner_added = 'OWNER_NOVA' not in traits_before_restart[host]
            wanted_puts, why = (1, 'its first start adds OWNER_NOVA') if owner_added else (0, 'nothing to add')
            problems.check(set(traits) == traits_before_restart[host] | set(['OWNER_NOVA']),
                           '%s: nova 34 changed the traits %s -> %s, not just OWNER_NOVA'
                           % (host, sorted(traits_before_restart[host]), sorted(traits)))
            problems.check(trait_puts[host] == wanted_puts, '%s: %d trait PUTs by nova (%s: %d)'
                           % (host, trait_puts[host], why, wanted_puts))
        else:
            # the disable's answer (and nova 33's racing report, if it raced), the enable's answer
            try:
                raced.extend(operator_run.check_status_answers({host: split[host]}, records))
            except AssertionError as failed:
                problems.check(False, '%s: nova\'s trait PUTs: %s' % (host, failed))
        problems.check('COMPUTE_STATUS_DISABLED' not in traits and 'OWNER_NOVA' in traits, (host, traits))
    operator_writes = cloud.placement_requests(user='operator', since=log_offset, writes_only=True)

    # -- the figures ---------------------------------------------------------------------------
    print('\ncloud twin 6-node roll under load:')
    for key, value in figures.items():
        print('  %s: %s' % (key, _fmt(value) if isinstance(value, float) else value))
    print('  control plane start-up (s): %s' % ', '.join('%s %.1f' % kv for kv in cloud.timings.items()))
    print('  per node (s): downtime = os-services disabled -> enabled again (watcher every 0.5 s); stop, start ='
          ' novactl journal (SIGTERM -> exit; spawn -> nova Service.start() returned); roll adds = downtime -'
          ' stop - start; pass = the report record (started -> finished)')
    for host in hosts:
        row = per_node[host]
        print('    %-11s %-9s downtime %6s  stop %5s  start %5s  roll adds %6s  pass %6s' % (
            host, row.get('status'), _fmt(row.get('downtime')), _fmt(row.get('stop')), _fmt(row.get('start')),
            _fmt(row.get('roll_adds')), _fmt(row.get('pass'))))
    print('  boots during the roll: %d (%s), seconds to ACTIVE p50 %s p95 %s; outcomes: %s' % (
        len(boots), ', '.join('%s %d' % (f, sum(1 for b in boots if b['flavor'] == f)) for f in LOAD_CAPABLE),
        _fmt(load.percentile(latencies, 0.5)), _fmt(load.percentile(latencies, 0.95)), causes))
    print('  landed: %s' % dict((h, sum(1 for b in boots if b['host'] == h)) for h in hosts))
    print('  resize confirmed at +%.1f s of the roll (nodes then: %s), done in %.1f s' % (
        (confirm.get('at') or roll_began) - roll_began, confirm.get('node_state'),
        (confirm.get('done') or 0) - (confirm.get('at') or 0)))
    print('  Placement writes during the roll: operator %d; nova %d (trait PUTs %s, load/confirm allocations %d);'
          ' nova 33\'s status race seen on: %s'
          % (len(operator_writes), len(writes), trait_puts, load_writes, ', '.join(raced) or 'none'))
    print('  heal_allocations rc: %s; watcher errors: %s' % (heal_rc, watcher.errors[:3]))
    print('  roll %.1f s (%s -> %s UTC); run folder: %s' % (
        roll_seconds, time.strftime('%H:%M:%S', time.gmtime(roll_began)),
        time.strftime('%H:%M:%S', time.gmtime(roll_ended)), cloud.run_dir))
    with open(os.path.join(out, 'load-records.json'), 'w') as handle:
        json.dump({'boots': boots, 'per_node': per_node, 'confirm': confirm,
                   'watcher': watcher.samples}, handle, indent=1, default=str)
    assert not problems, '\n'.join(str(p) for p in problems)
