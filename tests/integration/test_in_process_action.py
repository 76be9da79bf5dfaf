# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The reshape and device_info actions under ansible-playbook: on this controller they run the module's
code in process (no AnsiballZ payload is sent); with a task environment, another interpreter or
another connection (or, for device_info, use_virsh) they run the module.  Both give the same result,
in check mode and for real."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest

import simfleet

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)

pytestmark = pytest.mark.slow

PLAY = '''
- hosts: compute-01
  gather_facts: false
  tasks:
    - name: Discover
      placement.upgrade.device_info:
        sysfs_root: "{{ rolling_reshape_sysfs_root }}"
        domain_xml_glob: "{{ rolling_reshape_domain_xml_glob }}"
        nova_conf: "{{ rolling_reshape_nova_conf }}"
        hostname: compute-01
      register: found
    - name: Discover by the module
      placement.upgrade.device_info:
        sysfs_root: "{{ rolling_reshape_sysfs_root }}"
        domain_xml_glob: "{{ rolling_reshape_domain_xml_glob }}"
        nova_conf: "{{ rolling_reshape_nova_conf }}"
        hostname: compute-01
      environment:
        PLACEMENT_UPGRADE_TEST: "1"
      register: found_module
    - name: Discover with virsh
      placement.upgrade.device_info:
        sysfs_root: "{{ rolling_reshape_sysfs_root }}"
        use_virsh: true
      register: found_virsh
      ignore_errors: true
    - name: Bad discovery input in process
      placement.upgrade.device_info:
        sysfs_root: "{{ rolling_reshape_sysfs_root }}"
        numa: sometimes
      register: found_bad
      ignore_errors: true
    - name: Plan in process
      placement.upgrade.reshape:
        embedded_db: "{{ placement_backend.embedded_db }}"
        root_provider: compute-01
        devices: "{{ found.devices }}"
        snapshot_dir: "{{ out }}/snap"
      check_mode: true
      delegate_to: localhost
      register: plan_here
    - name: Plan by the module
      placement.upgrade.reshape:
        embedded_db: "{{ placement_backend.embedded_db }}"
        root_provider: compute-01
        devices: "{{ found.devices }}"
        snapshot_dir: "{{ out }}/snap"
      check_mode: true
      delegate_to: localhost
      environment:
        PLACEMENT_UPGRADE_TEST: "1"
      register: plan_module
    - name: Reshape in process
      placement.upgrade.reshape:
        embedded_db: "{{ placement_backend.embedded_db }}"
        root_provider: compute-01
        devices: "{{ found.devices }}"
        snapshot_dir: "{{ out }}/snap"
      delegate_to: localhost
      register: applied
    - name: Verify by the module
      placement.upgrade.reshape:
        embedded_db: "{{ placement_backend.embedded_db }}"
        root_provider: compute-01
        devices: "{{ found.devices }}"
        state: verified
        snapshot_dir: "{{ out }}/snap"
      delegate_to: localhost
      environment:
        PLACEMENT_UPGRADE_TEST: "1"
      register: verified
    - name: Bad input in process
      placement.upgrade.reshape:
        embedded_db: "{{ placement_backend.embedded_db }}"
        root_provider: compute-01
        ownership_policy: sideways
        devices: "{{ found.devices }}"
      delegate_to: localhost
      register: bad
      ignore_errors: true
    - name: What the tasks returned
      ansible.builtin.copy:
        dest: "{{ out }}/result.json"
        content: "{{ {'plan_here': plan_here, 'plan_module': plan_module, 'applied': applied,
                      'verified': verified, 'bad': bad, 'found': found, 'found_module': found_module,
                      'found_virsh': found_virsh, 'found_bad': found_bad} | to_json }}"
        mode: "0600"
      delegate_to: localhost
'''


def test_in_process_and_module_give_the_same_result(tmp_path):
    fleet = simfleet.build(str(tmp_path / 'fleet'), nodes=2)
    (tmp_path / 'play.yml').write_text(PLAY)
    link_parent = tmp_path / 'collections' / 'ansible_collections' / 'placement'
    link_parent.mkdir(parents=True)
    os.symlink(REPO, str(link_parent / 'upgrade'))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(tmp_path / 'collections'), ANSIBLE_NOCOLOR='1',
               ANSIBLE_LOCAL_TEMP=str(tmp_path / 'tmp'), ANSIBLE_HOME=str(tmp_path / '.ansible'))
    proc = subprocess.run([os.path.join(BIN, 'ansible-playbook'), '-vvv', '-i', fleet['inventory'],
                           str(tmp_path / 'play.yml'), '-e', 'out=%s' % tmp_path],
                          env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    with open(str(tmp_path / 'result.json')) as handle:
        result = json.load(handle)
    # the tasks with an environment ran the module; the others sent no module at all
    tasks = proc.stdout.split('TASK [')
    shipped = dict((chunk.split(']')[0], 'AnsiballZ_reshape.py' in chunk or 'AnsiballZ_device_info.py' in chunk)
                   for chunk in tasks[1:])
    assert shipped == {'Discover': False, 'Discover by the module': True, 'Discover with virsh': True,
                       'Bad discovery input in process': False,
                       'Plan in process': False, 'Plan by the module': True,
                       'Reshape in process': False, 'Verify by the module': True,
                       'Bad input in process': False, 'What the tasks returned': False}
    # discovery: the same report in process and by the module; bad input fails the same way
    for key in ('devices', 'ownership', 'changed'):
        assert result['found'][key] == result['found_module'][key], key
    assert result['found']['devices']['gpus'] and result['found']['devices']['instances']
    # the action says when each discovery began (the controller's clock), wherever the module ran
    assert result['found']['started'] <= result['found_module']['started'] <= result['found_virsh']['started']
    assert result['found_virsh']['failed'] is True and 'virsh' in result['found_virsh']['msg']
    assert result['found_bad']['failed'] is True and 'numa' in result['found_bad']['msg']
    assert 'Traceback' not in json.dumps(result['found_bad'])
    here, module = result['plan_here'], result['plan_module']
    for key in ('status', 'changed', 'moved', 'plan', 'diff'):
        assert here.get(key) == module.get(key), key
    assert here['status'] == 'reshaped' and here['changed'] is True
    applied = result['applied']
    assert applied['status'] == 'reshaped' and applied['changed'] is True and applied['verified'] is True
    assert applied['moved'] == here['moved']
    assert result['verified']['failed'] is False and result['verified']['changed'] is False
    bad = result['bad']
    assert bad['failed'] is True and 'ownership_policy' in bad['msg'] and 'Traceback' not in json.dumps(bad)
