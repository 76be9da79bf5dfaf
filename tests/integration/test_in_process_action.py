# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The reshape, device_info, resource_provider_info and compute_service actions under ansible-playbook:
on this controller they run the module's code in process (no AnsiballZ payload is sent); with a task
environment, another interpreter or another connection (or, for device_info, use_virsh; for
compute_service, version_command) they run the module.  Both give the same result, in check mode and
for real."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest

import nova_standin
import simfleet

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)

pytestmark = [pytest.mark.slow, pytest.mark.real]  # the real Placement: compute_service's REST backend

MODULES = ('reshape', 'device_info', 'resource_provider_info', 'compute_service')

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
    - name: Tree in process
      placement.upgrade.resource_provider_info:
        embedded_db: "{{ placement_backend.embedded_db }}"
        in_tree: compute-01
        with_allocations: true
      delegate_to: localhost
      register: tree_here
    - name: Tree by the module
      placement.upgrade.resource_provider_info:
        embedded_db: "{{ placement_backend.embedded_db }}"
        in_tree: compute-01
        with_allocations: true
      delegate_to: localhost
      environment:
        PLACEMENT_UPGRADE_TEST: "1"
      register: tree_module
    - name: Bad tree input in process
      placement.upgrade.resource_provider_info:
        embedded_db: "{{ placement_backend.embedded_db }}"
        name: compute-01
        in_tree: compute-01
      delegate_to: localhost
      register: tree_bad
      ignore_errors: true
    - name: Bad tree input by the module
      placement.upgrade.resource_provider_info:
        embedded_db: "{{ placement_backend.embedded_db }}"
        name: compute-01
        in_tree: compute-01
      delegate_to: localhost
      environment:
        PLACEMENT_UPGRADE_TEST: "1"
      register: tree_bad_module
      ignore_errors: true
    - name: Read nova in process
      placement.upgrade.compute_service: "{{ nova_auth | combine({'host': 'cmp-01'}) }}"
      delegate_to: localhost
      register: nova_read
    - name: Read nova by the module
      placement.upgrade.compute_service: "{{ nova_auth | combine({'host': 'cmp-01'}) }}"
      delegate_to: localhost
      environment:
        PLACEMENT_UPGRADE_TEST: "1"
      register: nova_read_module
    - name: Disable in process
      placement.upgrade.compute_service: "{{ nova_auth | combine({'host': 'cmp-01', 'state': 'disabled',
                                              'disabled_reason': 'reshaping'}) }}"
      delegate_to: localhost
      register: nova_disabled
    - name: Disable again by the module
      placement.upgrade.compute_service: "{{ nova_auth | combine({'host': 'cmp-01', 'state': 'disabled',
                                              'disabled_reason': 'reshaping'}) }}"
      delegate_to: localhost
      environment:
        PLACEMENT_UPGRADE_TEST: "1"
      register: nova_disabled_module
    - name: Enable and read the version by the module
      placement.upgrade.compute_service: "{{ nova_auth | combine({'host': 'cmp-01', 'state': 'enabled',
                                              'version_command': version_command}) }}"
      delegate_to: localhost
      register: nova_enabled
    - name: Bad nova input in process
      placement.upgrade.compute_service: "{{ nova_auth | combine({'host': 'cmp-01', 'wait_for': 'down',
                                              'wait_interval': 0}) }}"
      delegate_to: localhost
      register: nova_bad
      ignore_errors: true
    - name: Bad nova input by the module
      placement.upgrade.compute_service: "{{ nova_auth | combine({'host': 'cmp-01', 'wait_for': 'down',
                                              'wait_interval': 0}) }}"
      delegate_to: localhost
      environment:
        PLACEMENT_UPGRADE_TEST: "1"
      register: nova_bad_module
      ignore_errors: true
    - name: What the tasks returned
      ansible.builtin.copy:
        dest: "{{ out }}/result.json"
        content: "{{ {'plan_here': plan_here, 'plan_module': plan_module, 'applied': applied,
                      'verified': verified, 'bad': bad, 'found': found, 'found_module': found_module,
                      'found_virsh': found_virsh, 'found_bad': found_bad,
                      'tree_here': tree_here, 'tree_module': tree_module, 'tree_bad': tree_bad,
                      'tree_bad_module': tree_bad_module, 'nova_read': nova_read,
                      'nova_read_module': nova_read_module, 'nova_disabled': nova_disabled,
                      'nova_disabled_module': nova_disabled_module, 'nova_enabled': nova_enabled,
                      'nova_bad': nova_bad, 'nova_bad_module': nova_bad_module} | to_json }}"
        mode: "0600"
      delegate_to: localhost
'''


@pytest.fixture
def nova():
    server = nova_standin.NovaCycle()
    server.add('cmp-01', running_for=1.0)
    try:
        yield server
    finally:
        server.close()


def test_in_process_and_module_give_the_same_result(tmp_path, placement_server, nova):
    fleet = simfleet.build(str(tmp_path / 'fleet'), nodes=2)
    (tmp_path / 'play.yml').write_text(PLAY)
    (tmp_path / 'nova.json').write_text(json.dumps({
        'nova_auth': dict(placement_server.module_auth(), compute_endpoint=nova.url),
        'version_command': [sys.executable, '-c', 'print("nova-compute 34.0.0")']}))
    link_parent = tmp_path / 'collections' / 'ansible_collections' / 'placement'
    link_parent.mkdir(parents=True)
    os.symlink(REPO, str(link_parent / 'upgrade'))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(tmp_path / 'collections'), ANSIBLE_NOCOLOR='1',
               ANSIBLE_LOCAL_TEMP=str(tmp_path / 'tmp'), ANSIBLE_HOME=str(tmp_path / '.ansible'))
    proc = subprocess.run([os.path.join(BIN, 'ansible-playbook'), '-vvv', '-i', fleet['inventory'],
                           str(tmp_path / 'play.yml'), '-e', 'out=%s' % tmp_path,
                           '-e', '@%s' % (tmp_path / 'nova.json')],
                          env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    with open(str(tmp_path / 'result.json')) as handle:
        result = json.load(handle)
    # the tasks with an environment ran the module; the others sent no module at all
    tasks = proc.stdout.split('TASK [')
    shipped = dict((chunk.split(']')[0], any('AnsiballZ_%s.py' % name in chunk for name in MODULES))
                   for chunk in tasks[1:])
    assert shipped == {'Discover': False, 'Discover by the module': True, 'Discover with virsh': True,
                       'Bad discovery input in process': False,
                       'Plan in process': False, 'Plan by the module': True,
                       'Reshape in process': False, 'Verify by the module': True,
                       'Bad input in process': False,
                       'Tree in process': False, 'Tree by the module': True,
                       'Bad tree input in process': False, 'Bad tree input by the module': True,
                       'Read nova in process': False, 'Read nova by the module': True,
                       'Disable in process': False, 'Disable again by the module': True,
                       'Enable and read the version by the module': True,
                       'Bad nova input in process': False, 'Bad nova input by the module': True,
                       'What the tasks returned': False}
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
    # resource_provider_info: the same tree in process and by the module; bad input fails the same way
    assert result['tree_here']['providers'] == result['tree_module']['providers']
    assert result['tree_here']['providers'][0]['name'] == 'compute-01' and result['tree_here']['changed'] is False
    assert 'allocations' in result['tree_here']['providers'][0]
    assert result['tree_bad']['failed'] is True and 'mutually exclusive' in result['tree_bad']['msg']
    assert result['tree_bad']['msg'] == result['tree_bad_module']['msg']
    # compute_service: the same record; the module sees what the in-process disable did
    # the same record, but for its heartbeat's stamp: the stand-in nova-compute reports every 10 s, so
    # the module's later read may see one more heartbeat (never an earlier one)
    _same_record(result['nova_read']['service'], result['nova_read_module']['service'])
    assert result['nova_read']['service']['status'] == 'enabled' and result['nova_read']['changed'] is False
    assert result['nova_disabled']['changed'] is True
    assert result['nova_disabled']['service']['disabled_reason'] == 'reshaping'
    assert result['nova_disabled_module']['changed'] is False
    _same_record(result['nova_disabled']['service'], result['nova_disabled_module']['service'])
    assert result['nova_enabled']['changed'] is True and result['nova_enabled']['version'] == '34.0.0'
    assert [body for _host, body, _when in nova.puts] == [{'status': 'disabled', 'disabled_reason': 'reshaping'},
                                                          {'status': 'enabled'}]
    assert result['nova_bad']['failed'] is True
    assert result['nova_bad']['msg'] == result['nova_bad_module']['msg'] == 'wait_interval must be more than 0 seconds, got 0.0'


def _same_record(first, later):
    """nova's service record read twice: equal but for ``updated_at``, which a heartbeat between the
    two reads moves forward (never back)."""
    assert dict(first, updated_at=None) == dict(later, updated_at=None), (first, later)
    assert first['updated_at'] <= later['updated_at'], (first, later)
