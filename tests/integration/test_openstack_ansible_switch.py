# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""openstack-ansible's new release between the stop and the start (issue 42, section 2): the worked
sequence of docs/operator-guide.md ("openstack-ansible: the new release between the stop and the
start"), run as the page prints it, on one node laid out in a test folder as openstack-ansible lays
out a compute host (os_nova, read at openstack-ansible-os_nova e06c7bc):

    openstack/venvs/nova-33.1.0/bin/nova-compute       the old release's venv (nova 33.0.0)
    openstack/venvs/nova-33.1.0/etc/nova/nova.conf     its config directory (nova_conf_version_dir)
    openstack/venvs/nova-34.0.0/...                    the new release's, built by step 1
    etc/nova -> ../openstack/venvs/nova-33.1.0/etc/nova   os_nova's relative link
    etc/sudoers.d/nova_sudoers                         naming the venv's nova-rootwrap, privsep-helper
    etc/systemd/system/nova-compute.service            ExecStart=<venv>/bin/nova-compute

The venvs are not Python venvs (building two real nova venvs costs minutes and network): each
``bin/nova-compute`` is a script that prints its release's nova version with ``--version`` and
otherwise runs as a stand-in nova-compute that logs the config directory ``etc/nova`` resolves to.
No systemd runs here (no systemd as PID 1): tests/integration/standin_units.py stands in for the
unit (loaded from the unit file at its start and at ``systemctl daemon-reload``, running its
ExecStart= program), for ``systemctl`` and for ``visudo``; nova's os-services API is stood in too
(tests/integration/test_nova_compute_supervised.py).  Placement is the real one.

* step 1, the guide's play that builds the new venv and config directory, run with the guide's
  tags (``ansible-playbook``, which ``openstack-ansible`` wraps) on a stand-in of the os_nova role
  with os_nova's tags, notifications and handlers (tasks/main.yml, tasks/nova_install.yml,
  tasks/nova_post_install.yml, handlers/main.yml) and of openstack.osa.install_defaults: nothing
  on the node is restarted or switched; without its end_host, os_nova's handlers restart the old
  nova-compute on the new config directory (what the issue says os_nova does);
* step 2, the roll with the guide's recipes: the node is reshaped and verified, the old release
  stopped before the reshape, the switch (playbooks/hooks/openstack_ansible_nova_switch.yml)
  made after the verified reshape and before the start, and the unit runs the new venv's program,
  version 34.0.0 (rolling_reshape_nova_expected_version);
* without the switch, the new nova-compute is the old release and the expected version fails the
  node, left disabled in nova.

What this does not test: openstack-ansible, os_nova, python_venv_build and systemd themselves.
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
import textwrap
import time

import pytest
import yaml

import simfleet
import standin_units
from test_fleet_playbook import BIN, _env, statuses, summary, trees
from test_nova_compute_supervised import NovaServices, nova_steps, tasks_run

pytestmark = [pytest.mark.slow, pytest.mark.real]

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
OLD_TAG, OLD_VERSION = '33.1.0', '33.0.0'
NEW_TAG, NEW_VERSION = '34.0.0', '34.0.0'
UNIT = 'nova-compute'


def guide_blocks():
    """docs/operator-guide.md's YAML blocks (also those indented in a list) that start with
    ``# recipe: <name>`` or ``# playbook: <name>``: {name: the block's YAML, loaded}."""
    with open(os.path.join(REPO, 'docs', 'operator-guide.md')) as handle:
        text = handle.read()
    found = {}
    for indent, block in re.findall(r'^( *)```yaml\n(.*?)^\1```', text, flags=re.M | re.S):
        block = textwrap.dedent(block)
        first = block.split('\n', 1)[0]
        kind = re.match(r'# (recipe|playbook): (.+)$', first)
        if kind:
            found[kind.group(2).strip()] = yaml.safe_load(block)
    return found


BLOCKS = guide_blocks()
VERSION_RECIPE = BLOCKS['openstack-ansible']
SWITCH_RECIPE = BLOCKS['openstack-ansible, the new release between the stop and the start']
PREPARE_PLAY = BLOCKS['osa_nova_prepare.yml']
# the guide's command for step 1: openstack-ansible osa_nova_prepare.yml <these>
PREPARE_ARGS = ['--tags', 'nova-install,nova-config', '--skip-tags', 'systemd-service']

# os_nova, as far as step 1 goes: the same tags on the same steps, the same notifications, the same
# handlers (names, listen topics, what they do), flush_handlers in the middle without a tag
STANDIN_OS_NOVA = {
    'defaults/main.yml': '''---
nova_venv_tag: "{{ venv_tag | default('untagged') }}"
nova_bin: "{{ osa_nova_root }}/openstack/venvs/nova-{{ nova_venv_tag }}/bin"
nova_conf_dir: "{{ osa_nova_root }}/etc/nova"
nova_conf_version_dir: "{{ nova_bin | dirname }}/etc/nova"
''',
    'tasks/main.yml': '''---
- name: Create nova dir
  ansible.builtin.file:
    path: "{{ item }}"
    state: directory
    mode: "0755"
  loop: ["{{ nova_conf_version_dir }}", "{{ nova_bin }}"]
  tags: [nova-install]
- name: Install the python venv (python_venv_build)
  ansible.builtin.copy:
    dest: "{{ nova_bin }}/nova-compute"
    content: "{{ standin_venv_program }}"
    mode: "0755"
  notify: venv changed
  tags: [nova-install]
- name: Generate nova config
  ansible.builtin.copy:
    dest: "{{ nova_conf_version_dir }}/nova.conf"
    content: "[DEFAULT]\\n# venv_tag {{ nova_venv_tag }}\\n"
    mode: "0640"
  notify: Restart nova services
  tags: [nova-config]
- name: Place the systemd service (systemd_service role)
  ansible.builtin.copy:
    dest: "{{ osa_nova_root }}/etc/systemd/system/nova-compute.service"
    content: "{{ standin_unit_text }}"
    mode: "0644"
  notify: systemd service changed
  tags: [nova-config, systemd-service]
- name: Flush handlers
  ansible.builtin.meta: flush_handlers
''',
    'handlers/main.yml': '''---
- name: Symlink nova config directory
  ansible.builtin.file:
    src: "../openstack/venvs/nova-{{ nova_venv_tag }}/etc/nova"
    dest: "{{ nova_conf_dir }}"
    state: link
    force: true
  listen: [venv changed]
- name: Drop sudoers file
  ansible.builtin.copy:
    dest: "{{ osa_nova_root }}/etc/sudoers.d/nova_sudoers"
    content: "{{ standin_sudoers_text }}"
    mode: "0440"
  listen: [Restart nova services, venv changed]
- name: Stop services
  ansible.builtin.command: systemctl stop nova-compute
  changed_when: true
  listen: [Restart nova services, venv changed, cert installed, systemd service changed]
- name: Start services
  ansible.builtin.command: systemctl start nova-compute
  changed_when: true
  listen: [Restart nova services, venv changed, cert installed, systemd service changed]
''',
}


def venv_program(root, version):
    return ('#!/bin/sh\n# nova-compute of an openstack-ansible venv (stand-in: nova %s)\n'
            'exec "%s" "%s" venv-nova-compute "%s" %s "$0" "$@"\n'
            % (version, sys.executable, os.path.join(HERE, 'standin_units.py'), root, version))


def unit_text(root, tag):
    # the systemd_service role's template, as far as the unit's start goes
    return ('# Ansible managed\n\n[Unit]\nDescription=nova-compute service\nAfter=libvirtd.service\n'
            'After=network.target\nAfter=syslog.target\n\n[Service]\nType=simple\nUser=nova\nGroup=nova\n\n'
            'ExecStart=%s/openstack/venvs/nova-%s/bin/nova-compute\n\nExecReload=/bin/kill -HUP $MAINPID\n\n'
            'TimeoutSec=120\nRestart=on-failure\nRestartSec=2\n\nSlice=nova.slice\n\n'
            '[Install]\nWantedBy=multi-user.target\n' % (root, tag))


def sudoers_text(root, tag):
    # os_nova's templates/sudoers.j2
    nova_bin = '%s/openstack/venvs/nova-%s/bin' % (root, tag)
    return ('# Ansible managed\n\nDefaults:nova !requiretty\n'
            'Defaults:nova secure_path="%s:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"\n\n'
            'nova ALL = (root) NOPASSWD: %s/nova-rootwrap\nnova ALL = (root) NOPASSWD: %s/privsep-helper\n'
            % (nova_bin, nova_bin, nova_bin))


def _executable(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as handle:
        handle.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as handle:
        handle.write(text)


def _read(path):
    with open(path) as handle:
        return handle.read()


@pytest.fixture
def osa_node(tmp_path):
    """A compute host as openstack-ansible left it with the old release (33.1.0), its unit running
    the old venv's nova-compute; the stand-in systemctl and visudo first on PATH (``bin``)."""
    root = str(tmp_path / 'node')
    state_dir = str(tmp_path / 'unit')
    bin_dir = str(tmp_path / 'bin')
    os.makedirs(state_dir)
    venv = os.path.join(root, 'openstack', 'venvs', 'nova-%s' % OLD_TAG)
    _executable(os.path.join(venv, 'bin', 'nova-compute'), venv_program(root, OLD_VERSION))
    _write(os.path.join(venv, 'etc', 'nova', 'nova.conf'), '[DEFAULT]\n# venv_tag %s\n' % OLD_TAG)
    os.makedirs(os.path.join(root, 'etc'))
    os.symlink('../openstack/venvs/nova-%s/etc/nova' % OLD_TAG, os.path.join(root, 'etc', 'nova'))
    _write(os.path.join(root, 'etc', 'sudoers.d', 'nova_sudoers'), sudoers_text(root, OLD_TAG))
    unit_file = os.path.join(root, 'etc', 'systemd', 'system', '%s.service' % UNIT)
    _write(unit_file, unit_text(root, OLD_TAG))
    _write(os.path.join(state_dir, 'unit_file'), unit_file)
    for tool in ('systemctl', 'visudo'):
        args = '"%s"' % state_dir if tool == 'systemctl' else ''
        _executable(os.path.join(bin_dir, tool), '#!/bin/sh\nexec "%s" "%s" %s %s "$@"\n'
                    % (sys.executable, os.path.join(HERE, 'standin_units.py'), tool, args))
    proc = subprocess.Popen([sys.executable, os.path.join(HERE, 'standin_units.py'), 'supervise', state_dir,
                             UNIT, '--restart-sec', '2'])
    try:
        end = time.time() + 20
        while not [e for e in standin_units.events(state_dir) if e.startswith('run ')]:
            assert time.time() < end and proc.poll() is None, 'the stand-in unit did not start'
            time.sleep(0.05)
        yield {'root': root, 'dir': state_dir, 'bin': bin_dir, 'unit_file': unit_file, 'tmp': str(tmp_path)}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def conf_dir(root, tag):
    return os.path.join(root, 'openstack', 'venvs', 'nova-%s' % tag, 'etc', 'nova')


def node_state(osa_node):
    root = osa_node['root']
    return {'link': os.readlink(os.path.join(root, 'etc', 'nova')),
            'unit': _read(osa_node['unit_file']),
            'sudoers': _read(os.path.join(root, 'etc', 'sudoers.d', 'nova_sudoers'))}


def running(osa_node):
    """What the unit runs now: (program, version, config dir) of the last start, and its process's
    command line (read from /proc).  The program logs its run once it has started (a moment after
    the unit's start, which nova's stand-in takes for up): waited for."""
    end = time.time() + 20
    while True:
        kinds = [e.split()[0] for e in standin_units.events(osa_node['dir'])]
        if kinds.count('run') >= kinds.count('start') + kinds.count('unit-start') + kinds.count('restart'):
            break
        assert time.time() < end, kinds
        time.sleep(0.05)
    runs = [e.split() for e in standin_units.events(osa_node['dir']) if e.startswith('run ')]
    pid = standin_units.child_pid(osa_node['dir'])
    with open('/proc/%d/cmdline' % pid) as handle:
        cmdline = handle.read().split('\0')
    return tuple(runs[-1][1:]), cmdline


def prepare(osa_node, play):
    """Step 1: the guide's play, with the guide's tags, on the stand-in os_nova role."""
    tmp = osa_node['tmp']
    roles = os.path.join(tmp, 'roles')
    for name, text in STANDIN_OS_NOVA.items():
        _write(os.path.join(roles, 'os_nova', name), text)
    env = _env(tmp)
    # openstack.osa.install_defaults (its defaults/source.yml sets nova_bin from venv_tag)
    _write(os.path.join(tmp, 'collections', 'ansible_collections', 'openstack', 'osa', 'roles', 'install_defaults',
                        'defaults', 'source.yml'),
           '---\nnova_bin: "{{ osa_nova_root }}/openstack/venvs/nova-{{ venv_tag }}/bin"\n')
    root = osa_node['root']
    inventory = os.path.join(tmp, 'osa-inventory.yml')
    # (an openstack-ansible inventory has the cinder_volume group; none of its hosts here)
    _write(inventory, yaml.safe_dump({'all': {'children': {'cinder_volume': {'hosts': {}}, 'nova_compute': {'hosts': {'compute1': {
        'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable,
        'install_method': 'source', 'venv_tag': NEW_TAG, 'management_address': '127.0.0.1',
        'osa_nova_root': root,
        'standin_venv_program': venv_program(root, NEW_VERSION),
        'standin_unit_text': unit_text(root, NEW_TAG),
        'standin_sudoers_text': sudoers_text(root, NEW_TAG)}}}}}}))
    path = os.path.join(tmp, 'osa_nova_prepare.yml')
    _write(path, yaml.safe_dump(play, sort_keys=False))
    env.update({'ANSIBLE_ROLES_PATH': roles, 'PATH': osa_node['bin'] + os.pathsep + env.get('PATH', '')})
    proc = subprocess.run([os.path.join(BIN, 'ansible-playbook'), '-i', inventory, path] + PREPARE_ARGS,
                          env=env, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, timeout=300)
    return proc.returncode, proc.stdout


def roll(fleet, osa_node, extra):
    out = fleet['out_dir']
    extra = dict({'rolling_reshape_snapshot_dir': os.path.join(out, 'snapshots'),
                  'rolling_reshape_report_dir': os.path.join(out, 'reports'),
                  'osa_nova_root': osa_node['root']}, **extra)
    env = _env(out)
    env['PATH'] = osa_node['bin'] + os.pathsep + env.get('PATH', '')
    proc = subprocess.run([os.path.join(BIN, 'ansible-playbook'), '-i', fleet['inventory'],
                           'placement.upgrade.rolling_reshape', '-e', json.dumps(extra)],
                          env=env, cwd=out, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, timeout=600)
    return proc.returncode, proc.stdout


def prepared_fleet(tmp_path, placement_server, rest_backend, unique_name, osa_node, play=True):
    """Step 1 (the guide's play; or, ``play`` false, the new release laid out as it leaves it), then
    a fleet of one node in the real Placement."""
    before = node_state(osa_node)
    if play:
        rc, out = prepare(osa_node, PREPARE_PLAY)
        assert rc == 0, out
        # nothing restarted, switched or rewritten on the node: no handler ran
        assert 'RUNNING HANDLER' not in out, out
    else:
        root = osa_node['root']
        _executable(os.path.join(root, 'openstack', 'venvs', 'nova-%s' % NEW_TAG, 'bin', 'nova-compute'),
                    venv_program(root, NEW_VERSION))
        _write(os.path.join(conf_dir(root, NEW_TAG), 'nova.conf'), '[DEFAULT]\n# venv_tag %s\n' % NEW_TAG)
    assert node_state(osa_node) == before
    assert [e.split()[0] for e in standin_units.events(osa_node['dir'])] == ['start', 'run']
    # the new venv and its config directory are there
    assert os.access(os.path.join(osa_node['root'], 'openstack', 'venvs', 'nova-%s' % NEW_TAG, 'bin', 'nova-compute'),
                     os.X_OK)
    assert '# venv_tag %s' % NEW_TAG in _read(os.path.join(conf_dir(osa_node['root'], NEW_TAG), 'nova.conf'))
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=1, prefix=unique_name('osa') + '-', backend=rest_backend,
                           inventory_vars={'placement_backend': placement_server.module_auth()})
    assert list(fleet['expected'].values()) == ['reshaped']
    return fleet, fleet['nodes'][0]['name'], fleet['nodes'][0]['provider']


def _epoch(text):
    """A snapshot's UTC time (created_at, or the outcome's stamp) as seconds since the epoch."""
    form = '%Y-%m-%dT%H:%M:%S.%f' if '-' in text else '%Y%m%dT%H%M%S.%f'
    return (datetime.datetime.strptime(text.rstrip('Z'), form) - datetime.datetime(1970, 1, 1)).total_seconds()


def timed_events(state_dir):
    with open(os.path.join(state_dir, 'events')) as handle:
        return [(float(line.split(' ', 1)[0]), line.split(' ', 1)[1].strip()) for line in handle if line.strip()]


def test_the_guide_gives_the_sequence_tested_here():
    assert VERSION_RECIPE['rolling_reshape_nova_compute_service'] == UNIT
    assert SWITCH_RECIPE['rolling_reshape_post_tasks'] == '{{ playbook_dir }}/hooks/openstack_ansible_nova_switch.yml'
    assert SWITCH_RECIPE['rolling_reshape_nova_expected_version'] == NEW_VERSION
    assert SWITCH_RECIPE['osa_nova_venv_tag'] == NEW_TAG
    assert os.path.isfile(os.path.join(REPO, 'playbooks', 'hooks', 'openstack_ansible_nova_switch.yml'))
    play = PREPARE_PLAY[0]
    assert [r['role'] for r in play['roles']] == ['os_nova'] and play['hosts'] == 'nova_compute'
    assert play['tasks'][-1]['ansible.builtin.meta'] == 'end_host' and play['tasks'][-1]['tags'] == ['always']
    with open(os.path.join(REPO, 'docs', 'operator-guide.md')) as handle:
        assert 'openstack-ansible osa_nova_prepare.yml %s\n' % ' '.join(PREPARE_ARGS) in handle.read()


def test_without_its_end_host_the_prepare_play_lets_os_nova_restart_the_old_release(osa_node):
    """The issue's claim, on the stand-in of os_nova: its handlers fire whatever --tags says, re-point
    /etc/nova and restart nova-compute: the OLD program (the unit is skipped) on the NEW config."""
    play = [dict(PREPARE_PLAY[0], tasks=[])]
    rc, out = prepare(osa_node, play)
    assert rc == 0, out
    assert 'RUNNING HANDLER [os_nova : Stop services]' in out, out
    assert [e.split()[0] for e in standin_units.events(osa_node['dir'])][:4] == ['start', 'run', 'unit-stop',
                                                                                 'unit-start'], out
    (version, program, conf), cmdline = running(osa_node)
    assert (version, conf) == (OLD_VERSION, conf_dir(osa_node['root'], NEW_TAG))
    assert 'nova-%s/bin/nova-compute' % OLD_TAG in program


def test_the_new_release_is_switched_to_between_the_verified_reshape_and_the_start(
        tmp_path, placement_server, rest_backend, unique_name, osa_node):
    fleet, node, provider = prepared_fleet(tmp_path, placement_server, rest_backend, unique_name, osa_node)
    nova = NovaServices(osa_node['dir'])
    try:
        rc, out = roll(fleet, osa_node, dict(nova_steps(nova), **dict(VERSION_RECIPE, **SWITCH_RECIPE)))
    finally:
        nova.close()
    assert rc == 0, out
    # the node reshaped and verified, the versions recorded
    assert statuses(fleet) == {node: 'reshaped'}
    assert summary(fleet)['nodes'][0]['nova_compute'] == {'before': OLD_VERSION, 'after': NEW_VERSION}
    snapshot_dir = os.path.join(fleet['out_dir'], 'snapshots')
    snapshots = [os.path.join(snapshot_dir, f) for f in os.listdir(snapshot_dir) if not f.endswith('.latest.json')]
    assert len(snapshots) == 1, snapshots
    snapshot = json.loads(_read(snapshots[0]))
    assert snapshot['outcome']['status'] == 'verified', snapshot['outcome']
    reshaped_at, verified_at = _epoch(snapshot['created_at']), _epoch(snapshot['outcome']['at'])
    # the order on the node: the old release stopped, then (after the verified reshape) the unit
    # reloaded naming the new venv's program, then started, running it on the new config directory
    (version, program, conf), cmdline = running(osa_node)
    events = timed_events(osa_node['dir'])
    kinds = [text.split()[0] for when, text in events]
    assert kinds == ['start', 'run', 'unit-stop', 'daemon-reload', 'unit-start', 'run'], events
    stopped, reloaded, started = (events[kinds.index(k)][0] for k in ('unit-stop', 'daemon-reload', 'unit-start'))
    new_program = os.path.join(osa_node['root'], 'openstack', 'venvs', 'nova-%s' % NEW_TAG, 'bin', 'nova-compute')
    assert events[kinds.index('daemon-reload')][1] == 'daemon-reload %s' % new_program
    assert stopped < reshaped_at <= verified_at < reloaded < started, (stopped, reshaped_at, verified_at, reloaded, started)
    ran = tasks_run(out)
    reshape = ran.index('Reshape on the controller (plan, snapshot, one POST /reshaper, verification)')
    switch = [ran.index(t) for t in ("Point the unit's ExecStart to the new venv's nova-compute",
                                     "Point /etc/nova to the new release's config directory (os_nova's relative link)",
                                     "Let nova run the new venv's nova-rootwrap and privsep-helper (sudoers)",
                                     "Reload systemd's units (the start runs the rewritten unit)")]
    assert ran.index('Stop nova-compute on the node') < reshape < min(switch) and max(switch) < ran.index(
        'Start the new nova-compute on the node'), ran
    # after the roll: the unit runs the new venv's program on the new config directory
    assert (version, program, conf) == (NEW_VERSION, new_program, conf_dir(osa_node['root'], NEW_TAG))
    assert new_program in cmdline, cmdline
    state = node_state(osa_node)
    assert state['link'] == '../openstack/venvs/nova-%s/etc/nova' % NEW_TAG
    assert state['unit'] == unit_text(osa_node['root'], NEW_TAG)
    assert state['sudoers'] == sudoers_text(osa_node['root'], NEW_TAG)
    assert nova.records[provider]['status'] == 'enabled'


def test_without_the_switch_the_expected_version_fails_the_node(
        tmp_path, placement_server, rest_backend, unique_name, osa_node):
    # (step 1's play is run by the test above)
    fleet, node, provider = prepared_fleet(tmp_path, placement_server, rest_backend, unique_name, osa_node, play=False)
    nova = NovaServices(osa_node['dir'])
    recipe = dict(VERSION_RECIPE, **SWITCH_RECIPE)
    del recipe['rolling_reshape_post_tasks']
    try:
        before = trees(fleet, rest_backend)
        rc, out = roll(fleet, osa_node, dict(nova_steps(nova), **recipe))
    finally:
        nova.close()
    assert rc != 0, out
    said = ' '.join(out.split())
    assert ('%s: the new nova-compute is %s, not %s (rolling_reshape_nova_expected_version); it runs, and is left '
            'disabled in nova.' % (node, OLD_VERSION, NEW_VERSION)) in said, out
    assert statuses(fleet) == {node: 'failed'}
    assert summary(fleet)['nodes'][0]['nova_compute'] == {'before': OLD_VERSION, 'after': OLD_VERSION}
    # the reshape itself was applied (the tree moved), the unit restarted the old release
    assert trees(fleet, rest_backend) != before
    (version, program, conf), cmdline = running(osa_node)
    kinds = [e.split()[0] for e in standin_units.events(osa_node['dir'])]
    assert kinds == ['start', 'run', 'unit-stop', 'unit-start', 'run'], kinds
    assert (version, conf) == (OLD_VERSION, conf_dir(osa_node['root'], OLD_TAG))
    assert nova.records[provider]['status'] == 'disabled'
