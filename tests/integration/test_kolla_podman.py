# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kolla-ansible's new release between the stop and the start, on REAL podman containers (issue 42,
section 1): playbooks/rolling_reshape.yml with the recipe and the post hook of docs/operator-guide.md
("kolla-ansible: the new release between the stop and the start"), read from the guide and run as
printed, against the real Placement.

What is real here: podman 4.3 (Debian's, as root, the runc runtime), the containers' lifecycle
(``podman run``/``stop``/``rm``/``create``/``start``/``exec``), kolla's container names
(``nova_compute``, ``nova_libvirt``) and options (privileged, host network and IPC, kolla's config
folder, ``/run``, ``/dev``, the named volumes ``kolla_logs``, ``libvirtd``, ``nova_compute``), the
named volume ``nova_libvirt_qemu`` mounted at ``/etc/libvirt/qemu`` in ``nova_libvirt``, into which
the guests' domain XML is written from inside that container and from whose real ``Mountpoint``
(``podman volume inspect``) discovery reads it, podman's own event log (the order of the
containers' stops, removals, creations and starts), and Placement.

What is a stand-in: the images are built here from a few of this machine's own programs (``sh``,
``sleep``, ...: no registry is reachable; the tarballs are cached under tests/output/kolla-podman/),
two tags standing for the old and the new release (``localhost/kolla/nova-compute:33.0.0`` and
``:34.0.0``); the ``nova-compute`` inside is a small shell program that prints its image's version
(``--version``) and otherwise runs until stopped (no nova, and no libvirtd in ``nova_libvirt``);
nova's os-services API is the stand-in of test_nova_compute_supervised.py, nova-compute up there
while the ``nova_compute`` container runs (``podman container inspect``); no systemd runs as PID 1
here, so kolla's units (kolla-<container>-container.service) are not run: the roll stops and starts
the container with the recipe's podman commands; ``/lib/modules`` (one of kolla's binds) does not
exist on this machine and is left out; docker is not installed, so the guide's docker form is not run.

The containers, volumes and images are the test's own: it refuses to start when any of those names
exists already (never removing what it did not make), and removes them all afterwards, failed or not
(the image tarballs stay cached).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import datetime
import fcntl
import glob
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import time

import pytest
import yaml

import simfleet
from test_fleet_playbook import BIN, _env, statuses, summary, trees
from test_nova_compute_supervised import NovaServices, flat, guide_recipes

pytestmark = [pytest.mark.slow, pytest.mark.real]

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CACHE = os.path.join(REPO, 'tests', 'output', 'kolla-podman')
# podman's names are the machine's (kolla's fixed container and volume names): one of these tests at a
# time on the machine, whichever xdist worker or checkout runs it
LOCK = '/tmp/placement-upgrade-kolla-podman.lock'

OLD, NEW = '33.0.0', '34.0.0'
IMAGE = 'localhost/kolla/nova-compute:%s'
LIBVIRT_IMAGE = 'localhost/kolla/nova-libvirt:%s' % OLD
CONTAINERS = ('nova_compute', 'nova_libvirt')
# nova_libvirt_qemu: the guests' definitions; the others: kolla's named volumes of nova_compute and nova_libvirt
VOLUMES = ('nova_libvirt_qemu', 'kolla_logs', 'libvirtd', 'nova_compute')
IMAGES = (IMAGE % OLD, IMAGE % NEW, LIBVIRT_IMAGE)
# the kolla discovery recipe's podman glob (docs/operator-guide.md)
PODMAN_GLOB = '/var/lib/containers/storage/volumes/nova_libvirt_qemu/_data/*.xml'

# the programs of the images' root filesystem, from this machine (with the libraries they load)
PROGRAMS = ('dash', 'true', 'sleep', 'cat', 'ls', 'date', 'rm', 'mkdir', 'mv', 'echo')
NOVA_COMPUTE = '''#!/bin/sh
# stand-in of the nova-compute of kolla's nova-compute image %(version)s (not nova): prints the
# image's version, or runs until stopped (podman stop: SIGTERM)
case "$1" in
  --version) echo %(version)s; exit 0 ;;
esac
trap 'exit 0' TERM INT
echo "nova-compute %(version)s started" >> /var/log/kolla/nova-compute-standin.log
while :; do sleep 1 & wait $!; done
'''
LIBVIRTD = '''#!/bin/sh
# stand-in of libvirtd in kolla's nova-libvirt image (not libvirt): runs until stopped
trap 'exit 0' TERM INT
while :; do sleep 1 & wait $!; done
'''


def guide_hook(name):
    """The task list of the guide's YAML block that starts with ``# hook: <name>``."""
    with open(os.path.join(REPO, 'docs', 'operator-guide.md')) as handle:
        text = handle.read()
    for block in re.findall(r'^```yaml\n(# hook: [^\n]+\n.*?)^```', text, flags=re.M | re.S):
        if block.split('\n', 1)[0][len('# hook: '):].strip() == name:
            return block
    raise AssertionError('docs/operator-guide.md has no hook %r' % name)


RECIPE = guide_recipes()["kolla-ansible, the new release's nova_compute (podman; for docker, docker in each command)"]
HOOK = guide_hook("kolla-ansible, nova_compute recreated from the new release's image, not started")


class Podman(object):
    """podman as root with this machine's settings: the runc runtime (crun fails on hybrid cgroups
    here), explicit ulimits (runc fails on setrlimit without them), the event log in a file of the
    test's.  They are in a containers.conf of the test's (CONTAINERS_CONF), so that the guide's
    commands run as printed."""

    def __init__(self, work_dir):
        self.conf = os.path.join(work_dir, 'containers.conf')
        self.events_log = os.path.join(work_dir, 'podman-events.log')
        with open(self.conf, 'w') as handle:
            handle.write('[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]\n'
                         '[engine]\nruntime = "runc"\nevents_logger = "file"\nevents_logfile_path = "%s"\n'
                         % self.events_log)
        self.env = dict(os.environ, CONTAINERS_CONF=self.conf)

    def run(self, *args, **kwargs):
        proc = subprocess.run(['podman'] + list(args), env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=120, check=False, **kwargs)
        return proc

    def ok(self, *args, **kwargs):
        proc = self.run(*args, **kwargs)
        assert proc.returncode == 0, 'podman %s: rc %d: %s' % (' '.join(args), proc.returncode, proc.stderr)
        return proc.stdout

    def inspect(self, kind, name):
        return json.loads(self.ok(kind, 'inspect', name))[0]

    def events(self, name):
        """podman's own events of the container ``name``: [(time, status, container id, image)]."""
        found = []
        with open(self.events_log) as handle:
            for line in handle:
                event = json.loads(line)
                if event.get('Type') == 'container' and event.get('Name') == name:
                    found.append((_when(event['Time']), event['Status'], event['ID'], event.get('Image')))
        return found


def _when(stamp):
    """podman's event time (RFC 3339, nanoseconds, Z) as a naive UTC datetime."""
    day, clock = stamp.rstrip('Z').split('T')
    clock, fraction = (clock.split('.', 1) + [''])[:2]
    return datetime.datetime.strptime('%sT%s.%s' % (day, clock, (fraction + '000000')[:6]), '%Y-%m-%dT%H:%M:%S.%f')


def _rootfs_members():
    """The files of the images' common root filesystem: (path in the image, path on this machine)."""
    members = []
    for name in PROGRAMS:
        members.append(('usr/bin/' + name, os.path.realpath(shutil.which(name))))
    libs = set()
    for path in [source for unused, source in members]:
        out = subprocess.run(['ldd', path], stdout=subprocess.PIPE, universal_newlines=True, check=False).stdout
        libs.update(re.findall(r'(/\S+\.so[.\d]*)', out))
    for lib in sorted(libs):
        members.append((lib.lstrip('/'), os.path.realpath(lib)))
    return members


def image_tarballs():
    """{image: tarball}, built once and cached under tests/output/kolla-podman/ (the key: this
    machine's programs, sizes and times, and the stand-in programs' text)."""
    members = _rootfs_members()
    key = hashlib.sha256(json.dumps([[m, os.stat(p).st_size, int(os.stat(p).st_mtime)] for m, p in members]
                                    + [NOVA_COMPUTE, LIBVIRTD]).encode('utf-8')).hexdigest()[:16]
    programs = {IMAGE % OLD: ('usr/bin/nova-compute', NOVA_COMPUTE % {'version': OLD}),
                IMAGE % NEW: ('usr/bin/nova-compute', NOVA_COMPUTE % {'version': NEW}),
                LIBVIRT_IMAGE: ('usr/sbin/libvirtd', LIBVIRTD)}
    found = {}
    for image, (program, text) in programs.items():
        path = os.path.join(CACHE, '%s-%s.tar' % (re.sub(r'[^A-Za-z0-9.]+', '-', image), key))
        found[image] = path
        if os.path.exists(path):
            continue
        if not os.path.isdir(CACHE):
            os.makedirs(CACHE)
        tmp = path + '.tmp'
        with tarfile.open(tmp, 'w') as tar:
            for folder in ('bin', 'usr/bin', 'usr/sbin', 'lib', 'lib64', 'lib/x86_64-linux-gnu', 'etc', 'etc/libvirt',
                           'etc/libvirt/qemu', 'tmp', 'proc', 'sys', 'dev', 'run', 'var', 'var/lib', 'var/lib/nova',
                           'var/lib/libvirt', 'var/lib/kolla', 'var/lib/kolla/config_files', 'var/log', 'var/log/kolla'):
                info = tarfile.TarInfo(folder)
                info.type, info.mode = tarfile.DIRTYPE, 0o1777 if folder == 'tmp' else 0o755
                tar.addfile(info)
            for member, source in members:
                tar.add(source, arcname=member)
            link = tarfile.TarInfo('bin/sh')
            link.type, link.linkname = tarfile.SYMTYPE, '/usr/bin/dash'
            tar.addfile(link)
            data = text.encode('utf-8')
            info = tarfile.TarInfo(program)
            info.size, info.mode = len(data), 0o755
            tar.addfile(info, io.BytesIO(data))
        os.rename(tmp, path)
    return found


class PodmanNova(NovaServices):
    """nova's os-services API stand-in: the node's nova-compute is up while its container runs."""

    def __init__(self, state_dir, podman):
        self.podman = podman
        NovaServices.__init__(self, state_dir)

    def running(self):
        proc = self.podman.run('container', 'inspect', '--format', '{{.State.Running}}', 'nova_compute')
        return proc.returncode == 0 and proc.stdout.strip() == 'true'


# kolla's options for the nova_compute container (kolla-ansible's nova-cell role, nova_cell_services and
# nova_compute_default_volumes), as `kolla-ansible deploy` of the old release creates it
def kolla_nova_compute(config_dir, image):
    return ['--name=nova_compute', '--privileged', '--network=host', '--ipc=host',
            '--env=KOLLA_CONFIG_STRATEGY=COPY_ALWAYS', '--env=LIBGUESTFS_BACKEND=direct',
            '--volume=%s/:/var/lib/kolla/config_files/:ro' % config_dir, '--volume=/etc/localtime:/etc/localtime:ro',
            '--volume=/run:/run', '--volume=/dev:/dev', '--volume=kolla_logs:/var/log/kolla/',
            '--volume=libvirtd:/var/lib/libvirt', '--volume=nova_compute:/var/lib/nova/', image]


@pytest.fixture
def podman(tmp_path):
    if shutil.which('podman') is None or shutil.which('runc') is None:
        pytest.fail('podman and runc are not installed: `make deps` installs them (bindep.txt, profile test)')
    if os.geteuid() != 0:
        pytest.fail('this test runs podman as root (rootless podman has other volume paths): run it as root')
    lock = open(LOCK, 'a')
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        with _podman(tmp_path) as engine:
            yield engine
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)
        lock.close()


@contextlib.contextmanager
def _podman(tmp_path):
    engine = Podman(str(tmp_path))
    taken = [n for n in CONTAINERS if engine.run('container', 'exists', n).returncode == 0]
    taken += ['volume ' + n for n in VOLUMES if engine.run('volume', 'exists', n).returncode == 0]
    taken += ['image ' + n for n in IMAGES if engine.run('image', 'exists', n).returncode == 0]
    if taken:
        pytest.fail('podman already has %s: this test makes and removes them, and never removes what it did not '
                    'make (another run of it, or a real kolla node?)' % ', '.join(taken))
    made = {'images': []}
    try:
        started = time.time()
        tarballs = image_tarballs()
        built = time.time()
        for image in IMAGES:
            cmd = 'CMD ["/usr/sbin/libvirtd"]' if 'libvirt' in image else 'CMD ["/usr/bin/nova-compute"]'
            engine.ok('import', '--change', cmd, tarballs[image], image)
            made['images'].append(image)
        engine.timings = {'tarballs': built - started, 'imports': time.time() - built}
        print('kolla-podman images: tarballs %.2f s (cached under %s), podman import %.2f s'
              % (engine.timings['tarballs'], CACHE, engine.timings['imports']))
        yield engine
    finally:
        for name in CONTAINERS:
            engine.run('rm', '--force', '--time=0', name)
        for name in VOLUMES:
            engine.run('volume', 'rm', '--force', name)
        for image in made['images']:
            engine.run('rmi', '--force', image)


@pytest.fixture
def kolla_node(tmp_path, podman, placement_server, rest_backend, unique_name):
    """One compute node as kolla-ansible lays it out, on podman: nova_libvirt with the guests' domain
    XML in its nova_libvirt_qemu volume (none anywhere else), nova_compute of the old release running."""
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=1, prefix=unique_name('kolla') + '-', backend=rest_backend,
                           inventory_vars={'placement_backend': placement_server.module_auth()})
    assert list(fleet['expected'].values()) == ['reshaped']
    node = fleet['nodes'][0]
    definitions = sorted(glob.glob(node['domain_xml_glob']))
    assert definitions, node['domain_xml_glob']
    config_dir = str(tmp_path / 'etc' / 'kolla' / 'nova-compute')
    os.makedirs(config_dir)
    podman.ok('run', '--detach', '--name=nova_libvirt', '--privileged', '--network=host', '--pid=host',
              '--volume=/run:/run', '--volume=/dev:/dev', '--volume=kolla_logs:/var/log/kolla/',
              '--volume=libvirtd:/var/lib/libvirt', '--volume=nova_libvirt_qemu:/etc/libvirt/qemu', LIBVIRT_IMAGE)
    # libvirt defines the guests in its container: the XML lands in the volume, not in the host's /etc/libvirt/qemu
    for path in definitions:
        with open(path) as handle:
            podman.ok('exec', '--interactive', 'nova_libvirt', 'sh', '-c',
                      'cat > /etc/libvirt/qemu/%s' % os.path.basename(path), input=handle.read())
        os.unlink(path)
    mountpoint = podman.inspect('volume', 'nova_libvirt_qemu')['Mountpoint']
    assert sorted(os.listdir(mountpoint)) == [os.path.basename(p) for p in definitions]
    podman.ok('run', '--detach', *kolla_nova_compute(config_dir, IMAGE % OLD))
    assert podman.ok('exec', 'nova_compute', 'nova-compute', '--version').strip() == OLD
    nova = PodmanNova(str(tmp_path), podman)
    try:
        yield {'fleet': fleet, 'node': node['name'], 'provider': node['provider'], 'mountpoint': mountpoint,
               'definitions': [os.path.basename(p) for p in definitions], 'xml_glob': node['domain_xml_glob'], 'nova': nova,
               'old_id': podman.inspect('container', 'nova_compute')['Id']}
    finally:
        nova.close()


def roll(kolla, podman, extra):
    """ansible-playbook placement.upgrade.rolling_reshape on the node, podman's settings in CONTAINERS_CONF."""
    fleet = kolla['fleet']
    out = fleet['out_dir']
    extra = dict({'rolling_reshape_snapshot_dir': os.path.join(out, 'snapshots'),
                  'rolling_reshape_report_dir': os.path.join(out, 'reports'),
                  'rolling_reshape_nova_service': 'always',
                  'rolling_reshape_compute_endpoint': kolla['nova'].url,
                  # the stand-in reports a stopped nova-compute down at once
                  'rolling_reshape_nova_force_down': True,
                  'rolling_reshape_nova_timeout': 60,
                  'rolling_reshape_domain_xml_glob': PODMAN_GLOB}, **extra)
    env = _env(out)
    env['CONTAINERS_CONF'] = podman.conf
    started = time.time()
    proc = subprocess.run([os.path.join(BIN, 'ansible-playbook'), '-i', fleet['inventory'], 'placement.upgrade.rolling_reshape',
                           '-e', json.dumps(extra)], env=env, cwd=out, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, check=False, timeout=600)
    print('the roll took %.1f s' % (time.time() - started))
    return proc.returncode, proc.stdout


def verified_at(kolla):
    """When the node's reshape was verified: the outcome its snapshot records (written right after the
    verification passed), as a naive UTC datetime."""
    path = os.path.join(kolla['fleet']['out_dir'], 'snapshots', '%s.latest.json' % kolla['provider'])
    with open(path) as handle:
        outcome = json.load(handle)['outcome']
    assert outcome['status'] == 'verified', outcome
    return datetime.datetime.strptime(outcome['at'], '%Y%m%dT%H%M%S.%fZ')


def test_the_guide_gives_the_sequence_tested_here():
    assert RECIPE['rolling_reshape_nova_stop_command'] == ['podman', 'stop', 'nova_compute']
    assert RECIPE['rolling_reshape_nova_start_command'] == ['podman', 'start', 'nova_compute']
    assert RECIPE['rolling_reshape_nova_expected_version'] == NEW
    assert RECIPE['rolling_reshape_post_tasks'].endswith('/kolla_nova_compute_new_image.yml')
    tasks = yaml.safe_load(HOOK)
    # the hook's commands, through the connection without a module process
    assert [t['placement.upgrade.node_command']['argv'][1] if isinstance(t['placement.upgrade.node_command']['argv'], list)
            else 'create' for t in tasks] == ['image', 'container', 'rm', 'create']
    assert "'create', '--name=nova_compute', '--pull=never'" in tasks[-1]['placement.upgrade.node_command']['argv']


def test_the_new_release_is_created_after_the_verified_reshape_and_started(tmp_path, podman, kolla_node, rest_backend):
    kolla = kolla_node
    fleet, node = kolla['fleet'], kolla['node']
    before = trees(fleet, rest_backend)
    hook = str(tmp_path / 'kolla_nova_compute_new_image.yml')
    with open(hook, 'w') as handle:
        handle.write(HOOK)
    rc, out = roll(kolla, podman, dict(RECIPE, rolling_reshape_post_tasks=hook, nova_compute_image_full=IMAGE % NEW))
    assert rc == 0, out
    # the node reshaped and verified, from the guests discovery read in the real volume
    assert statuses(fleet) == {node: 'reshaped'}, out
    assert trees(fleet, rest_backend) != before
    assert podman.inspect('volume', 'nova_libvirt_qemu')['Mountpoint'] + '/*.xml' == PODMAN_GLOB
    # the guests holding the node's VGPU were found (none is anywhere but in the volume): they moved to
    # the GPUs' children, none deferred as a move in flight, no warning that no definition was found
    assert not glob.glob(kolla['xml_glob']) and sorted(os.listdir(kolla['mountpoint'])) == kolla['definitions']
    figures = summary(fleet)['nodes'][0]['figures']
    assert figures['consumers_moved'] == 4 and figures['allocations_moved'] == 4, figures
    assert 'no guest domain definition was found' not in flat(out), out
    # nova_compute runs the new image now; the expected version was met
    container = podman.inspect('container', 'nova_compute')
    assert container['ImageName'] == IMAGE % NEW and container['State']['Running'] is True, container['State']
    assert container['Image'] == podman.inspect('image', IMAGE % NEW)['Id']
    assert container['Id'] != kolla['old_id']
    assert podman.ok('exec', 'nova_compute', 'nova-compute', '--version').strip() == NEW
    assert summary(fleet)['nodes'][0]['nova_compute'] == {'before': OLD, 'after': NEW}
    # the old container's volumes and config folder went to the new one
    binds = container['HostConfig']['Binds']
    assert any(b.startswith('nova_compute:/var/lib/nova') for b in binds) and \
        any(b.endswith(':/var/lib/kolla/config_files/:ro,rprivate,rbind') for b in binds), binds
    # the order, from podman's own event log: the old container stopped before the reshape, the
    # new one created and started only after the verified reshape, nothing started in between
    verified = verified_at(kolla)
    events = podman.events('nova_compute')
    old = [(e[0], e[1]) for e in events if e[2] == kolla['old_id']]
    new = [(e[0], e[1]) for e in events if e[2] == container['Id']]
    # (the old one's end is its `died` event: `podman stop` adds a `stop` only when conmon's cleanup
    # did not see the exit first)
    assert [s for w, s in old if s in ('start', 'died', 'remove')] == ['start', 'died', 'remove'], events
    stopped = [w for w, s in old if s == 'died'][0]
    removed = [w for w, s in old if s == 'remove'][0]
    created = [w for w, s in new if s == 'create'][0]
    starts = [w for w, s in new if s == 'start']
    assert stopped < verified < removed < created, (stopped, verified, removed, created)
    assert len(starts) == 1 and created < starts[0], new
    print('from the verified reshape: the old container removed after %.2f s, the new one created after %.2f s, '
          'started after %.2f s' % tuple((w - verified).total_seconds() for w in (removed, created, starts[0])))
    assert not [e for e in events if e[1] == 'start' and stopped < e[0] < verified], events
    record = kolla['nova'].records[kolla['provider']]
    assert (record['status'], record['forced_down']) == ('enabled', False)


def test_the_roles_start_alone_restarts_the_old_release_and_fails_the_node(tmp_path, podman, kolla_node, rest_backend):
    """The role's plain start (the old recipe, without the hook): `podman start nova_compute` starts
    the OLD container again, and with rolling_reshape_nova_expected_version every node fails."""
    kolla = kolla_node
    fleet, node = kolla['fleet'], kolla['node']
    recipe = dict((k, v) for k, v in RECIPE.items() if k != 'rolling_reshape_post_tasks')
    rc, out = roll(kolla, podman, dict(recipe, nova_compute_image_full=IMAGE % NEW))
    assert rc != 0, out
    said = flat(out)
    assert ('%s: the new nova-compute is %s, not %s (rolling_reshape_nova_expected_version); it runs, and is left '
            'disabled in nova.' % (node, OLD, NEW)) in said, out
    assert statuses(fleet) == {node: 'failed'}
    # the reshape itself was done and verified; the old container runs again, the new image unused
    verified_at(kolla)
    container = podman.inspect('container', 'nova_compute')
    assert container['Id'] == kolla['old_id'] and container['ImageName'] == IMAGE % OLD
    assert container['State']['Running'] is True
    assert kolla['nova'].records[kolla['provider']]['status'] == 'disabled'


def test_a_missing_new_image_fails_the_node_before_the_old_container_is_removed(tmp_path, podman, kolla_node):
    """The hook's first task: the new image not on the node (not pulled before the roll) fails the node
    after its verified reshape, the old container stopped but kept; `podman start nova_compute` brings
    the old release back, as the guide says."""
    kolla = kolla_node
    fleet, node = kolla['fleet'], kolla['node']
    hook = str(tmp_path / 'kolla_nova_compute_new_image.yml')
    with open(hook, 'w') as handle:
        handle.write(HOOK)
    missing = 'localhost/kolla/nova-compute:35.0.0'
    rc, out = roll(kolla, podman, dict(RECIPE, rolling_reshape_post_tasks=hook, nova_compute_image_full=missing))
    assert rc != 0, out
    assert statuses(fleet) == {node: 'failed'}
    assert "Check that the new release's nova-compute image is on the node" in summary(fleet)['nodes'][0]['reason']
    verified_at(kolla)
    container = podman.inspect('container', 'nova_compute')
    assert container['Id'] == kolla['old_id'] and container['State']['Running'] is False
    assert "Remove the old release's nova_compute container" not in out, out
    assert kolla['nova'].records[kolla['provider']]['status'] == 'disabled'
    podman.ok('start', 'nova_compute')
    assert podman.ok('exec', 'nova_compute', 'nova-compute', '--version').strip() == OLD
