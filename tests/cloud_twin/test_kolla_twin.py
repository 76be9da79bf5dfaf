# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kolla-ansible's sequence on podman containers that run the REAL nova-compute (issue 42, section 1),
against the cloud twin's control plane (`make cloud-twin`, not make test).

A node laid out as kolla-ansible lays it (tests/cloud_twin/kolla_images.py builds the images):

* ``nova_compute``, created with kolla's options (tests/integration/test_kolla_podman.py
  ``kolla_nova_compute``: privileged, host network and IPC, kolla's config folder
  ``/etc/kolla/nova-compute/`` at ``/var/lib/kolla/config_files/``, ``/run``, ``/dev``, the volumes
  ``kolla_logs``, ``libvirtd``, ``nova_compute``) from ``localhost/kolla/nova-compute:33``: a Debian
  bookworm root filesystem (debootstrap) with nova 33's venv at ``/var/lib/kolla/venv``; its
  ``kolla_start`` copies ``/etc/kolla/nova-compute/nova.conf`` to ``/etc/nova/nova.conf`` at each start
  (``COPY_ALWAYS``) and runs nova's own nova-compute (the twin's launcher, tests/cloud_twin/compute.py,
  nova's libvirt driver on fakelibvirt), which reaches the twin's MariaDB-backed nova-conductor through
  RabbitMQ and Placement on 127.0.0.1 (``--network host``);
* ``nova_libvirt`` with its ``nova_libvirt_qemu`` volume at ``/etc/libvirt/qemu``, where the guests'
  domain XML lives: nova's fakelibvirt runs in nova-compute's process, so ``nova_compute`` mounts the
  volume too (as a ``nova_compute_extra_volumes`` entry, a kolla variable) and the launcher writes
  every defined guest's XML there (``--domains /etc/libvirt/qemu``), nowhere else; the collection's
  discovery reads it through the volume's ``Mountpoint`` (the guide's podman glob).

The roll: ``playbooks/rolling_reshape.yml`` with the guide's kolla recipe and post hook, read from
docs/operator-guide.md as printed (the hook removes the stopped container and creates it from the
new release's image without starting it; the role starts it), the nova steps on, against the twin
with a kolla-shaped clouds.yaml (clouds ``kolla-admin`` and ``kolla-admin-internal``; the roll names
``kolla-admin-internal``).  Before the roll the operator writes the new release's nova.conf into
``/etc/kolla/nova-compute/`` (``kolla-ansible genconfig`` of the new release): the running container
keeps its copy, the new one copies it at its start; discovery reads it there.

Asserted (a node of kind ``pcpu``: legacy ``vcpu_pin_set``, a pinned guest booted through nova-api):
the roll succeeds, the guest's VCPU became PCPU (one reshape); nova 34 wrote nothing to Placement but
the two trait PUTs of the disable and the enable (Placement's request log; beside them, as the nova
user, only the roll's own probe of nova's credentials, which kolla's nova.conf holds: one ``POST
/reshaper`` answered 400, which changes nothing); ``nova_compute`` runs the
``:34`` image, whose ``nova-compute --version`` is 34.0.0, and in nova's os-services the node is
enabled and up, its service version (nova's services table) nova 34's; podman's own event log shows
the old container die before the verified reshape and the new one created and started after it.
The old recipe (the role's start alone: ``podman start nova_compute``) restarts the old container and
fails the node on ``rolling_reshape_nova_expected_version``.

Not real here: the hypervisor (fakelibvirt, no libvirtd in ``nova_libvirt``: it only holds the volume;
tests/cloud_twin/compute.py); the images are built here, not pulled (no registry is reachable) and
are not kolla's (Debian's root filesystem with this machine's Python and venvs, kolla's paths and
``kolla_start`` in small); no systemd runs as PID 1 here, so kolla's units
(``kolla-nova_compute-container.service``) cannot run: the roll stops and starts the container with
the recipe's podman commands; docker is not installed, so the guide's docker form is not run.

The containers and volumes carry kolla's fixed names, as in tests/integration/test_kolla_podman.py:
the two tests share its lock, refuse to start when any of those names exists, and remove what they
made, failed or not.  The images stay, cached by a digest of their inputs.
"""

import configparser
import datetime
import fcntl
import json
import os
import subprocess
import sys
import time

import pytest

import cloud as cloud_mod
import kolla_images
import nodes
import novactl
import operator_run

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'integration'))
from test_kolla_podman import HOOK, LOCK, PODMAN_GLOB, RECIPE, Podman, kolla_nova_compute  # noqa: E402

pytestmark = [pytest.mark.real, pytest.mark.slow]

CONTAINERS = ('nova_compute', 'nova_libvirt')
VOLUMES = ('nova_libvirt_qemu', 'kolla_logs', 'libvirtd', 'nova_compute')
NODE_IN_CONTAINER = '/var/lib/kolla/twin-node'
LAUNCH = ('/var/lib/kolla/venv/bin/python /var/lib/kolla/twin/tests/cloud_twin/compute.py --node %s '
          '--domains /etc/libvirt/qemu --config-file /etc/nova/nova.conf' % NODE_IN_CONTAINER)
# the old release's nova, as its venv has it (33.0.2 here)
OLD_VERSION = novactl.installed_version('33')
NEW_VERSION = RECIPE['rolling_reshape_nova_expected_version']


@pytest.fixture(scope='module')
def images():
    began = time.monotonic()
    made, timings = kolla_images.ensure_images()
    print('\nkolla twin images %s ready in %.1f s (%s)' % (
        ', '.join(sorted(made.values())), time.monotonic() - began,
        ', '.join('%s %.1f' % kv for kv in sorted(timings.items())) or 'cached: inputs unchanged'))
    return made


def kolla_nova_conf(cloud, hostname, device_conf):
    """kolla's one nova.conf of the node: the twin's service part with kolla's paths, and the device options."""
    text = nodes.SERVICE_CONF % {'host': hostname, 'transport_url': cloud.broker.transport_url,
                                 'state': '/var/lib/nova', 'log': '/var/log/kolla/nova/nova-compute.log',
                                 'debug': 'false',
                                 'placement': nodes.placement_auth_lines(operator_run.node_placement_auth(cloud))}
    parser = configparser.ConfigParser(interpolation=None, default_section='__none__')
    parser.optionxform = str
    parser.read_string(text)
    sections = dict((name, dict(parser[name])) for name in parser.sections())
    for section, options in device_conf.items():
        sections.setdefault(section, {}).update(options)
    return nodes.fakehost.nova_conf_text(sections)


def kolla_clouds_yaml(cloud, path):
    """/etc/kolla/clouds.yaml as kolla-ansible's post-deploy writes it (its 2 clouds), for the operator
    (the twin's admin with the service role Placement's reshaper needs)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, 'w') as handle:
        json.dump({'clouds': {'kolla-admin': cloud.cloud_config('operator', interface='public'),
                              'kolla-admin-internal': cloud.cloud_config('operator', interface='internal')}},
                  handle, indent=1)
    return path


def _wait_started(podman, node_dir, timeout=300):
    """Until the launcher in nova_compute says nova's service started (compute.ready in the node dir)."""
    deadline = time.monotonic() + timeout
    while True:
        for name, failed in (('compute.ready', False), ('compute.failed', True)):
            path = os.path.join(node_dir, name)
            if os.path.exists(path):
                with open(path) as handle:
                    info = json.load(handle)
                assert not failed, 'nova-compute failed in nova_compute: %s' % info
                return info
        running = podman.run('container', 'inspect', '--format', '{{.State.Running}}', 'nova_compute').stdout.strip()
        if running != 'true' or time.monotonic() > deadline:
            raise AssertionError('nova_compute did not start nova-compute (running: %s): %s'
                                 % (running, podman.run('logs', '--tail=40', 'nova_compute').stdout[-4000:]))
        time.sleep(0.5)


def service_versions(cloud, hostname):
    """nova's services table: the node's nova-compute service version (what nova-compute writes at its
    start), and nova 33's and 34's SERVICE_VERSION from their venvs."""
    out = subprocess.run(['mariadb', '--no-defaults', '--socket=%s' % cloud.db.socket_path, '-N', '-B', '-e',
                          "SELECT version FROM nova.services WHERE host='%s' AND `binary`='nova-compute' AND deleted=0"
                          % hostname], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                         check=True).stdout.split()
    releases = {}
    for release, venv in kolla_images.VENVS.items():
        releases[release] = int(subprocess.run(
            [os.path.join(venv, 'bin', 'python'), '-c', 'from nova.objects import service; print(service.SERVICE_VERSION)'],
            stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout.strip())
    return [int(v) for v in out], releases


@pytest.fixture
def kolla_node(request, cloud, images, tmp_path):
    """One pcpu node as kolla lays it out, nova_compute of nova 33 running and up in nova."""
    if os.geteuid() != 0:
        pytest.fail('this test runs podman as root (rootless podman has other volume paths): run it as root')
    hostname = 'kolla-%s' % request.node.name.split('_')[-1]
    lock = open(LOCK, 'a')
    fcntl.flock(lock, fcntl.LOCK_EX)
    podman = Podman(str(tmp_path))
    taken = [n for n in CONTAINERS if podman.run('container', 'exists', n).returncode == 0]
    taken += ['volume ' + n for n in VOLUMES if podman.run('volume', 'exists', n).returncode == 0]
    if taken:
        fcntl.flock(lock, fcntl.LOCK_UN)
        pytest.fail('podman already has %s: this test makes and removes them, and never removes what it did not '
                    'make (another run of it or of test_kolla_podman.py, or a real kolla node?)' % ', '.join(taken))
    try:
        base = cloud.path('kolla', hostname)
        node_dir = nodes.create(os.path.join(base, 'node'), 'pcpu', hostname, cloud.broker.transport_url,
                                operator_run.node_placement_auth(cloud))
        spec = nodes.read_spec(node_dir)
        config_dir = os.path.join(base, 'etc', 'kolla', 'nova-compute')
        os.makedirs(config_dir)
        with open(os.path.join(config_dir, 'config.json'), 'w') as handle:
            json.dump({'command': LAUNCH, 'config_files': [
                {'source': '/var/lib/kolla/config_files/nova.conf', 'dest': '/etc/nova/nova.conf',
                 'owner': 'nova', 'perm': '0600'}]}, handle, indent=1)
        nova_conf = os.path.join(config_dir, 'nova.conf')
        with open(nova_conf, 'w') as handle:
            handle.write(kolla_nova_conf(cloud, hostname, spec['nova_conf']))
        podman.ok('run', '--detach', '--name=nova_libvirt', '--privileged', '--network=host', '--pid=host',
                  '--volume=/run:/run', '--volume=/dev:/dev', '--volume=kolla_logs:/var/log/kolla/',
                  '--volume=libvirtd:/var/lib/libvirt', '--volume=nova_libvirt_qemu:/etc/libvirt/qemu',
                  images['libvirt'], 'sleep', 'infinity')
        options = kolla_nova_compute(config_dir, images['33'])
        # nova_compute_extra_volumes: the twin's fake host, and libvirt's definitions (fakelibvirt is in nova-compute)
        options[-1:-1] = ['--volume=%s:%s' % (node_dir, NODE_IN_CONTAINER),
                          '--volume=nova_libvirt_qemu:/etc/libvirt/qemu']
        began = time.monotonic()
        podman.ok('run', '--detach', *options)
        _wait_started(podman, node_dir)
        cloud.nova_manage('cell_v2', 'discover_hosts', '--verbose')
        cloud.wait_services(('nova-compute',), timeout=300, hosts=[hostname])
        print('\n%s: nova_compute (nova %s) up in nova in %.1f s' % (hostname, OLD_VERSION, time.monotonic() - began))
        assert podman.ok('exec', 'nova_compute', 'nova-compute', '--version').strip() == OLD_VERSION
        yield {'hostname': hostname, 'node_dir': node_dir, 'config_dir': config_dir, 'nova_conf': nova_conf,
               'spec': spec, 'podman': podman, 'base': base,
               'mountpoint': podman.inspect('volume', 'nova_libvirt_qemu')['Mountpoint'],
               'old_id': podman.inspect('container', 'nova_compute')['Id']}
    finally:
        _keep_logs(podman, cloud.path('kolla', hostname))
        for name in CONTAINERS:
            podman.run('rm', '--force', '--time=10', name)
        for name in VOLUMES:
            podman.run('volume', 'rm', '--force', name)
        fcntl.flock(lock, fcntl.LOCK_UN)
        lock.close()


def _keep_logs(podman, base):
    """nova-compute's log (kolla_logs volume) and the containers' output, kept in the run folder."""
    import shutil
    proc = podman.run('volume', 'inspect', '--format', '{{.Mountpoint}}', 'kolla_logs')
    log = os.path.join(proc.stdout.strip(), 'nova', 'nova-compute.log')
    if proc.returncode == 0 and os.path.exists(log):
        shutil.copy(log, os.path.join(base, 'nova-compute.log'))
    for name in CONTAINERS:
        out = podman.run('logs', name)
        with open(os.path.join(base, '%s.podman-logs' % name), 'w') as handle:
            handle.write(out.stdout + out.stderr)


def pinned_guest(cloud, hostname):
    admin = cloud.connect('operator')
    flv = operator_run.flavor(admin, 'pinned-%s' % hostname, vcpus=2, extra_specs={'hw:cpu_policy': 'dedicated'})
    server, took = operator_run.boot(admin, 'guest-%s' % hostname, flv.id, cloud_mod.IMAGE_ID, host=hostname)
    server = admin.compute.get_server(server.id)
    assert server.status == 'ACTIVE' and server.compute_host == hostname, server
    print('%s: pinned guest ACTIVE in %.1f s' % (hostname, took))
    return server


def roll(cloud, kolla, variables):
    """The roll of the node with the guide's kolla recipe, the kolla-shaped clouds.yaml."""
    out = os.path.join(kolla['base'], 'roll')
    os.makedirs(out, exist_ok=True)
    host = {'ansible_connection': 'local', 'ansible_python_interpreter': os.path.join(operator_run.MAIN_VENV, 'bin', 'python'),
            'rolling_reshape_provider_name': kolla['hostname'], 'rolling_reshape_compute_host': kolla['hostname']}
    host.update(nodes.discovery_paths(kolla['node_dir']))
    # the kolla discovery recipe: the volume's definitions, kolla's nova.conf on the host
    host.update({'rolling_reshape_domain_xml_glob': PODMAN_GLOB, 'rolling_reshape_nova_conf': kolla['nova_conf']})
    inventory = os.path.join(out, 'inventory.json')
    with open(inventory, 'w') as handle:
        json.dump({'all': {'children': {'compute': {'hosts': {kolla['hostname']: host}}}}}, handle, indent=1)
    clouds_yaml = kolla_clouds_yaml(cloud, os.path.join(kolla['base'], 'clouds.yaml'))
    extra = dict(RECIPE, rolling_reshape_nova_timeout=300, rolling_reshape_run_id='kolla-twin-%s' % kolla['hostname'],
                 nova_compute_image_full=kolla_images.IMAGE % '34')
    extra.update(variables)
    extra = dict((k, v) for k, v in extra.items() if v is not None)
    result, seconds = operator_run.run_roll(out, inventory, clouds_yaml, extra, cloud_name='kolla-admin-internal',
                                            env={'CONTAINERS_CONF': kolla['podman'].conf})
    print('%s: the roll took %.1f s' % (kolla['hostname'], seconds))
    with open(os.path.join(out, 'reports', 'latest', 'summary.json')) as handle:
        report = json.load(handle)
    return result, report, out


def verified_at(out):
    """When the node's reshape was verified: the outcome its snapshot records."""
    import datetime
    import glob
    found = glob.glob(os.path.join(out, 'snapshots', '*.latest.json'))
    assert len(found) == 1, found
    with open(found[0]) as handle:
        outcome = json.load(handle)['outcome']
    assert outcome['status'] == 'verified', outcome
    return datetime.datetime.strptime(outcome['at'], '%Y%m%dT%H%M%S.%fZ')


def _prepare(cloud, clouds_yaml, kolla):
    guest = pinned_guest(cloud, kolla['hostname'])
    # the guest's definition is in the volume, nowhere in the node's folder
    xml = sorted(os.listdir(kolla['mountpoint']))
    assert xml == ['%s.xml' % guest.instance_name], xml
    assert not os.listdir(os.path.join(kolla['node_dir'], 'domains'))
    assert not os.listdir(os.path.join(kolla['node_dir'], 'host', 'etc', 'libvirt', 'qemu'))
    before = operator_run.placement_state(cloud)
    totals = operator_run.consumer_totals(before)[guest.id]
    assert totals.get('VCPU') == 2 and 'PCPU' not in totals, totals
    spec = kolla['spec']
    with open(kolla['nova_conf'], 'w') as handle:
        handle.write(kolla_nova_conf(cloud, kolla['hostname'], nodes.upgraded_conf(spec['kind'], spec['nova_conf'])))
    return guest, before


def test_kolla_roll_recreates_nova_compute_from_the_new_image_a(cloud, clouds_yaml, kolla_node):
    kolla, podman = kolla_node, kolla_node['podman']
    hostname = kolla['hostname']
    guest, before = _prepare(cloud, clouds_yaml, kolla)
    hook = os.path.join(kolla['base'], 'kolla_nova_compute_new_image.yml')
    with open(hook, 'w') as handle:
        handle.write(HOOK)
    offset = cloud.placement_log_size()
    result, report, out = roll(cloud, kolla, {'rolling_reshape_post_tasks': hook})
    assert result.returncode == 0, result.stdout[-6000:]
    node = report['nodes'][0]
    assert node['status'] == 'reshaped', node
    assert node['nova_compute'] == {'before': OLD_VERSION, 'after': NEW_VERSION}, node

    # the reshape: the pinned guest's VCPU became PCPU, every other consumer's totals unchanged
    after = operator_run.placement_state(cloud)
    expected = operator_run.consumer_totals(before)
    pinned = dict(expected[guest.id])
    pinned['PCPU'] = pinned.pop('VCPU')
    expected[guest.id] = pinned
    assert operator_run.consumer_totals(after) == expected
    assert operator_run.consumer_providers(after, guest.id) == {'PCPU': [hostname], 'MEMORY_MB': [hostname],
                                                                'DISK_GB': [hostname]}
    # nova's writes during the roll: only the trait PUTs answering the disable (nova 33) and the enable (nova 34)
    # (and the roll's own probe of nova's credentials, read from kolla's nova.conf: a POST /reshaper
    # that changes nothing, status 400, before the disable)
    # (and if nova 33 raced the disable, its racing report: operator_run.check_status_answers), split at
    # the new container's start (podman's event log)
    probes = []
    new_id = podman.inspect('container', 'nova_compute')['Id']
    new_started = [w for w, s, cid, _img in podman.events('nova_compute') if cid == new_id and s == 'start'][-1]
    new_started = new_started.replace(tzinfo=datetime.timezone.utc).timestamp()  # podman's times are UTC
    split, lines = operator_run.nova_writes_by_release(cloud, after, [hostname], offset, {hostname: new_started},
                                                       probes=probes)
    operator_run.check_status_answers(split, {hostname: operator_run.node_record(out, hostname)})
    assert len(probes) == 1 and probes[0] < lines[0], (probes, lines)
    root = [u for u, rp in after.items() if rp['name'] == hostname][0]
    traits = operator_run.placement_get(cloud, '/resource_providers/%s/traits' % root)['traits']
    assert 'COMPUTE_STATUS_DISABLED' not in traits and 'OWNER_NOVA' in traits, traits

    # nova_compute is the new image's container, running nova 34, enabled and up in nova
    container = podman.inspect('container', 'nova_compute')
    assert container['ImageName'] == kolla_images.IMAGE % '34' and container['State']['Running'] is True
    assert container['Id'] != kolla['old_id']
    assert podman.ok('exec', 'nova_compute', 'nova-compute', '--version').strip() == NEW_VERSION
    services = dict((s['host'], s) for s in cloud.services() if s['binary'] == 'nova-compute')
    assert (services[hostname]['status'], services[hostname]['state']) == ('enabled', 'up'), services[hostname]
    versions, releases = service_versions(cloud, hostname)
    assert versions == [releases['34']] and releases['33'] != releases['34'], (versions, releases)
    # the new container copied the new release's nova.conf at its start (COPY_ALWAYS)
    copied = podman.ok('exec', 'nova_compute', 'cat', '/etc/nova/nova.conf')
    assert 'cpu_dedicated_set = 0-7' in copied and 'vcpu_pin_set' not in copied, copied
    # the guest's definition is still only in the volume
    assert sorted(os.listdir(kolla['mountpoint'])) == ['%s.xml' % guest.instance_name]

    # the order, from podman's event log: the old container died before the verified reshape, removed,
    # the new one created and started after it, nothing started in between
    verified = verified_at(out)
    events = podman.events('nova_compute')
    old = [(w, s) for w, s, cid, _img in events if cid == kolla['old_id']]
    new = [(w, s) for w, s, cid, _img in events if cid == container['Id']]
    assert [s for w, s in old if s in ('died', 'remove')] == ['died', 'remove'], events
    died = [w for w, s in old if s == 'died'][0]
    removed = [w for w, s in old if s == 'remove'][0]
    created = [w for w, s in new if s == 'create'][0]
    starts = [w for w, s in new if s == 'start']
    assert died < verified < removed < created, (died, verified, removed, created)
    assert len(starts) == 1 and created < starts[0], new
    assert not [e for e in events if e[1] == 'start' and died < e[0] < verified], events
    print('%s: nova_compute died %.1f s before the verified reshape; removed %.2f s, created %.2f s, started '
          '%.2f s after it' % ((hostname, (verified - died).total_seconds())
                               + tuple((w - verified).total_seconds() for w in (removed, created, starts[0]))))


def test_the_old_recipe_restarts_the_old_container_and_fails_b(cloud, clouds_yaml, kolla_node):
    """The role's start alone (no post hook): `podman start nova_compute` starts the OLD container, nova 33
    again, and rolling_reshape_nova_expected_version fails the node, left disabled in nova."""
    kolla, podman = kolla_node, kolla_node['podman']
    hostname = kolla['hostname']
    _prepare(cloud, clouds_yaml, kolla)
    result, report, out = roll(cloud, kolla, {'rolling_reshape_post_tasks': None})
    assert result.returncode != 0, result.stdout[-6000:]
    said = ' '.join(result.stdout.split())
    assert ('%s: the new nova-compute is %s, not %s (rolling_reshape_nova_expected_version); it runs, and is left '
            'disabled in nova.' % (hostname, OLD_VERSION, NEW_VERSION)) in said, result.stdout[-6000:]
    assert report['nodes'][0]['status'] == 'failed', report['nodes'][0]
    container = podman.inspect('container', 'nova_compute')
    assert container['Id'] == kolla['old_id'] and container['ImageName'] == kolla_images.IMAGE % '33'
    assert container['State']['Running'] is True
    services = dict((s['host'], s) for s in cloud.services() if s['binary'] == 'nova-compute')
    assert services[hostname]['status'] == 'disabled', services[hostname]
    versions, releases = service_versions(cloud, hostname)
    assert versions == [releases['33']], (versions, releases)
