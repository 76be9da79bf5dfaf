# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nova-compute under a supervisor, around the node's reshape (issue 27, section 2): the rolling
role with ansible-playbook against the real Placement, nova's os-services API stood in here, and a
fake nova-compute process run by a stand-in of a systemd unit with Restart=always
(tests/integration/standin_units.py), as kolla-ansible 16.0.0 and later runs every container
(kolla-<container>-container.service, RestartSec 11 s there, 1 s here).

* kolla's old recipe, ``docker stop nova_compute`` (the command path), is undone by the unit: the
  process is started again, and rolling_reshape_nova_status_command, read right before the
  reshape, finds it running; the node fails before the reshape, left disabled in nova, its tree
  untouched.
* the recipe on the unit (kolla-nova_compute-container; openstack-ansible's nova-compute unit on
  the host): the service manager path, ansible.builtin.service run as on a systemd host (the
  service_mgr fact says systemd, and ``systemctl`` on PATH is the stand-in, so ansible-core's own
  systemd_service module runs it): a stop through the unit is not undone (the node is reshaped,
  nova-compute started again by the unit and enabled), and a unit started again behind the role's
  back is found (its state re-read) and fails the node.

What this does not test: systemd itself (D-Bus, a unit's real Restart= handling), docker or
podman, kolla's and openstack-ansible's real units; the stand-ins do what their documentation
says (systemd.service(5): Restart=always restarts a process that ended unless the unit was
stopped; docker exec fails on a stopped container).  The nova stand-in reports a stopped
nova-compute down at once (real nova: after service_down_time, or at once when forced_down).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json
import os
import re
import stat
import subprocess
import sys
import threading
import time
import uuid

import pytest
import yaml

try:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
except ImportError:  # Python < 3.7
    from http.server import BaseHTTPRequestHandler, HTTPServer as ThreadingHTTPServer

try:
    from urllib.parse import parse_qs, urlparse
except ImportError:  # pragma: no cover
    from urlparse import parse_qs, urlparse

import simfleet
import standin_units
from test_fleet_playbook import BIN, _env, statuses, summary, trees

pytestmark = [pytest.mark.slow, pytest.mark.real]

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
KOLLA_UNIT = 'kolla-nova_compute-container'


def guide_recipes():
    """The YAML blocks of docs/operator-guide.md that start with ``# recipe: <name>``: {name: vars}.

    The tests below run them as they are (the stand-in docker, systemctl and nova-compute come first
    on PATH)."""
    with open(os.path.join(REPO, 'docs', 'operator-guide.md')) as handle:
        text = handle.read()
    found = {}
    for block in re.findall(r'^```yaml\n(# recipe: [^\n]+\n.*?)^```', text, flags=re.M | re.S):
        found[block.split('\n', 1)[0][len('# recipe: '):].strip()] = yaml.safe_load(block)
    return found


RECIPES = guide_recipes()
KOLLA = RECIPES['kolla-ansible 16.0.0 and later']
CONTAINER = RECIPES['a nova_compute container without a unit']
OSA = RECIPES['openstack-ansible']


class NovaServices(object):
    """nova's os-services API (2.53) for the nodes' nova-compute: up while the fake process runs.

    ``service_down_time``: None reports a stopped nova-compute down at once; a number of seconds, as
    nova does, only once it has not reported for that long (or at once when forced_down)."""

    def __init__(self, state_dir, service_down_time=None, first_report_after=0):
        self.state_dir = state_dir
        self.service_down_time = service_down_time
        # a started nova-compute's first report comes this many seconds after its start (nova's
        # report_interval timer); before it, it is not up
        self.first_report_after = first_report_after
        self.gets = []
        # a status nova answers every GET with (None: it answers them), as a nova behind a failing proxy
        self.refuse_gets = None
        self.records = {}
        self.puts = []
        self.last_report = None
        self.lock = threading.Lock()
        nova = self

        class Handler(BaseHTTPRequestHandler):
            def _send(self, status, body):
                data = json.dumps(body).encode('utf-8')
                self.send_response(status)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(data)))
                self.send_header('OpenStack-API-Version', 'compute 2.53')
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                url = urlparse(self.path)
                query = dict((k, v[0]) for k, v in parse_qs(url.query).items())
                if url.path.rstrip('/') != '/v2.1/os-services':
                    return self._send(404, {'itemNotFound': {'message': 'no %s here' % url.path}})
                with nova.lock:
                    nova.gets.append(time.time())
                    if nova.refuse_gets:
                        return self._send(nova.refuse_gets, {'computeFault': {
                            'code': nova.refuse_gets, 'message': 'nova is not answering (%d)' % nova.refuse_gets}})
                    services = [nova.record(query['host'])] if query.get('host') else list(nova.records.values())
                self._send(200, {'services': [nova.shown(s) for s in services
                                              if s['binary'] == query.get('binary', s['binary'])]})

            def do_PUT(self):
                url = urlparse(self.path)
                body = json.loads(self.rfile.read(int(self.headers.get('Content-Length') or 0)) or b'{}')
                with nova.lock:
                    found = [s for s in nova.records.values() if url.path == '/v2.1/os-services/%s' % s['id']]
                    if not found:
                        return self._send(404, {'itemNotFound': {'message': 'no service %s' % url.path}})
                    record = found[0]
                    nova.puts.append(dict(body))
                    if body.get('status') == 'enabled':
                        record.update(status='enabled', disabled_reason=None)
                    elif body.get('status') == 'disabled':
                        record.update(status='disabled', disabled_reason=body.get('disabled_reason'))
                    if 'forced_down' in body:
                        record['forced_down'] = bool(body['forced_down'])
                    shown = nova.shown(record)
                self._send(200, {'service': shown})

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.url = 'http://127.0.0.1:%d/v2.1' % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever)
        self.thread.daemon = True
        self.thread.start()

    def record(self, host):
        if host not in self.records:
            self.records[host] = {'id': str(uuid.uuid4()), 'host': host, 'binary': 'nova-compute', 'zone': 'nova',
                                  'status': 'enabled', 'disabled_reason': None, 'forced_down': False}
        return self.records[host]

    def running(self):
        """Whether the node's nova-compute runs (and has made its first report) now."""
        running = standin_units.child_pid(self.state_dir) is not None
        if running and self.first_report_after:
            started = os.path.getmtime(os.path.join(self.state_dir, 'child.pid'))
            running = time.time() - started >= self.first_report_after
        return running

    def shown(self, record):
        now = datetime.datetime.utcnow()
        running = self.running()
        if running:
            # a running nova-compute reports every report_interval; here: whenever nova is asked
            self.last_report = now.strftime('%Y-%m-%dT%H:%M:%S.%f')
        if self.service_down_time is None or self.last_report is None:
            alive = running
        else:
            since = (now - datetime.datetime.strptime(self.last_report, '%Y-%m-%dT%H:%M:%S.%f')).total_seconds()
            alive = since <= self.service_down_time
        return dict(record, state='up' if alive and not record['forced_down'] else 'down',
                    updated_at=self.last_report)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def node_side(tmp_path):
    """Start a unit's supervisor: ``start(unit, restart_sec)`` gives its state dir; the stand-in
    ``systemctl`` and ``docker`` are in ``bin`` (they act on the last unit started)."""
    state_dir = str(tmp_path / 'unit')
    os.makedirs(state_dir)
    bin_dir = str(tmp_path / 'bin')
    os.makedirs(bin_dir)
    for tool, kind in (('systemctl', 'systemctl'), ('docker', 'docker'), ('nova-compute', 'nova-compute-cli')):
        path = os.path.join(bin_dir, tool)
        with open(path, 'w') as handle:
            handle.write('#!/bin/sh\nexec "%s" "%s" %s "%s" "$@"\n'
                         % (sys.executable, os.path.join(HERE, 'standin_units.py'), kind, state_dir))
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    started = []

    def start(unit, restart_sec):
        proc = subprocess.Popen([sys.executable, os.path.join(HERE, 'standin_units.py'), 'supervise', state_dir,
                                 unit, '--restart-sec', str(restart_sec)])
        started.append(proc)
        end = time.time() + 20
        while not (os.path.exists(os.path.join(state_dir, 'supervisor.pid'))
                   and standin_units.child_pid(state_dir)):
            assert time.time() < end and proc.poll() is None, 'the stand-in unit did not start'
            time.sleep(0.05)
        return state_dir

    try:
        yield {'start': start, 'bin': bin_dir, 'dir': state_dir}
    finally:
        for proc in started:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture
def nova(node_side):
    server = NovaServices(node_side['dir'])
    try:
        yield server
    finally:
        server.close()


SYSTEMD_HOST = '''---
- name: The stand-in nodes are systemd hosts (their systemctl is the test's stand-in on PATH)
  hosts: compute
  gather_facts: false
  tasks:
    - name: Say that the service manager is systemd, as fact gathering would on such a host
      ansible.builtin.set_fact:
        ansible_service_mgr: systemd
        cacheable: true

- name: The roll
  ansible.builtin.import_playbook: placement.upgrade.rolling_reshape
'''


def roll(fleet, node_side, extra, systemd=False, hook=None):
    """ansible-playbook placement.upgrade.rolling_reshape on the fleet, the stand-ins first on PATH."""
    out = fleet['out_dir']
    if systemd:
        playbook = os.path.join(out, 'systemd_host_roll.yml')
        with open(playbook, 'w') as handle:
            handle.write(SYSTEMD_HOST)
    else:
        playbook = 'placement.upgrade.rolling_reshape'
    extra = dict({'rolling_reshape_snapshot_dir': os.path.join(out, 'snapshots'),
                  'rolling_reshape_report_dir': os.path.join(out, 'reports')}, **extra)
    if hook:
        path = os.path.join(out, 'pre_hook.yml')
        with open(path, 'w') as handle:
            handle.write(hook)
        extra['rolling_reshape_pre_tasks'] = path
    env = _env(out)
    env['PATH'] = node_side['bin'] + os.pathsep + env.get('PATH', '')
    proc = subprocess.run([os.path.join(BIN, 'ansible-playbook'), '-i', fleet['inventory'], playbook,
                           '-e', json.dumps(extra)], env=env, cwd=out, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, check=False, timeout=600)
    return proc.returncode, proc.stdout


def one_node_fleet(tmp_path, placement_server, rest_backend, unique_name):
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=1, prefix=unique_name('sup') + '-', backend=rest_backend,
                           inventory_vars={'placement_backend': placement_server.module_auth()})
    assert list(fleet['expected'].values()) == ['reshaped']
    return fleet, fleet['nodes'][0]['name'], fleet['nodes'][0]['provider']


def nova_steps(nova):
    return {'rolling_reshape_nova_service': 'always',
            'rolling_reshape_compute_endpoint': nova.url,
            # nova sees it down at once (kolla's unit restarts it within service_down_time otherwise)
            'rolling_reshape_nova_force_down': True,
            'rolling_reshape_nova_timeout': 60}


def flat(out):
    return ' '.join(out.split())


def tasks_run(out):
    """The names of the tasks that ran (ok, changed, or a file included) in ansible-playbook's
    output, in order, without the role's prefix; skipped tasks are left out."""
    ran = []
    name = None
    for line in out.splitlines():
        header = re.match(r'^TASK \[(?:[^\]]* : )?(.*)\] \**$', line)
        if header:
            name = header.group(1)
        elif name and re.match(r'^(ok|changed|included): ', line) and (not ran or ran[-1] != name):
            ran.append(name)
    return ran


def reason(fleet):
    """The failed node's reason in summary.json: one line, as the report prints it."""
    found = [n['reason'] for n in summary(fleet)['nodes']]
    assert len(found) == 1 and '\n' not in found[0], found
    return found[0]


def test_the_guide_gives_the_recipes_tested_here():
    assert KOLLA['rolling_reshape_nova_compute_service'] == KOLLA_UNIT
    assert OSA['rolling_reshape_nova_compute_service'] == 'nova-compute'
    assert CONTAINER['rolling_reshape_nova_stop_command'] == ['docker', 'stop', 'nova_compute']
    assert CONTAINER['rolling_reshape_nova_status_command'] == ['docker', 'exec', 'nova_compute', 'true']


def test_kolla_docker_stop_undone_by_the_unit_fails_the_node_before_the_reshape(
        tmp_path, placement_server, rest_backend, unique_name, node_side, nova):
    fleet, node, provider = one_node_fleet(tmp_path, placement_server, rest_backend, unique_name)
    # the commands of a container without a unit, on a kolla-ansible >= 16.0.0 node (its unit restarts it)
    state_dir = node_side['start'](KOLLA_UNIT, 1)
    before = trees(fleet, rest_backend)
    # the ~11 s of kolla's RestartSec pass before the reshape (here 1 s: the hook waits for it)
    hook = ('- name: Time passes before the reshape\n'
            '  ansible.builtin.wait_for:\n    path: %s\n    timeout: 30\n' % os.path.join(state_dir, 'child.pid'))
    rc, out = roll(fleet, node_side, dict(nova_steps(nova), **CONTAINER), hook=hook)
    assert rc != 0, out
    said = flat(out)
    assert ('The roll stops at %s: %s: nova-compute runs again right before the reshape, after it was stopped: '
            'rolling_reshape_nova_status_command (docker exec nova_compute true) exits 0. The stop command (docker stop '
            'nova_compute) ended it, and something started it again: most likely a supervisor, such as the systemd '
            'unit kolla-ansible (16.0.0 and later) runs every container under, kolla-<container>-container.service '
            'with Restart=always, which starts the container again about 11 s after a docker stop. Stop the unit '
            'instead: rolling_reshape_nova_compute_service: kolla-nova_compute-container'
            % (node, node)) in said, out
    assert 'The old nova-compute would have run through the reshape, which was not started' in said
    assert reason(fleet).startswith('%s: nova-compute runs again right before the reshape, after it was stopped: '
                                    'rolling_reshape_nova_status_command (docker exec nova_compute true) exits 0. '
                                    'The stop command (docker stop nova_compute) ended it' % node)
    assert 'nova-compute of %s is left disabled in nova: enable it once the node is fixed.' % node in said, out
    # the unit did start it again, and it runs: nothing says it is stopped
    assert [e.split()[0] for e in standin_units.events(state_dir)] == ['start', 'exit', 'restart']
    assert standin_units.child_pid(state_dir) is not None
    assert 'left disabled in nova and stopped' not in said
    # nothing written to the tree; the node failed, disabled in nova
    assert trees(fleet, rest_backend) == before
    assert statuses(fleet) == {node: 'failed'}
    record = nova.records[provider]
    assert record['status'] == 'disabled' and record['disabled_reason'].startswith('placement.upgrade ')


@pytest.mark.parametrize('unit', [KOLLA_UNIT, 'nova-compute'], ids=['kolla-unit', 'openstack-ansible'])
def test_stopped_through_its_unit_nova_compute_stays_stopped_and_the_node_is_reshaped(
        tmp_path, placement_server, rest_backend, unique_name, node_side, nova, unit):
    fleet, node, provider = one_node_fleet(tmp_path, placement_server, rest_backend, unique_name)
    state_dir = node_side['start'](unit, 1)
    # longer than the unit's RestartSec: a stop through the unit is not undone
    hook = '- name: Time passes before the reshape\n  ansible.builtin.pause:\n    seconds: 3\n'
    if unit == 'nova-compute':
        # openstack-ansible: the unit runs nova-compute of a venv, not on PATH; the recipe's version
        # command reads the program the unit's ExecStart names
        with open(os.path.join(state_dir, 'execstart'), 'w') as handle:
            handle.write(os.path.join(node_side['bin'], 'nova-compute'))
        recipe = OSA
    else:
        recipe = KOLLA
    assert recipe['rolling_reshape_nova_expected_version'] == standin_units.VERSION
    rc, out = roll(fleet, node_side, dict(nova_steps(nova), **recipe), systemd=True, hook=hook)
    assert rc == 0, out
    assert statuses(fleet) == {node: 'reshaped'}
    assert [n['nova_compute'] for n in summary(fleet)['nodes']] == [{'before': '34.0.0', 'after': '34.0.0'}]
    assert [e.split()[0] for e in standin_units.events(state_dir)] == ['start', 'unit-stop', 'unit-start']
    assert standin_units.child_pid(state_dir) is not None
    # the unit was read again right before the reshape (and found stopped)
    assert "TASK [placement.upgrade.rolling_reshape : Read the state of nova-compute's unit again]" in out, out
    record = nova.records[provider]
    assert (record['status'], record['forced_down']) == ('enabled', False)
    assert nova.puts[0]['status'] == 'disabled' and nova.puts[-1] == {'status': 'enabled'}
    # issue 31: nova-compute is out of service from the disable to the enable.  The old one's version
    # is read before the disable; in between run only the stop and its checks, the hook, the reshape
    # (whose result carries the tree it verified), the start and its checks
    ran = tasks_run(out)
    disabled, enabled = ran.index('Disable nova-compute in nova'), ran.index('Enable nova-compute in nova again')
    assert ran.index("Read the version of the node's nova-compute before it is stopped") < disabled, ran
    assert ran[disabled + 1:enabled] == [
        'Stop nova-compute on the node',
        'Wait until nova sees nova-compute down',
        "Run the operator's tasks before the reshape",
        'Time passes before the reshape',
        "Read the state of nova-compute's unit again",
        'Reshape on the controller (plan, snapshot, one POST /reshaper, verification)',
        'Start the new nova-compute on the node',
        'Read the version of the new nova-compute',
        'Note the version of the new nova-compute',
        'Wait until nova-compute is up and has reported since it was started',
        "Read the node's tree now that nova-compute is back",
    ], ran


def test_the_new_version_is_read_again_while_the_units_container_is_not_yet_running(
        tmp_path, placement_server, rest_backend, unique_name, node_side, nova):
    """issue 31: the new nova-compute's version is read while it starts, right after `systemctl
    start`.  kolla's unit returns from its start before the container runs, where `docker exec`
    fails ("container ... is not running"): the read is tried again until it works, and the
    expected version is found."""
    fleet, node, provider = one_node_fleet(tmp_path, placement_server, rest_backend, unique_name)
    state_dir = node_side['start'](KOLLA_UNIT, 1)
    with open(os.path.join(state_dir, 'start_delay'), 'w') as handle:
        handle.write('1.2')
    rc, out = roll(fleet, node_side, dict(nova_steps(nova), **KOLLA), systemd=True)
    assert rc == 0, out
    assert statuses(fleet) == {node: 'reshaped'}
    # docker exec met the container not yet running at least once, then read the version
    assert 'FAILED - RETRYING: [%s]: Read the version of the new nova-compute' % node in out, out
    assert summary(fleet)['nodes'][0]['nova_compute'] == {'before': standin_units.VERSION,
                                                          'after': standin_units.VERSION}
    assert nova.records[provider]['status'] == 'enabled'


def test_a_unit_started_again_before_the_reshape_fails_the_node(
        tmp_path, placement_server, rest_backend, unique_name, node_side, nova):
    fleet, node, provider = one_node_fleet(tmp_path, placement_server, rest_backend, unique_name)
    state_dir = node_side['start'](KOLLA_UNIT, 1)
    before = trees(fleet, rest_backend)
    # something behind the role's back (a deployment run, another unit) starts the unit again
    hook = ('- name: Something starts the unit again\n'
            '  ansible.builtin.command:\n    argv: [systemctl, start, %s]\n' % KOLLA_UNIT)
    rc, out = roll(fleet, node_side, dict(nova_steps(nova), **KOLLA), systemd=True, hook=hook)
    assert rc != 0, out
    pid = standin_units.child_pid(state_dir)
    assert pid is not None
    said = flat(out)
    assert ('The roll stops at %s: %s: nova-compute runs again right before the reshape, after it was stopped: '
            'its unit %s is active (running), main PID %d. The service manager stopped %s and something started '
            'it again' % (node, node, KOLLA_UNIT, pid, KOLLA_UNIT)) in said, out
    assert 'main PID %d. The service manager stopped' % pid in reason(fleet)
    assert 'nova-compute of %s is left disabled in nova: enable it once the node is fixed.' % node in said, out
    assert trees(fleet, rest_backend) == before
    assert statuses(fleet) == {node: 'failed'}
    assert nova.records[provider]['status'] == 'disabled'


def test_a_unit_whose_state_cannot_be_read_fails_the_node_before_the_reshape(
        tmp_path, placement_server, rest_backend, unique_name, node_side, nova):
    """systemctl show fails right before the reshape (systemd's bus timing out): whether nova-compute
    runs is not known, and the node fails before anything is written, saying why."""
    fleet, node, provider = one_node_fleet(tmp_path, placement_server, rest_backend, unique_name)
    state_dir = node_side['start'](KOLLA_UNIT, 1)
    before = trees(fleet, rest_backend)
    hook = ('- name: systemd stops answering\n'
            '  ansible.builtin.copy:\n    dest: %s\n    content: ""\n    mode: "0644"\n'
            % os.path.join(state_dir, 'show_fails'))
    rc, out = roll(fleet, node_side, dict(nova_steps(nova), **KOLLA), systemd=True, hook=hook)
    assert rc != 0, out
    said = flat(out)
    assert ("%s: the state of nova-compute's unit %s could not be read right before the reshape: systemctl show "
            "--no-pager --no-ask-password --property=LoadState --property=ActiveState --property=SubState "
            "--property=MainPID %s exited 1: Failed to get properties: Connection timed out. The reshape was not "
            "started: the roll wrote nothing to the node's tree." % (node, KOLLA_UNIT, KOLLA_UNIT)) in said, out
    assert trees(fleet, rest_backend) == before
    assert statuses(fleet) == {node: 'failed'}
    assert nova.records[provider]['status'] == 'disabled'


def test_a_status_command_that_cannot_run_fails_the_node_before_the_reshape(
        tmp_path, placement_server, rest_backend, unique_name, node_side, nova):
    fleet, node, provider = one_node_fleet(tmp_path, placement_server, rest_backend, unique_name)
    node_side['start'](KOLLA_UNIT, 1)
    missing = str(tmp_path / 'no-such-docker')
    before = trees(fleet, rest_backend)
    rc, out = roll(fleet, node_side, dict(nova_steps(nova), **dict(
        CONTAINER, rolling_reshape_nova_status_command=[missing, 'exec', 'nova_compute', 'true'])))
    assert rc != 0, out
    said = flat(out)
    assert ('%s: whether nova-compute runs could not be read right before the reshape: '
            'rolling_reshape_nova_status_command (%s exec nova_compute true) could not be run (' % (node, missing)) in said, out
    assert ('could not be run (%s was not found on the node (not on its PATH, or not executable), rc 127). '
            "The reshape was not started: the roll wrote nothing to the node's tree." % missing) in said, out
    assert trees(fleet, rest_backend) == before
    assert statuses(fleet) == {node: 'failed'}
    assert nova.records[provider]['status'] == 'disabled'


def test_stopped_by_the_pre_hook_and_started_again_fails_the_node(
        tmp_path, placement_server, rest_backend, unique_name, node_side, nova):
    """No unit or command for the role (the hooks stop and start nova-compute), the status command set."""
    fleet, node, provider = one_node_fleet(tmp_path, placement_server, rest_backend, unique_name)
    state_dir = node_side['start'](KOLLA_UNIT, 1)
    before = trees(fleet, rest_backend)
    hook = ('- name: Stop the container (behind its unit)\n'
            '  ansible.builtin.command:\n    argv: [docker, stop, nova_compute]\n'
            '- name: Time passes before the reshape\n'
            '  ansible.builtin.wait_for:\n    path: %s\n    timeout: 30\n' % os.path.join(state_dir, 'child.pid'))
    rc, out = roll(fleet, node_side, dict(nova_steps(nova), rolling_reshape_nova_compute_service='',
                                          rolling_reshape_nova_version_command=[],
                                          rolling_reshape_nova_status_command=CONTAINER['rolling_reshape_nova_status_command']),
                   hook=hook)
    assert rc != 0, out
    said = flat(out)
    assert ('The roll stops at %s: %s: nova-compute runs right before the reshape: rolling_reshape_nova_status_command '
            '(docker exec nova_compute true) exits 0. The role does not stop it (rolling_reshape_nova_compute_service '
            'and rolling_reshape_nova_stop_command are empty): the pre hook (%s) did not stop it, or something started '
            'it again, such as a supervisor' % (node, node, os.path.join(fleet['out_dir'], 'pre_hook.yml'))) in said, out
    assert 'exits 0. The role does not stop it' in reason(fleet)
    assert 'nova-compute of %s is left disabled in nova: enable it once the node is fixed.' % node in said, out
    assert [e.split()[0] for e in standin_units.events(state_dir)] == ['start', 'exit', 'restart']
    assert trees(fleet, rest_backend) == before
    assert statuses(fleet) == {node: 'failed'}
    assert nova.records[provider]['status'] == 'disabled'


def test_without_forced_down_nova_never_sees_it_down_and_the_unit_is_named(
        tmp_path, placement_server, rest_backend, unique_name, node_side, nova):
    """rolling_reshape_nova_force_down false (the default): nova marks a stopped nova-compute down only
    after service_down_time (60 s; here 4 s), and kolla's unit starts it again well within it (11 s;
    here 1 s), so nova never sees it down: the role names the likely cause, not only nova's timeout."""
    fleet, node, provider = one_node_fleet(tmp_path, placement_server, rest_backend, unique_name)
    state_dir = node_side['start'](KOLLA_UNIT, 1)
    nova.service_down_time = 4
    before = trees(fleet, rest_backend)
    rc, out = roll(fleet, node_side, dict(nova_steps(nova), rolling_reshape_nova_force_down=False,
                                          rolling_reshape_nova_timeout=8, **CONTAINER))
    assert rc != 0, out
    said = flat(out)
    assert ('The roll stops at %s: %s: nova-compute runs again before nova saw it down, after it was stopped: '
            'rolling_reshape_nova_status_command (docker exec nova_compute true) exits 0. nova did not report it '
            'down: ' % (node, node)) in said, out
    assert 'nova-compute on %s is not down after 8 s (nova reports state up' % provider in said, out
    assert 'or set forced_down once it is. The stop command (docker stop nova_compute) ended it' in said, out
    assert 'set forced_down once it is. The stop command (docker stop nova_compute) ended it' in reason(fleet)
    assert ('The stop command (docker stop nova_compute) ended it, and something started it again: most likely a '
            'supervisor, such as the systemd unit kolla-ansible (16.0.0 and later) runs every container under') in said
    assert 'nova-compute of %s is left disabled in nova: enable it once the node is fixed.' % node in said, out
    assert [e.split()[0] for e in standin_units.events(state_dir)] == ['start', 'exit', 'restart']
    assert trees(fleet, rest_backend) == before
    assert statuses(fleet) == {node: 'failed'}
    assert nova.records[provider]['status'] == 'disabled'


def test_the_wait_for_nova_reads_at_most_every_poll_interval(
        tmp_path, placement_server, rest_backend, unique_name, node_side, nova):
    """rolling_reshape_nova_poll_interval (1 s by default) reaches the waits: while the started
    nova-compute has not reported yet (8 s here), nova's record is read at most 1 s apart, where the
    module's own default (5 s) would leave gaps of 2 and 4 s."""
    fleet, node, provider = one_node_fleet(tmp_path, placement_server, rest_backend, unique_name)
    state_dir = node_side['start'](KOLLA_UNIT, 1)
    nova.first_report_after = 8
    hook = '- name: Time passes before the reshape\n  ansible.builtin.pause:\n    seconds: 2\n'
    rc, out = roll(fleet, node_side, dict(nova_steps(nova), **KOLLA), systemd=True, hook=hook)
    assert rc == 0, out
    assert statuses(fleet) == {node: 'reshaped'}
    started = os.path.getmtime(os.path.join(state_dir, 'child.pid'))
    waiting = [t for t in nova.gets if started <= t <= started + 8.5]
    gaps = [b - a for a, b in zip(waiting, waiting[1:])]
    # the reads back off 0.25, 0.5, 1, then every 1 s: 8 or more within the 8 s, none 2 s apart
    assert len(waiting) >= 8 and max(gaps) < 1.8, (waiting, gaps)


def test_a_node_left_out_of_service_by_a_failed_pass_is_brought_back_by_the_rerun(
        tmp_path, placement_server, rest_backend, unique_name, node_side, nova):
    """issue 41 (the cloud twin's faults): a pass that fails after the node's reshape (here its post
    hook: the switch to the new release fails; on the twin, the new nova-compute that does not start,
    or a controller killed after the POST /reshaper) leaves nova-compute disabled in nova and stopped,
    the tree already in the layout.  The rerun after the fix finds nothing to reshape; it must still
    bring the node back (the post hook, nova-compute started, enabled), not leave it out of service
    reported as a node with nothing to do."""
    fleet, node, provider = one_node_fleet(tmp_path, placement_server, rest_backend, unique_name)
    state_dir = node_side['start'](KOLLA_UNIT, 1)
    hook = os.path.join(fleet['out_dir'], 'switch.yml')
    marker = os.path.join(fleet['out_dir'], 'switched')
    with open(hook, 'w') as handle:
        handle.write('- name: Switch the node to the new release\n'
                     '  ansible.builtin.copy:\n    dest: %s\n    content: "new"\n    mode: "0644"\n'
                     '- name: The switch fails\n'
                     '  ansible.builtin.fail:\n    msg: the new release is not installed on the node\n'
                     '  when: lookup("ansible.builtin.env", "TWIN_SWITCH_FAILS") == "1"\n' % marker)
    extra = dict(nova_steps(nova), rolling_reshape_post_tasks=hook, **KOLLA)
    os.environ['TWIN_SWITCH_FAILS'] = '1'
    try:
        rc, out = roll(fleet, node_side, extra, systemd=True)
    finally:
        del os.environ['TWIN_SWITCH_FAILS']
    assert rc != 0, out
    assert 'the new release is not installed on the node' in flat(out), out
    assert nova.records[provider]['status'] == 'disabled'
    assert standin_units.child_pid(state_dir) is None
    reshaped = trees(fleet, rest_backend)
    os.remove(marker)
    # the fix, then the rerun: the tree is in the layout already
    rc, out = roll(fleet, node_side, extra, systemd=True)
    assert rc == 0, out
    assert os.path.exists(marker), 'the post hook ran again: ' + out
    assert standin_units.child_pid(state_dir) is not None, out
    record = nova.records[provider]
    assert (record['status'], record['forced_down']) == ('enabled', False), out
    assert trees(fleet, rest_backend) == reshaped
    # (nova-compute was stopped when the rerun read its version before the stop: that read failed)
    assert summary(fleet)['nodes'][0]['nova_compute'] == {'before': None, 'after': standin_units.VERSION}
    assert statuses(fleet)[node] in ('noop', 'verified'), statuses(fleet)
    # the report says why a node with nothing to reshape went through its steps
    assert reason(fleet).startswith('nova-compute brought back into service: an earlier pass of the roll had left '
                                    'it disabled in nova (placement.upgrade '), reason(fleet)


def test_a_node_with_nothing_to_reshape_fails_when_nova_cannot_say_whether_it_is_out_of_service(
        tmp_path, placement_server, rest_backend, unique_name, node_side, nova):
    """The rerun reads nova's record of a node already in the layout (an earlier pass may have left it
    disabled).  When nova does not answer, whether the node is out of service is not known: the node
    fails, saying so, and nothing is written (it is not reported as a node with nothing to do)."""
    fleet, node, provider = one_node_fleet(tmp_path, placement_server, rest_backend, unique_name)
    node_side['start'](KOLLA_UNIT, 1)
    rc, out = roll(fleet, node_side, dict(nova_steps(nova), **KOLLA), systemd=True)
    assert rc == 0, out
    reshaped = trees(fleet, rest_backend)
    puts = len(nova.puts)
    nova.refuse_gets = 503
    rc, out = roll(fleet, node_side, dict(nova_steps(nova), **KOLLA), systemd=True)
    assert rc != 0, out
    assert len(nova.puts) == puts, nova.puts[puts:]
    assert statuses(fleet) == {node: 'failed'}, statuses(fleet)
    assert 'nova is not answering (503)' in reason(fleet), reason(fleet)
    assert "Read nova's record of a node with nothing to reshape" in flat(out), out
    assert trees(fleet, rest_backend) == reshaped
    assert nova.records[provider]['status'] == 'enabled'


def test_a_new_nova_compute_that_never_comes_up_fails_the_node_naming_its_unexpected_version(
        tmp_path, placement_server, rest_backend, unique_name, node_side, nova):
    """The wait for the new nova-compute times out (here it never reports: on the twin, the old
    release's nova-compute crash-looping on the reshaped tree when the switch was not made).  The
    version read while it started is not the expected one: the node's message says so with the
    timeout, since that is most often why it does not come up."""
    fleet, node, provider = one_node_fleet(tmp_path, placement_server, rest_backend, unique_name)
    node_side['start'](KOLLA_UNIT, 1)
    nova.first_report_after = 10 ** 6
    extra = dict(nova_steps(nova), **KOLLA)
    extra.update(rolling_reshape_nova_timeout=3, rolling_reshape_nova_poll_interval=1,
                 rolling_reshape_nova_expected_version='99.0.0')
    rc, out = roll(fleet, node_side, extra, systemd=True)
    assert rc != 0, out
    assert statuses(fleet) == {node: 'failed'}, statuses(fleet)
    said = reason(fleet)
    assert ('The new nova-compute is %s, not 99.0.0 (rolling_reshape_nova_expected_version): is the node\'s '
            'switch to the new release' % standin_units.VERSION) in said, said
    assert ('nova-compute on %s has not written its record in nova since' % provider
            in said.split('The new nova-compute is')[0]), said
    assert nova.records[provider]['status'] == 'disabled'


def test_a_wait_that_fails_with_the_expected_version_says_only_the_wait(
        tmp_path, placement_server, rest_backend, unique_name, node_side, nova):
    """The same timeout with the expected version: the message is the wait's alone."""
    fleet, node, provider = one_node_fleet(tmp_path, placement_server, rest_backend, unique_name)
    node_side['start'](KOLLA_UNIT, 1)
    nova.first_report_after = 10 ** 6
    extra = dict(nova_steps(nova), **KOLLA)
    extra.update(rolling_reshape_nova_timeout=3, rolling_reshape_nova_poll_interval=1,
                 rolling_reshape_nova_expected_version=standin_units.VERSION)
    rc, out = roll(fleet, node_side, extra, systemd=True)
    assert rc != 0, out
    said = reason(fleet)
    assert statuses(fleet) == {node: 'failed'} and 'The new nova-compute is' not in said, said
