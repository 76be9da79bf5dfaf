# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""placement.upgrade.node_command under ansible-playbook: the same result as ansible.builtin.command
for the same command, with no module sent to the node (no AnsiballZ payload), through become and
with the task's environment; check mode skips it; a command that fails, or that the node does not
have, fails the task saying which."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)

pytestmark = [pytest.mark.slow]

PLAY = '''
- hosts: node
  gather_facts: false
  vars:
    argv: [sh, -c, 'echo "out $1"; echo "err $1" >&2', sh, "$HOME `id` a;b"]
  tasks:
    - name: By node_command
      placement.upgrade.node_command:
        argv: "{{ argv }}"
      register: by_node_command
    - name: By command
      ansible.builtin.command:
        argv: "{{ argv }}"
        expand_argument_vars: false
      register: by_command
    - name: With become and an environment by node_command
      become: true
      become_method: ansible.builtin.su
      placement.upgrade.node_command:
        argv: [sh, -c, 'echo "$(id -u) $PU_VALUE"']
      environment:
        PU_VALUE: "a 'quoted' value"
      register: become_node_command
    - name: With become and an environment by command
      become: true
      become_method: ansible.builtin.su
      ansible.builtin.command:
        argv: [sh, -c, 'echo "$(id -u) $PU_VALUE"']
      environment:
        PU_VALUE: "a 'quoted' value"
      register: become_command
    - name: In check mode
      placement.upgrade.node_command:
        argv: [touch, "{{ out }}/touched"]
      check_mode: true
      register: checked
    - name: A read in check mode
      placement.upgrade.node_command:
        argv: [echo, read]
      check_mode: false
      register: read_in_check_mode
    - name: A command that fails
      placement.upgrade.node_command:
        argv: [sh, -c, 'echo nope >&2; exit 4']
      register: failing
      ignore_errors: true
    - name: A command the node does not have
      placement.upgrade.node_command:
        argv: [no-such-command-on-the-node, --version]
      register: missing
      ignore_errors: true
    - name: No command
      placement.upgrade.node_command:
        argv: []
      register: empty
      ignore_errors: true
    - name: What the tasks returned
      ansible.builtin.copy:
        dest: "{{ out }}/result.json"
        content: "{{ {'by_node_command': by_node_command, 'by_command': by_command,
                      'become_node_command': become_node_command, 'become_command': become_command,
                      'checked': checked, 'read_in_check_mode': read_in_check_mode,
                      'failing': failing, 'missing': missing, 'empty': empty} | to_json }}"
        mode: '0644'
      delegate_to: localhost
'''


def test_node_command_gives_what_command_gives_without_a_module(tmp_path):
    (tmp_path / 'play.yml').write_text(PLAY)
    (tmp_path / 'inventory.json').write_text(json.dumps({'all': {'hosts': {'node': {
        'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable}}}}))
    link_parent = tmp_path / 'collections' / 'ansible_collections' / 'placement'
    link_parent.mkdir(parents=True)
    os.symlink(REPO, str(link_parent / 'upgrade'))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(tmp_path / 'collections'), ANSIBLE_NOCOLOR='1',
               ANSIBLE_LOCAL_TEMP=str(tmp_path / 'tmp'), ANSIBLE_HOME=str(tmp_path / '.ansible'),
               # a controller whose local time is not UTC (a POSIX TZ: no tz database needed)
               TZ='IST-5:30')
    proc = subprocess.run([os.path.join(BIN, 'ansible-playbook'), '-vvv', '-i', str(tmp_path / 'inventory.json'),
                           str(tmp_path / 'play.yml'), '-e', 'out=%s' % tmp_path],
                          env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    with open(str(tmp_path / 'result.json')) as handle:
        result = json.load(handle)
    # no module went to the node for node_command; command sent its AnsiballZ payload
    shipped = dict((chunk.split(']')[0], 'AnsiballZ_' in chunk) for chunk in proc.stdout.split('TASK [')[1:])
    assert shipped == {'By node_command': False, 'By command': True,
                       'With become and an environment by node_command': False,
                       'With become and an environment by command': True,
                       'In check mode': False, 'A read in check mode': False, 'A command that fails': False,
                       'A command the node does not have': False, 'No command': False,
                       'What the tasks returned': True}
    # the same result as the command module (which expands $VARIABLES in its arguments unless told not
    # to: node_command never does), key by key, the times aside
    keys = ('cmd', 'rc', 'stdout', 'stderr', 'stdout_lines', 'stderr_lines', 'changed')
    for ours, theirs in (('by_node_command', 'by_command'), ('become_node_command', 'become_command')):
        assert dict((k, result[ours][k]) for k in keys) == dict((k, result[theirs][k]) for k in keys), ours
    assert result['by_node_command']['stdout'] == 'out $HOME `id` a;b'
    assert result['by_node_command']['found'] is True
    # start_utc is start's moment, in UTC (the rolling role compares it with nova's stamps); start is
    # in the controller's local time (here 5:30 ahead of UTC)
    started = datetime.datetime.fromisoformat(result['by_node_command']['start'])
    started_utc = datetime.datetime.fromisoformat(result['by_node_command']['start_utc'])
    assert len(result['by_node_command']['start_utc']) == len('2026-11-26 03:10:00.123456')
    assert abs((started - started_utc).total_seconds() - 5.5 * 3600) < 0.001
    assert result['become_node_command']['stdout'] == "0 a 'quoted' value"
    # check mode: not run (nothing touched), unless the task says check_mode: false
    assert result['checked']['skipped'] is True and not (tmp_path / 'touched').exists()
    assert result['read_in_check_mode']['stdout'] == 'read'
    assert result['failing']['msg'] == "sh -c 'echo nope >&2; exit 4' exited 4: nope"
    assert (result['failing']['rc'], result['failing']['found']) == (4, True)
    assert result['missing']['msg'] == ('no-such-command-on-the-node was not found on the node '
                                        '(not on its PATH, or not executable)')
    assert (result['missing']['rc'], result['missing']['found']) == (127, False)
    assert result['empty']['msg'] == 'argv is empty: give the command and its arguments as a list'
    assert 'Traceback' not in proc.stdout
