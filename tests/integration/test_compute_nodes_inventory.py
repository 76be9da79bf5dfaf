# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The placement.upgrade.compute_nodes inventory plugin through ansible-inventory and
ansible-playbook: the embedded store of a simulated fleet and the real Placement on 127.0.0.1.
(nova's hypervisors as the source: tests/nova_oracle/test_nova_inventory.py.)"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend

import simfleet
from test_fleet_playbook import BIN, PLAYBOOKS, _env, summary
from test_reshaper_support import make_provider

pytestmark = pytest.mark.slow


def inventory_file(tmp_path, body, name='fleet.compute_nodes.yml'):
    path = tmp_path / name
    path.write_text(body)
    return str(path)


def ansible_inventory(tmp_path, source):
    proc = subprocess.run([os.path.join(BIN, 'ansible-inventory'), '-i', source, '--list'],
                          env=_env(str(tmp_path)), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=False, timeout=300)
    return proc.returncode, proc.stdout, proc.stderr


def plain(value):
    """ansible-inventory marks text from an inventory source as unsafe (never templated):
    ``{"__ansible_unsafe": "compute-01"}`` in its JSON; the value is what matters here."""
    if isinstance(value, dict):
        if set(value) == {'__ansible_unsafe'}:
            return value['__ansible_unsafe']
        return dict((k, plain(v)) for k, v in value.items())
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def members(listing, group):
    return sorted((listing.get(group) or {}).get('hosts') or [])


def root_classes(db):
    """Independently of the plugin: each root's classes, straight from the store."""
    backend = EmbeddedBackend(db, create=False)
    try:
        return dict((p['name'], set(backend.get_inventories(p['uuid'])['inventories']))
                    for p in backend.list_providers() if not p.get('parent_provider_uuid'))
    finally:
        backend.close()


def test_embedded_fleet_grouped_by_what_each_tree_needs(tmp_path):
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=12)
    source = inventory_file(tmp_path, 'plugin: placement.upgrade.compute_nodes\n'
                                      'embedded_db: %s\n'
                                      'host_name: placement_root_name | replace("compute-", "cn")\n'
                                      'compose:\n  placement_vgpus: placement_root_inventory.VGPU | default(0)\n'
                                      % fleet['embedded_db'])
    rc, out, err = ansible_inventory(tmp_path, source)
    assert rc == 0, err
    listing = plain(json.loads(out))
    hostvars = listing['_meta']['hostvars']
    classes = root_classes(fleet['embedded_db'])
    nodes = sorted(n['name'] for n in fleet['nodes'])
    # every compute node, renamed by host_name; the shared DISK_GB pool is not a compute node
    assert members(listing, 'compute') == sorted(n.replace('compute-', 'cn') for n in nodes)
    assert len(classes) == len(nodes) + 1
    vgpu = sorted(n.replace('compute-', 'cn') for n in nodes if 'VGPU' in classes[n])
    sev = sorted(n.replace('compute-', 'cn') for n in nodes if 'MEM_ENCRYPTION_CONTEXT' in classes[n])
    assert vgpu and members(listing, 'placement_needs_vgpu') == vgpu
    assert sev and members(listing, 'placement_needs_mem_encryption') == sev
    assert members(listing, 'placement_needs_reshape') == sorted(set(vgpu) | set(sev))
    already = [n['name'].replace('compute-', 'cn') for n in fleet['nodes'] if n['kind'] == 'reshaped']
    assert already and members(listing, 'placement_reshaped') == sorted(already)
    for host, hv in hostvars.items():
        assert hv['rolling_reshape_provider_name'] == hv['placement_root_name'] == host.replace('cn', 'compute-')
        assert hv['placement_source'] == 'placement'
        assert hv['placement_vgpus'] == (hv['placement_root_inventory'].get('VGPU') or 0)

    # source=nova without nova: a clear message, no traceback
    bad = inventory_file(tmp_path, 'plugin: placement.upgrade.compute_nodes\nembedded_db: %s\nsource: nova\n'
                         % fleet['embedded_db'], name='nova.compute_nodes.yml')
    rc, out, err = ansible_inventory(tmp_path, bad)
    assert 'source=nova, but there is no compute (nova) endpoint: the embedded store has none' in err
    assert 'Traceback' not in err
    # a missing store is not created by an inventory
    missing = inventory_file(tmp_path, 'plugin: placement.upgrade.compute_nodes\nembedded_db: %s\n'
                             % (tmp_path / 'nothing.db'), name='missing.compute_nodes.yml')
    rc, out, err = ansible_inventory(tmp_path, missing)
    assert 'does not exist' in err and not (tmp_path / 'nothing.db').exists()


def test_plan_only_the_nodes_that_need_it(tmp_path):
    """The plugin's groups drive the roll: plan exactly the nodes whose trees need a reshape."""
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=6)
    source = inventory_file(tmp_path, 'plugin: placement.upgrade.compute_nodes\nembedded_db: %s\n'
                            % fleet['embedded_db'])
    rc, out, err = ansible_inventory(tmp_path, source)
    assert rc == 0, err
    needs = members(plain(json.loads(out)), 'placement_needs_reshape')
    assert needs and len(needs) < len(fleet['nodes'])
    args = [os.path.join(BIN, 'ansible-playbook'), '-i', source, '-i', fleet['inventory'],
            os.path.join(PLAYBOOKS, 'plan.yml'),
            '-e', json.dumps({'rolling_reshape_hosts': 'placement_needs_reshape',
                              'rolling_reshape_snapshot_dir': str(tmp_path / 'f' / 'snapshots'),
                              'rolling_reshape_report_dir': str(tmp_path / 'f' / 'reports')})]
    proc = subprocess.run(args, env=_env(str(tmp_path / 'f')), cwd=str(tmp_path / 'f'), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, check=False, timeout=900)
    planned = sorted(n['node'] for n in summary(fleet)['nodes'])
    assert planned == needs, proc.stdout


def test_real_placement_roots(tmp_path, placement_server, rest_backend, unique_name):
    flat = unique_name('cn-flat')
    done = unique_name('cn-done')
    pool = unique_name('pool')
    make_provider(rest_backend, flat, inventories={'VCPU': {'total': 8}, 'VGPU': {'total': 4}})
    root = make_provider(rest_backend, done, inventories={'VCPU': {'total': 8}})
    make_provider(rest_backend, done + '_pci_0000_84_00_0', inventories={'VGPU': {'total': 4}}, parent=root)
    make_provider(rest_backend, pool, inventories={'DISK_GB': {'total': 100}}, traits=['MISC_SHARES_VIA_AGGREGATE'])
    auth = placement_server.module_auth()
    source = inventory_file(tmp_path, 'plugin: placement.upgrade.compute_nodes\n'
                                      'auth_type: %s\nauth:\n  token: %s\n  endpoint: %s\n'
                            % (auth['auth_type'], auth['auth']['token'], auth['auth']['endpoint']))
    rc, out, err = ansible_inventory(tmp_path, source)
    assert rc == 0, err
    listing = plain(json.loads(out))
    assert flat in members(listing, 'placement_needs_vgpu')
    assert done in members(listing, 'placement_reshaped') and done not in members(listing, 'placement_needs_reshape')
    assert pool not in listing['_meta']['hostvars']
    assert listing['_meta']['hostvars'][done]['placement_children'] == [done + '_pci_0000_84_00_0']
    # admin_token answers every service with Placement's endpoint: no nova, so auto used Placement
    assert listing['_meta']['hostvars'][flat]['placement_source'] == 'placement'


def test_two_roots_on_one_host_name_are_refused_naming_both(tmp_path):
    """The documented host_name ``placement_root_name.split('.')[0]`` on cmp1.dc1 and cmp1.dc2 gave one
    host (one node silently dropped, rc 0): refused, naming the host name and both roots, and no host
    of the source is added (the inventory is untouched)."""
    db = str(tmp_path / 'placement.db')
    backend = EmbeddedBackend(db)
    try:
        roots = dict((name, backend.create_provider(name)['uuid']) for name in ('cmp1.dc1', 'cmp1.dc2', 'cmp2.dc1'))
    finally:
        backend.close()
    source = inventory_file(tmp_path, "plugin: placement.upgrade.compute_nodes\nembedded_db: %s\n"
                                      "host_name: placement_root_name.split('.')[0]\n" % db)
    rc, out, err = ansible_inventory(tmp_path, source)
    expected = ("host_name \"placement_root_name.split('.')[0]\" gives the same host name 'cmp1' for the roots "
                "cmp1.dc1 (%s) and cmp1.dc2 (%s); one of them would be dropped" % (roots['cmp1.dc1'], roots['cmp1.dc2']))
    assert expected in ' '.join(err.split()), err
    assert 'Traceback' not in err
    listing = plain(json.loads(out))
    assert listing['_meta']['hostvars'] == {} and members(listing, 'compute') == [], listing
    # with Ansible's own switch the run stops on it
    env = _env(str(tmp_path))
    env['ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED'] = 'true'
    proc = subprocess.run([os.path.join(BIN, 'ansible-inventory'), '-i', source, '--list'], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False, timeout=300)
    assert proc.returncode != 0 and "gives the same host name 'cmp1'" in proc.stderr
    # names that tell the roots apart work
    source = inventory_file(tmp_path, "plugin: placement.upgrade.compute_nodes\nembedded_db: %s\n"
                                      "host_name: placement_root_name.replace('.', '-')\n" % db, name='ok.compute_nodes.yml')
    rc, out, err = ansible_inventory(tmp_path, source)
    assert rc == 0, err
    assert members(plain(json.loads(out)), 'compute') == ['cmp1-dc1', 'cmp1-dc2', 'cmp2-dc1']


def _inventory_with_env(tmp_path, source, extra_env, *args):
    env = _env(str(tmp_path))
    env.update(extra_env)
    proc = subprocess.run([os.path.join(BIN, 'ansible-inventory'), '-i', source, '--list'] + list(args),
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=False, timeout=300)
    return proc.returncode, proc.stdout, proc.stderr


def test_the_cache_reads_the_cloud_once_per_timeout(tmp_path):
    """cache: true keeps the nodes in the cache plugin's store: a second sync within the timeout
    does not read the store at all (it is moved away), --flush-cache reads it again."""
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=3)
    db = fleet['embedded_db']
    source = inventory_file(tmp_path, 'plugin: placement.upgrade.compute_nodes\n'
                                      'embedded_db: %s\n'
                                      'cache: true\n'
                                      'cache_plugin: ansible.builtin.jsonfile\n'
                                      'cache_connection: %s\n'
                                      'cache_timeout: 3600\n' % (db, tmp_path / 'inventory-cache'))
    rc, out, err = _inventory_with_env(tmp_path, source, {})
    assert rc == 0, err
    first = members(plain(json.loads(out)), 'compute')
    assert first == sorted(n['name'] for n in fleet['nodes'])
    assert os.listdir(str(tmp_path / 'inventory-cache')), 'nothing was cached'
    os.rename(db, db + '.away')
    rc, out, err = _inventory_with_env(tmp_path, source, {})
    assert rc == 0, err
    assert members(plain(json.loads(out)), 'compute') == first
    # --flush-cache: the store is read again, and it is gone
    rc, out, err = _inventory_with_env(tmp_path, source, {'ANSIBLE_INVENTORY_UNPARSED_FAILED': '1'}, '--flush-cache')
    assert rc != 0
    assert 'placement.upgrade.compute_nodes' in err and db in err, err
    os.rename(db + '.away', db)
    rc, out, err = _inventory_with_env(tmp_path, source, {}, '--flush-cache')
    assert rc == 0, err
    assert members(plain(json.loads(out)), 'compute') == first


def test_the_short_plugin_name_is_accepted(tmp_path):
    """plugin: compute_nodes, as openstack.cloud.openstack accepts plugin: openstack, with the
    plugin enabled by its full name."""
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=2)
    source = inventory_file(tmp_path, 'plugin: compute_nodes\nembedded_db: %s\n' % fleet['embedded_db'])
    rc, out, err = _inventory_with_env(tmp_path, source, {
        'ANSIBLE_INVENTORY_ENABLED': 'placement.upgrade.compute_nodes',
        'ANSIBLE_INVENTORY_UNPARSED_FAILED': '1'})
    assert rc == 0, err
    assert members(plain(json.loads(out)), 'compute') == sorted(n['name'] for n in fleet['nodes'])
