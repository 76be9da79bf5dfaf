# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The reshape against the REAL Placement on 127.0.0.1 (session fixture).

Every test builds its own compute node (unique names; consumer uuids derive from the
host name), so the shared database of the session is never assumed empty.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import os
import subprocess
import sys
import uuid as _uuid

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import planner
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import snapshot
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.base import provider_tree_state
from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import Forbidden

from test_reshaper_support import (
    child_named,
    comparable,
    consumers_by_name,
    flat_gpu_node,
    gpu_report,
    make_provider,
    put,
    report_for,
    vgpu_on,
)
from db_matrix import DB_MATRIX, on_db

pytestmark = pytest.mark.real

ROOT_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLLECTIONS = os.path.join(ROOT_DIR, '.venv', 'collections')


@pytest.fixture(params=DB_MATRIX)
def placement_server(request, placement_sqlite):
    """Every test here on Placement on SQLite, then on MariaDB behind gunicorn (tests/db_matrix.py)."""
    return on_db(request, placement_sqlite)


@pytest.fixture
def node(rest_backend, unique_name, tmp_path):
    name = unique_name('cn')
    report = gpu_report(tmp_path / 'host', name)
    built = flat_gpu_node(rest_backend, name, report)
    built.update(name=name, report=report, snapdir=str(tmp_path / 'snapshots'))
    return built


def test_gpu_node_reshape_rerun_and_rollback(rest_backend, node):
    backend = rest_backend
    name = node['name']
    original = comparable(provider_tree_state(backend, node['root']))
    result = reshaper.reshape_node(backend, name, node['report'], snapshot_dir=node['snapdir'])
    assert result['status'] == 'reshaped' and result['verified'] is True, result['verification']
    a = child_named(backend, name + '_pci_0000_84_00_0')
    b = child_named(backend, name + '_pci_0000_85_00_0')
    instances = consumers_by_name(node['report'])
    assert vgpu_on(backend, instances['instance-00000001']) == {a['uuid']: 2}
    assert vgpu_on(backend, instances['instance-00000002']) == {a['uuid']: 1, b['uuid']: 1}
    assert vgpu_on(backend, instances['instance-00000003']) == {b['uuid']: 1}
    for consumer in node['consumers']:
        body = backend.get_allocations(consumer)
        assert body['allocations'][node['pool']]['resources'] == {'DISK_GB': 20}
        assert body['consumer_type'] == 'INSTANCE'
    assert 'VGPU' not in backend.get_inventories(node['root'])['inventories']
    assert backend.get_usages(a['uuid'])['usages'] == {'VGPU': 3}

    again = reshaper.reshape_node(backend, name, node['report'], snapshot_dir=node['snapdir'])
    assert again['changed'] is False and again['status'] == 'noop'

    snap_state = comparable(snapshot.load_snapshot(result['snapshot'])['state'])
    back = reshaper.rollback_node(backend, name, snapshot_dir=node['snapdir'])
    assert back['verified'] is True, back['verification']
    assert comparable(provider_tree_state(backend, node['root'])) == snap_state
    gone = reshaper.rollback_node(backend, name, snapshot_dir=node['snapdir'], remove_children=True)
    assert gone['verified'] is True, gone['verification']
    assert comparable(provider_tree_state(backend, node['root'])) == original


def test_unmapped_consumer_fails_and_leaves_the_node_untouched(rest_backend, node):
    stray = str(_uuid.uuid4())
    put(rest_backend, stray, {node['root']: {'resources': {'VGPU': 1}}})
    before = comparable(provider_tree_state(rest_backend, node['root']))
    # no guest domain on the host is this consumer: a migration or an orphan, the node waits
    waits = reshaper.reshape_node(rest_backend, node['name'], node['report'], snapshot_dir=node['snapdir'])
    assert waits['status'] == 'deferred' and stray in waits['deferred_reason']
    # a guest of the host (its domain is there) whose devices explain none of its VGPU: a stop
    report = copy.deepcopy(node['report'])
    report['instances'][stray] = {'name': 'instance-stray', 'mdevs': [], 'pci_addresses': []}
    with pytest.raises(planner.PlanError) as info:
        reshaper.reshape_node(rest_backend, node['name'], report, snapshot_dir=node['snapdir'])
    assert info.value.consumers == [stray]
    assert comparable(provider_tree_state(rest_backend, node['root'])) == before
    assert rest_backend.list_providers(name=node['name'] + '_pci_0000_84_00_0') == []


def test_migration_in_flight_defers(rest_backend, node, unique_name):
    other = make_provider(rest_backend, unique_name('cn'), {'VCPU': {'total': 8}})
    moving = consumers_by_name(node['report'])['instance-00000002']
    allocs = dict((rp, {'resources': e['resources']})
                  for rp, e in rest_backend.get_allocations(moving)['allocations'].items())
    allocs[other] = {'resources': {'VCPU': 2}}
    put(rest_backend, moving, allocs)
    before = comparable(provider_tree_state(rest_backend, node['root']))
    result = reshaper.reshape_node(rest_backend, node['name'], node['report'], snapshot_dir=node['snapdir'])
    assert result['status'] == 'deferred' and result['changed'] is False
    assert moving in result['deferred_reason']
    assert comparable(provider_tree_state(rest_backend, node['root'])) == before


def test_concurrent_allocation_is_retried_and_kept(rest_backend, node):
    newcomer = str(_uuid.uuid4())

    class WritesOnce(object):
        def __init__(self, inner):
            self.inner = inner
            self.calls = 0

        def __getattr__(self, attr):
            return getattr(self.inner, attr)

        def reshape(self, body):
            self.calls += 1
            if self.calls == 1:
                put(self.inner, newcomer, {node['root']: {'resources': {'VCPU': 2, 'MEMORY_MB': 512}},
                                           node['pool']: {'resources': {'DISK_GB': 3}}})
            return self.inner.reshape(body)

    backend = WritesOnce(rest_backend)
    result = reshaper.reshape_node(backend, node['name'], node['report'], snapshot_dir=node['snapdir'],
                                   backoff=0)
    assert result['retries'] == 1 and backend.calls == 2
    assert result['verified'] is True, result['verification']
    allocs = rest_backend.get_allocations(newcomer)['allocations']
    assert allocs[node['root']]['resources'] == {'VCPU': 2, 'MEMORY_MB': 512}
    assert allocs[node['pool']]['resources'] == {'DISK_GB': 3}


def test_sriov_and_pci_layout(rest_backend, unique_name, tmp_path):
    """PCI in placement as nova 34 reports it: children created, allocations healed, types kept."""
    import fakehost

    name = unique_name('cn')
    report = report_for(tmp_path / 'host', fakehost.default_sriov_host(name=name), nova=True)
    vf_class = 'CUSTOM_PCI_8086_154C'
    root = make_provider(rest_backend, name, {'VCPU': {'total': 16}})
    holders = {}
    for pf in report['sriov_pfs']:
        for vf in pf['vfs']:
            if vf['instance_uuid']:
                holders[vf['instance_uuid']] = vf_class
    for dev in report['pci_devices']:
        holders[dev['instance_uuid']] = 'CUSTOM_PCI_10DE_25B6'
    untyped = sorted(holders)[0]
    for consumer in sorted(holders):
        if consumer == untyped:
            # as nova 34 writes it: no consumer_type (microversion 1.36), Placement says 'unknown'
            rest_backend._call('PUT', '/allocations/%s' % consumer, microversion='1.36', body={
                'allocations': {root: {'resources': {'VCPU': 1}}}, 'project_id': 'p', 'user_id': 'u',
                'consumer_generation': None})
        else:
            # (a MIGRATION-typed consumer would defer the node: test_inflight.py)
            put(rest_backend, consumer, {root: {'resources': {'VCPU': 1}}}, consumer_type='CUSTOM_TENANT_TYPE')
    result = reshaper.reshape_node(rest_backend, name, report, snapshot_dir=str(tmp_path / 'snap'))
    assert result['verified'] is True, result['verification']
    pf_child = child_named(rest_backend, name + '_0000:81:00.0')
    pci_child = child_named(rest_backend, name + '_0000:3B:00.0')
    assert rest_backend.get_inventories(pf_child['uuid'])['inventories'][vf_class]['total'] == 4
    assert set(rest_backend.get_provider_traits(pci_child['uuid'])['traits']) == {
        'COMPUTE_MANAGED_PCI_DEVICE', 'OWNER_NOVA'}
    for consumer, rc in holders.items():
        allocs = rest_backend.get_allocations(consumer)
        child = pf_child if rc == vf_class else pci_child
        assert allocs['allocations'][child['uuid']]['resources'] == {rc: 1}
        assert allocs['allocations'][root]['resources'] == {'VCPU': 1}
        # the reshape does not relabel consumers
        assert allocs['consumer_type'] == ('unknown' if consumer == untyped else 'CUSTOM_TENANT_TYPE')
    assert reshaper.reshape_node(rest_backend, name, report,
                                 snapshot_dir=str(tmp_path / 'snap'))['status'] == 'noop'


@pytest.fixture(scope='module')
def stock_policy_server():
    from placement_server import PlacementServer

    server = PlacementServer(reshape_policy=None)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_reshape_without_the_service_role_says_so(stock_policy_server, tmp_path):
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.rest import RestBackend

    backend = RestBackend(stock_policy_server.adapter(token='admin', roles=('admin',)))
    try:
        report = gpu_report(tmp_path / 'host', 'cn-policy')
        node = flat_gpu_node(backend, 'cn-policy', report)
        with pytest.raises(Forbidden) as info:
            reshaper.reshape_node(backend, 'cn-policy', report, snapshot_dir=str(tmp_path / 'snap'))
        assert info.value.status == 403 and 'service' in info.value.detail
        assert info.value.detail.count('role:service') == 1          # the hint, once
        assert 'VGPU' in backend.get_inventories(node['root'])['inventories']
        # nothing was reshaped and nothing is left: the children made for it were removed again
        assert 'were removed again' in info.value.detail
        assert [p['uuid'] for p in backend.list_providers(in_tree=node['root'])] == [node['root']]
    finally:
        backend.close()


PLAYBOOK = r'''
- hosts: localhost
  gather_facts: false
  module_defaults:
    group/placement.upgrade.placement: "{{ placement_backend }}"
  tasks:
    - name: plan (check mode, diff)
      placement.upgrade.reshape:
        root_provider: "{{ node }}"
        devices: "{{ devices }}"
      check_mode: true
      diff: true
      register: planned
    - ansible.builtin.assert:
        that:
          - planned is changed
          - planned.status == 'reshaped'
          - planned.plan.create_children | length == 2
          - planned.diff.after.providers | length == 3
          - planned.verification == []

    - name: reshape
      placement.upgrade.reshape:
        root_provider: "{{ node }}"
        devices: "{{ devices }}"
        snapshot_dir: "{{ snapdir }}"
      register: done
    - ansible.builtin.assert:
        that:
          - done is changed
          - done.status == 'reshaped'
          - done.verified
          - done.verification | selectattr('passed') | list | length == 7
          - done.moved.consumers == 3
          - done.plan.children | map(attribute='uuid') | list == planned.plan.children | map(attribute='uuid') | list
          - done.snapshot is match(snapdir ~ '/')

    - name: rerun
      placement.upgrade.reshape:
        root_provider: "{{ node }}"
        devices: "{{ devices }}"
        snapshot_dir: "{{ snapdir }}"
      register: rerun
    - ansible.builtin.assert:
        that:
          - rerun is not changed
          - rerun.status == 'noop'

    - name: verify on demand
      placement.upgrade.reshape:
        root_provider: "{{ node }}"
        devices: "{{ devices }}"
        state: verified
        snapshot_dir: "{{ snapdir }}"
      register: checked
    - ansible.builtin.assert:
        that:
          - checked is not changed
          - checked.verified

    - name: roll back and remove the children
      placement.upgrade.reshape:
        root_provider: "{{ node }}"
        state: rolled_back
        snapshot_dir: "{{ snapdir }}"
        remove_children: true
      register: back
    - ansible.builtin.assert:
        that:
          - back is changed
          - back.status == 'rolled_back'
          - back.verified
          - back.plan.remove_children | length == 2

    - name: a consumer no guest domain is defers the node (a migration or an orphan), naming it
      placement.upgrade.allocation:
        consumer_uuid: "{{ stray }}"
        project_id: "{{ stray }}"
        user_id: "{{ stray }}"
        allocations:
          - resource_provider: "{{ node }}"
            resources: {VGPU: 1}
    - placement.upgrade.reshape:
        root_provider: "{{ node }}"
        devices: "{{ devices }}"
        snapshot_dir: "{{ snapdir }}"
      register: waits
    - ansible.builtin.assert:
        that:
          - waits is not changed
          - waits.status == 'deferred'
          - stray in waits.deferred_reason

    - name: a guest of the host whose domain explains none of its VGPU fails the task, naming it
      block:
        - placement.upgrade.reshape:
            root_provider: "{{ node }}"
            devices: "{{ devices | combine({'instances': devices.instances | combine({stray: guest})}) }}"
            snapshot_dir: "{{ snapdir }}"
          vars:
            guest: {name: instance-stray, mdevs: [], pci_addresses: []}
          register: refused
        - ansible.builtin.fail:
            msg: should not be reached
      rescue:
        - ansible.builtin.assert:
            that:
              - refused is failed
              - stray in refused.msg
'''


def _run_playbook(tmp_path, backend_vars, node_name, report):
    extra = {
        'placement_backend': backend_vars,
        'node': node_name,
        'devices': report,
        'snapdir': str(tmp_path / 'snapshots'),
        'stray': str(_uuid.uuid4()),
        'ansible_python_interpreter': sys.executable,
    }
    (tmp_path / 'extra.json').write_text(json.dumps(extra))
    (tmp_path / 'reshape.yml').write_text(PLAYBOOK)
    env = dict(os.environ)
    env.update({'ANSIBLE_COLLECTIONS_PATH': COLLECTIONS, 'ANSIBLE_LOCAL_TEMP': str(tmp_path / 'tmp'),
                'ANSIBLE_NOCOLOR': '1', 'ANSIBLE_RETRY_FILES_ENABLED': '0'})
    for var in ('OS_CLOUD', 'OS_AUTH_URL'):
        env.pop(var, None)
    cmd = [os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), '-i', 'localhost,',
           '-c', 'local', '-e', '@%s' % (tmp_path / 'extra.json'), str(tmp_path / 'reshape.yml')]
    proc = subprocess.run(cmd, cwd=str(tmp_path), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=600, check=False)
    return proc.returncode, proc.stdout


@pytest.mark.slow
def test_reshape_module_playbook_real(placement_server, rest_backend, node, tmp_path):
    rc, out = _run_playbook(tmp_path, placement_server.module_auth(), node['name'], node['report'])
    assert rc == 0, out[-6000:]
    assert 'failed=0' in out and 'rescued=1' in out, out[-3000:]
    assert 'Traceback' not in out
