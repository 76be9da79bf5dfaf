# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""openstack-ansible's sequence on the cloud twin, with nova's REAL nova-compute (issue 42, section 2).

The roll of docs/operator-guide.md ("openstack-ansible: the new release between the stop and the
start", step 2; tests/integration/test_openstack_ansible_switch.py runs it on stand-ins) against
the twin's control plane (tests/cloud_twin/cloud.py: Keystone, Placement, nova-api/-conductor/
-scheduler 34, RabbitMQ, MariaDB), on nodes laid out inside their node folder ``N`` as os_nova
lays out a compute host (the layout of the integration test, whose unit and sudoers texts are
used here)::

    N/openstack/venvs/nova-33.1.0/      the old release's venv: a venv whose python and site-packages
                                        are .venv-nova33's (pyvenv.cfg, bin/python and lib linked),
                                        bin/nova-rootwrap and bin/privsep-helper linked to its own,
    N/openstack/venvs/nova-33.1.0/bin/nova-compute   the twin's launcher (tests/cloud_twin/compute.py:
                                        nova's own nova.cmd.compute.main() on fakelibvirt) run by that
                                        venv's python, reading the node's /etc/nova/nova.conf;
                                        ``--version``: nova's own nova-compute --version
    N/openstack/venvs/nova-33.1.0/etc/nova/nova.conf  its config directory (nova 33's full nova.conf)
    N/openstack/venvs/nova-34.0.0/...   the new release's (.venv-nova, nova 34; nova.conf with
                                        cpu_dedicated_set): laid out before the roll, as the guide's
                                        step 1 leaves it (os_nova itself is not run here)
    N/etc/nova -> ../openstack/venvs/nova-33.1.0/etc/nova   os_nova's relative link
    N/etc/sudoers.d/nova_sudoers        naming the venv's nova-rootwrap and privsep-helper
    N/etc/systemd/system/nova-compute.service   ExecStart=N/openstack/venvs/nova-33.1.0/bin/nova-compute

There is no systemd as PID 1 here: each node's service manager is tests/integration/standin_units.py
(``supervise``: one process per node, as systemd it loads the unit file's ExecStart= at its start
and at ``systemctl daemon-reload`` only, runs the program it names and restarts it when it ends;
``systemctl``: stop, start, show, daemon-reload), ``N/bin/systemctl`` on the node's PATH (the
node's shell, ``ansible_shell_executable``, puts ``N/bin`` first).  So the real hook
playbooks/hooks/openstack_ansible_nova_switch.yml's edits (the unit's ExecStart, the /etc/nova
link, the sudoers file checked by the real ``visudo -cf``, the daemon-reload) decide which nova
runs: the guide's version recipe reads it from the program the unit has loaded.  The hook's
paths are its own variable ``osa_nova_root`` (``N``).

``test_the_roll_switches_the_node_to_nova_34_between_the_verified_reshape_and_the_start``: a pcpu
node (legacy vcpu_pin_set, a pinned guest: the roll moves its VCPU to PCPU) and a vgpu node (a VGPU
guest on its pGPU child) on nova 33, rolled with playbooks/rolling_reshape.yml at serial 2, the
nova steps on, the guide's recipes (the hook as the post hook): both run nova 34 from the new venv
on the new config directory, up and enabled in nova's os-services, nova 34's service version in
nova's services record and "Starting compute node (version 34.0.0)" in nova's log; the pinned
guest's VCPU became PCPU and every consumer's per-class totals hold (the vgpu node is updated, not
reshaped: its VGPU guest stays on its pGPU child, nova 34's OWNER_NOVA trait is added); nova's only writes to
Placement during the roll are, per node, the two PUTs of the root's traits (the disable, the enable),
besides the roll's own probe of nova's credentials (the node's nova.conf holds them, as on an
openstack-ansible host: the pre-flight's POST /reshaper refused by the schema, 400).

``test_without_the_hook_the_nodes_restart_on_the_old_venv_and_fail``: the same recipes but the
post hook, on a vgpu and a pcpu node: each unit starts the old venv's nova-compute (nova 33) again.
On the vgpu node it comes back and the role fails the node with rolling_reshape_nova_expected_version
(nova-compute left running and disabled).  On the pcpu node nova 33, on its legacy vcpu_pin_set,
cannot start on the reshaped tree (Placement refuses its VCPU-only inventory: InventoryInUse, the
pinned guest's PCPU), exits 1 and is restarted by the unit again and again: the role fails the node
at its wait for nova-compute up (seen first in a run of this file, 2026-12-02).

Not real here: openstack-ansible and os_nova (step 1's venv build and config are laid out by this
test), systemd (standin_units.py), the hypervisor (fakelibvirt).
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
INTEGRATION = os.path.join(REPO, 'tests', 'integration')
if INTEGRATION not in sys.path:
    sys.path.insert(0, INTEGRATION)

import cloud as cloud_mod  # noqa: E402
import fakehost  # noqa: E402  (tools/)
import nodes  # noqa: E402
import novactl  # noqa: E402
import operator_run  # noqa: E402
import standin_units  # noqa: E402  (tests/integration)
# the guide's recipes and os_nova's unit and sudoers texts, as the integration test reads and writes them
import test_openstack_ansible_switch as osa  # noqa: E402  (tests/integration)
from test_fleet_playbook import statuses, summary  # noqa: E402  (tests/integration)

pytestmark = [pytest.mark.real, pytest.mark.slow]

STANDIN_UNITS = os.path.join(INTEGRATION, 'standin_units.py')
OLD_TAG, NEW_TAG, UNIT = osa.OLD_TAG, osa.NEW_TAG, osa.UNIT
RELEASES = {OLD_TAG: '33', NEW_TAG: '34'}
NODES = (('pcpu', 'osa-pcpu'), ('vgpu', 'osa-vgpu'), ('pcpu', 'nohook-pcpu'), ('vgpu', 'nohook-vgpu'))
#: the kind of guest each node holds (a pinned one on a pcpu node, a VGPU one on a vgpu node)
GUEST_FLAVORS = {'pcpu': ('osa-pinned', 2, {'hw:cpu_policy': 'dedicated'}), 'vgpu': ('osa-vgpu', 1, {'resources:VGPU': '1'})}

LAUNCHER = '''#!/bin/sh
# nova-compute of the openstack-ansible venv %(venv)s on the cloud twin's node %(host)s
# (tests/cloud_twin/test_openstack_ansible_twin.py): nova's own nova-compute on fakelibvirt
# (tests/cloud_twin/compute.py) run by this venv's python, reading the node's /etc/nova/nova.conf
if [ "$*" = --version ]; then
  exec "%(venv)s/bin/python" -c 'import sys; from nova.cmd.compute import main; sys.argv[0] = "nova-compute"; sys.exit(main())' --version
fi
exec "%(venv)s/bin/python" "%(launcher)s" --node "%(node)s" --nova-config-file "%(node)s/etc/nova/nova.conf" "$@"
'''

NODE_SHELL = '''#!/bin/sh
# the shell of the cloud twin's node %(host)s: its own programs first (systemctl: its service manager)
PATH="%(bin)s:$PATH"
export PATH
exec /bin/sh "$@"
'''


def _write(path, text, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as handle:
        handle.write(text)
    os.chmod(path, mode)


def _read(path):
    with open(path) as handle:
        return handle.read()


def nova_conf(node, sections):
    """The release's whole nova.conf: the node's service part (node.conf) with its device options."""
    merged, current = {}, None
    for line in _read(os.path.join(node, 'node.conf')).splitlines():
        line = line.strip()
        if line.startswith('['):
            current = merged.setdefault(line.strip('[]'), {})
        elif line and not line.startswith('#'):
            key, value = line.split('=', 1)
            current[key.strip()] = value.strip()
    for section, options in sections.items():
        merged.setdefault(section, {}).update(options)
    return fakehost.nova_conf_text(merged)


def venv_dir(node, tag):
    return os.path.join(node, 'openstack', 'venvs', 'nova-%s' % tag)


def conf_dir(node, tag):
    return os.path.join(venv_dir(node, tag), 'etc', 'nova')


class OsaNode(object):
    """A twin node laid out as os_nova lays out a compute host, its unit run by standin_units.py."""

    def __init__(self, cloud, kind, hostname):
        self.cloud, self.kind, self.name = cloud, kind, hostname
        self.dir = nodes.create(cloud.path('nodes', hostname), kind, hostname, cloud.broker.transport_url,
                                operator_run.node_placement_auth(cloud))
        self.units = os.path.join(self.dir, 'systemd')
        self.bin = os.path.join(self.dir, 'bin')
        self.supervisor = None
        spec = nodes.read_spec(self.dir)
        confs = {OLD_TAG: spec.get('nova_conf') or {}, NEW_TAG: nodes.upgraded_conf(kind, spec.get('nova_conf') or {})}
        for tag, release in RELEASES.items():
            self._venv(tag, novactl.venv(release), confs[tag])
        os.makedirs(os.path.join(self.dir, 'etc'))
        os.symlink('../openstack/venvs/nova-%s/etc/nova' % OLD_TAG, os.path.join(self.dir, 'etc', 'nova'))
        _write(os.path.join(self.dir, 'etc', 'sudoers.d', 'nova_sudoers'), osa.sudoers_text(self.dir, OLD_TAG), 0o440)
        self.unit_file = os.path.join(self.dir, 'etc', 'systemd', 'system', '%s.service' % UNIT)
        _write(self.unit_file, osa.unit_text(self.dir, OLD_TAG))
        _write(os.path.join(self.units, 'unit_file'), self.unit_file)
        _write(os.path.join(self.bin, 'systemctl'), '#!/bin/sh\nexec "%s" "%s" systemctl "%s" "$@"\n'
               % (sys.executable, STANDIN_UNITS, self.units), 0o755)
        self.shell = os.path.join(self.bin, 'node-shell')
        _write(self.shell, NODE_SHELL % {'host': hostname, 'bin': self.bin}, 0o755)

    def _venv(self, tag, real, sections):
        """os_nova's venv of ``tag``: a venv of ``real``'s python and packages at the versioned path,
        its nova-compute the twin's launcher, its config directory inside it."""
        venv = venv_dir(self.dir, tag)
        os.makedirs(os.path.join(venv, 'bin'))
        os.symlink(os.path.join(real, 'lib'), os.path.join(venv, 'lib'))
        _write(os.path.join(venv, 'pyvenv.cfg'), _read(os.path.join(real, 'pyvenv.cfg')))
        for program in ('python', 'nova-rootwrap', 'privsep-helper'):
            os.symlink(os.path.join(real, 'bin', program), os.path.join(venv, 'bin', program))
        _write(os.path.join(venv, 'bin', 'nova-compute'), LAUNCHER % {
            'venv': venv, 'host': self.name, 'node': self.dir, 'launcher': os.path.join(HERE, 'compute.py')}, 0o755)
        _write(os.path.join(conf_dir(self.dir, tag), 'nova.conf'), nova_conf(self.dir, sections), 0o640)

    # -- the node's service manager ----------------------------------------------------------------
    def boot(self):
        """The node's service manager starts (loads the unit file) and starts the unit, as at boot."""
        with open(os.path.join(self.dir, 'compute.out'), 'ab') as out:
            self.supervisor = subprocess.Popen(
                [sys.executable, STANDIN_UNITS, 'supervise', self.units, UNIT, '--restart-sec', '2'],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=self.dir, start_new_session=True)

    def wait_started(self, timeout=300):
        """Until the unit's nova-compute ran nova's Service.start() (the launcher's compute.ready)."""
        deadline = time.monotonic() + timeout
        while not os.path.exists(os.path.join(self.dir, 'compute.pid')):
            assert self.supervisor.poll() is None, 'the service manager of %s ended: %s' % (self.name, self.out())
            assert time.monotonic() < deadline, 'nova-compute of %s did not start: %s' % (self.name, self.out())
            time.sleep(0.2)
        return novactl.wait(self.dir, max(deadline - time.monotonic(), 1))

    def out(self):
        return _read(os.path.join(self.dir, 'compute.out'))[-3000:]

    def shutdown(self):
        if self.supervisor is None or self.supervisor.poll() is not None:
            return
        self.supervisor.send_signal(signal.SIGTERM)
        try:
            self.supervisor.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.supervisor.pid, signal.SIGKILL)
            self.supervisor.wait()

    # -- what runs ---------------------------------------------------------------------------------
    def running(self):
        """(nova's version in the running nova-compute, its pid, its command line), as the launcher and
        /proc say; the pid is the unit's main process."""
        ready = json.loads(_read(os.path.join(self.dir, 'compute.ready')))
        pid = standin_units.child_pid(self.units)
        assert ready['pid'] == pid, (ready, pid)
        with open('/proc/%d/cmdline' % pid) as handle:
            return ready['release'], pid, handle.read().split('\0')

    def events(self):
        return [e.split()[0] for e in standin_units.events(self.units)]

    def layout(self):
        return {'link': os.readlink(os.path.join(self.dir, 'etc', 'nova')), 'unit': _read(self.unit_file),
                'sudoers': _read(os.path.join(self.dir, 'etc', 'sudoers.d', 'nova_sudoers'))}

    def host_vars(self):
        host = {'ansible_connection': 'local', 'ansible_python_interpreter': os.path.join(operator_run.MAIN_VENV, 'bin', 'python'),
                'ansible_shell_executable': self.shell,
                'rolling_reshape_provider_name': self.name, 'rolling_reshape_compute_host': self.name,
                'osa_nova_root': self.dir}
        host.update(nodes.discovery_paths(self.dir))
        # what the roll's discovery reads: the new release's nova.conf, in its config directory
        host['rolling_reshape_nova_conf'] = os.path.join(conf_dir(self.dir, NEW_TAG), 'nova.conf')
        return host


def service_versions(cloud):
    """nova's services records of the nova-compute services (cell1's database): {host: (version, disabled)}."""
    import pymysql
    conn = pymysql.connect(host=cloud_mod.LOOPBACK, port=cloud.db.port, user='nova', password=cloud.db_passwords['nova'],
                           database='nova')
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT host, version, disabled FROM services WHERE `binary` = 'nova-compute' AND deleted = 0")
            return dict((host, (version, bool(disabled))) for host, version, disabled in cur.fetchall())
    finally:
        conn.close()


def release_service_version(release):
    out = subprocess.run([os.path.join(novactl.venv(release), 'bin', 'python'), '-W', 'ignore', '-c',
                          'from nova.objects import service; print(service.SERVICE_VERSION)'],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True, check=True)
    return int(out.stdout.split()[-1])


def roll(cloud, clouds_yaml, osa_nodes, name, recipe):
    out = cloud.path(name)
    os.makedirs(out)
    inventory = os.path.join(out, 'inventory.json')
    with open(inventory, 'w') as handle:
        json.dump({'all': {'children': {'compute': {'hosts': dict((n.name, n.host_vars()) for n in osa_nodes)}}}},
                  handle, indent=1, sort_keys=True)
    variables = dict({'rolling_reshape_nova_timeout': 300}, **recipe)
    variables.update(rolling_reshape_serial=len(osa_nodes), rolling_reshape_run_id=name)
    result, seconds = operator_run.run_roll(out, inventory, clouds_yaml, variables)
    return out, result, seconds


@pytest.fixture(scope='module')
def osa_cloud(cloud, request):
    """The nodes on nova 33 (their units started by their service managers), registered in nova,
    each with its guest (booted through nova-api): {'nodes': {name: OsaNode}, 'guests': {name: server}}."""
    made = {}

    def stop_all():
        for node in made.values():
            node.shutdown()
    request.addfinalizer(stop_all)
    began = time.monotonic()
    for kind, hostname in NODES:
        made[hostname] = OsaNode(cloud, kind, hostname)
        # (a safety net: the cloud's stop ends a nova-compute left behind, by its pid)
        cloud.started_nodes.append(made[hostname].dir)
    for node in made.values():
        node.boot()
    for node in made.values():
        node.wait_started()
    operator_run.register_nodes(cloud, dict((h, n.dir) for h, n in made.items()))
    up = time.monotonic() - began
    admin = cloud.connect('operator')
    flavors = dict((kind, operator_run.flavor(admin, name, vcpus=vcpus, extra_specs=specs))
                   for kind, (name, vcpus, specs) in GUEST_FLAVORS.items())
    guests = {}
    for kind, hostname in NODES:
        server, _took = operator_run.boot(admin, 'guest-' + hostname, flavors[kind].id, cloud_mod.IMAGE_ID, host=hostname)
        guests[hostname] = admin.compute.get_server(server.id)
        assert guests[hostname].status == 'ACTIVE' and guests[hostname].compute_host == hostname, guests[hostname]
    print('\nopenstack-ansible twin: %d nodes up on nova 33 in %.1f s, guests booted in %.1f s'
          % (len(made), up, time.monotonic() - began - up))
    return {'nodes': made, 'guests': guests}


def test_the_roll_switches_the_node_to_nova_34_between_the_verified_reshape_and_the_start(cloud, clouds_yaml, osa_cloud):
    rolled = [osa_cloud['nodes'][h] for h in ('osa-pcpu', 'osa-vgpu')]
    guests = osa_cloud['guests']
    old_version, new_version = novactl.installed_version('33'), novactl.installed_version('34')
    assert new_version == osa.SWITCH_RECIPE['rolling_reshape_nova_expected_version']
    for node in rolled:
        assert node.running()[0] == old_version
        assert node.events() == ['start']
    before = operator_run.placement_state(cloud)
    totals_before = operator_run.consumer_totals(before)
    pinned = guests['osa-pcpu'].id
    assert 'VCPU' in totals_before[pinned] and 'PCPU' not in totals_before[pinned], totals_before[pinned]
    vgpu_before = operator_run.consumer_providers(before, guests['osa-vgpu'].id)['VGPU']
    assert len(vgpu_before) == 1 and vgpu_before[0].startswith('osa-vgpu_pci_'), vgpu_before
    log_sizes = dict((n.name, os.path.getsize(os.path.join(n.dir, 'nova-compute.log'))) for n in rolled)
    offset = cloud.placement_log_size()

    out, result, seconds = roll(cloud, clouds_yaml, rolled, 'osa-roll', dict(osa.VERSION_RECIPE, **osa.SWITCH_RECIPE))
    assert result.returncode == 0, result.stdout[-8000:]
    print('openstack-ansible twin: the roll (2 nodes, serial 2) took %.1f s' % seconds)

    fleet = {'out_dir': out}
    # (the vgpu node: nothing to move, its tree updated with nova 34's OWNER_NOVA trait)
    assert statuses(fleet) == {'osa-pcpu': 'reshaped', 'osa-vgpu': 'updated'}, summary(fleet)
    for record in summary(fleet)['nodes']:
        assert record['nova_compute'] == {'before': old_version, 'after': new_version}, record
    services = dict((s['host'], s) for s in cloud.services() if s['binary'] == 'nova-compute')
    records = service_versions(cloud)
    new_service_version = release_service_version('34')
    for node in rolled:
        # the unit loaded the rewritten unit file at the hook's daemon-reload, then the role started it:
        # it runs the new venv's nova-compute (nova 34's python and packages) on the new config directory
        assert node.events() == ['start', 'unit-stop', 'daemon-reload', 'unit-start'], standin_units.events(node.units)
        program = os.path.join(venv_dir(node.dir, NEW_TAG), 'bin', 'nova-compute')
        assert standin_units.events(node.units)[2] == 'daemon-reload %s' % program
        release, pid, cmdline = node.running()
        assert release == new_version, (node.name, release)
        assert cmdline[:2] == [os.path.join(venv_dir(node.dir, NEW_TAG), 'bin', 'python'),
                               os.path.join(HERE, 'compute.py')], cmdline
        assert node.layout() == {'link': '../openstack/venvs/nova-%s/etc/nova' % NEW_TAG,
                                 'unit': osa.unit_text(node.dir, NEW_TAG),
                                 'sudoers': osa.sudoers_text(node.dir, NEW_TAG)}
        assert os.path.realpath(os.path.join(node.dir, 'etc', 'nova')) == conf_dir(node.dir, NEW_TAG)
        # nova's own: os-services, its services record, its log
        assert (services[node.name]['status'], services[node.name]['state']) == ('enabled', 'up'), services[node.name]
        assert records[node.name] == (new_service_version, False), (node.name, records[node.name])
        with open(os.path.join(node.dir, 'nova-compute.log')) as handle:
            handle.seek(log_sizes[node.name])
            assert 'Starting compute node (version %s)' % new_version in handle.read()

    after = operator_run.placement_state(cloud)
    expected = dict(totals_before)
    moved = dict(expected[pinned])
    moved['PCPU'] = moved.pop('VCPU')
    expected[pinned] = moved
    assert operator_run.consumer_totals(after) == expected
    assert operator_run.consumer_providers(after, pinned)['PCPU'] == ['osa-pcpu']
    assert operator_run.consumer_providers(after, guests['osa-vgpu'].id)['VGPU'] == vgpu_before

    # The node's nova.conf holds nova's own [placement] credentials (the whole nova.conf, as on an
    # openstack-ansible host): the roll's check of them (preflight_check_nova_credentials) probes POST
    # /reshaper with them, the empty probe Placement's schema refuses (400), at most once per node.
    def probe(write):
        return write['method'] == 'POST' and write['uri'] == '/reshaper' and write['status'] == 400
    probes = [w for w in cloud.placement_requests(user='nova', since=offset, writes_only=True) if probe(w)]
    assert 1 <= len(probes) <= len(rolled), [w['line'] for w in probes]
    # nova 34 wrote nothing to Placement but nova's answer to the roll's disable and enable (the root's traits)
    # (and on a node where nova 33 raced the disable, its racing report: operator_run.check_status_answers);
    # split at the node's unit start on the new venv (the stand-in systemd's event log)
    new_started = dict((n.name, [w for w, e in standin_units.timed_events(n.units) if e.startswith('unit-start')][-1])
                       for n in rolled)
    split, _lines = operator_run.nova_writes_by_release(cloud, after, [n.name for n in rolled], offset, new_started,
                                                        probes=[])
    operator_run.check_status_answers(split, dict((n.name, operator_run.node_record(out, n.name)) for n in rolled))
    assert cloud.placement_requests(user='operator', since=offset, writes_only=True)


def test_without_the_hook_the_nodes_restart_on_the_old_venv_and_fail(cloud, clouds_yaml, osa_cloud):
    """The recipes without the post hook, on a vgpu and a pcpu node (one batch): both units start the
    old venv's nova-compute again.  On the vgpu node nova 33 comes back on the updated tree and the
    role fails the node on rolling_reshape_nova_expected_version.  On the pcpu node nova 33, on its
    legacy vcpu_pin_set, cannot start on the reshaped tree: Placement refuses its VCPU-only inventory
    (the pinned guest's PCPU is in use: InventoryInUse), nova-compute exits 1 and the unit restarts it
    again and again; the role fails the node at its wait for nova-compute up (within
    rolling_reshape_nova_timeout, 150 s here).  Both are left disabled in nova, on the reshaped tree."""
    failing = [osa_cloud['nodes'][h] for h in ('nohook-vgpu', 'nohook-pcpu')]
    vgpu_node, pcpu_node = failing
    pinned = osa_cloud['guests']['nohook-pcpu'].id
    old_version = novactl.installed_version('33')
    layouts = dict((n.name, n.layout()) for n in failing)
    log_sizes = dict((n.name, os.path.getsize(os.path.join(n.dir, 'nova-compute.log'))) for n in failing)
    before = operator_run.placement_state(cloud)
    recipe = dict(osa.VERSION_RECIPE, **osa.SWITCH_RECIPE)
    del recipe['rolling_reshape_post_tasks']
    recipe['rolling_reshape_nova_timeout'] = 150

    out, result, seconds = roll(cloud, clouds_yaml, failing, 'osa-roll-nohook', recipe)
    assert result.returncode != 0, result.stdout[-8000:]
    said = ' '.join(result.stdout.split())
    assert ('nohook-vgpu: the new nova-compute is %s, not %s (rolling_reshape_nova_expected_version); it runs, and '
            'is left disabled in nova.' % (old_version, recipe['rolling_reshape_nova_expected_version'])) in said, \
        result.stdout[-8000:]
    assert 'nova-compute on nohook-pcpu is not up after 150 s' in said, result.stdout[-8000:]
    fleet = {'out_dir': out}
    assert statuses(fleet) == {'nohook-vgpu': 'failed', 'nohook-pcpu': 'failed'}, summary(fleet)
    for record in summary(fleet)['nodes']:
        # the version the role read right after the start: the old release's
        assert record['nova_compute'] == {'before': old_version, 'after': old_version}, record
    services = dict((s['host'], s) for s in cloud.services() if s['binary'] == 'nova-compute')
    for node in failing:
        assert node.layout() == layouts[node.name]
        assert node.events()[:3] == ['start', 'unit-stop', 'unit-start'], standin_units.events(node.units)
        assert 'daemon-reload' not in node.events()
        assert services[node.name]['status'] == 'disabled', services[node.name]
    # the vgpu node: the old venv's nova-compute runs, up in nova
    release, pid, cmdline = vgpu_node.running()
    assert release == old_version
    assert cmdline[0] == os.path.join(venv_dir(vgpu_node.dir, OLD_TAG), 'bin', 'python'), cmdline
    assert vgpu_node.events() == ['start', 'unit-stop', 'unit-start'], standin_units.events(vgpu_node.units)
    assert services[vgpu_node.name]['state'] == 'up', services[vgpu_node.name]
    # the pcpu node: reshaped (the pinned guest holds PCPU), the old nova-compute ended on it and was restarted
    after = operator_run.placement_state(cloud)
    assert 'VCPU' in operator_run.consumer_totals(before)[pinned]
    assert 'PCPU' in operator_run.consumer_totals(after)[pinned] and 'VCPU' not in operator_run.consumer_totals(after)[pinned]
    assert pcpu_node.events()[3:5] == ['exit', 'restart'], standin_units.events(pcpu_node.units)
    with open(os.path.join(pcpu_node.dir, 'nova-compute.log')) as handle:
        handle.seek(log_sizes[pcpu_node.name])
        log = handle.read()
    assert 'InventoryInUse' in log and 'Starting compute node (version %s)' % old_version in log
    assert services[pcpu_node.name]['state'] == 'down', services[pcpu_node.name]
    print('openstack-ansible twin: the roll without the hook failed both nodes in %.1f s' % seconds)
