# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""fleet/export.py: what an export reads, what the copy holds, and the file it writes (embedded source)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend
from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import ConfigurationError, LocalFileError, PlacementError
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import export

AGG = '11111111-2222-3333-4444-555555555555'
OTHER_AGG = '66666666-7777-8888-9999-000000000000'
GUEST = 'aaaaaaaa-0000-0000-0000-000000000001'
MIGRATION = 'aaaaaaaa-0000-0000-0000-000000000002'
ELSEWHERE = 'aaaaaaaa-0000-0000-0000-000000000003'
STRANGER = 'aaaaaaaa-0000-0000-0000-000000000004'


def _inv(total, **fields):
    return dict({'total': total, 'reserved': 0, 'min_unit': 1, 'max_unit': total, 'step_size': 1,
                 'allocation_ratio': 1.0}, **fields)


def _provider(store, name, parent=None, inventories=None, traits=None, aggregates=None):
    prov = store.create_provider(name, parent_provider_uuid=parent)
    gen = prov['generation']
    if inventories:
        gen = store.set_inventories(prov['uuid'], gen, inventories)['resource_provider_generation']
    if traits:
        for trait in traits:
            if trait.startswith('CUSTOM_'):
                store.ensure_trait(trait)
        gen = store.set_provider_traits(prov['uuid'], gen, traits)['resource_provider_generation']
    if aggregates:
        store.set_aggregates(prov['uuid'], gen, aggregates)
    return prov['uuid']


@pytest.fixture
def source(tmp_path):
    """cn1 (a child with a custom class and trait, in the pool's aggregate), cn2 (another node, a
    child holding a guest of cn1's evacuation), a sharing pool, a sharing pool of another aggregate."""
    store = EmbeddedBackend(str(tmp_path / 'source.db'))
    store.ensure_resource_class('CUSTOM_FPGA')
    ids = {}
    ids['cn1'] = _provider(store, 'cn1', inventories={'VCPU': _inv(16, allocation_ratio=4.0),
                                                      'MEMORY_MB': _inv(65536, reserved=512, step_size=256)},
                           traits=['HW_CPU_X86_AVX2', 'CUSTOM_RACK_A'], aggregates=[AGG])
    ids['cn1_fpga'] = _provider(store, 'cn1_fpga', parent=ids['cn1'], inventories={'CUSTOM_FPGA': _inv(2)},
                                traits=['CUSTOM_RACK_A'])
    ids['cn2'] = _provider(store, 'cn2', inventories={'VCPU': _inv(8)})
    ids['cn2_numa0'] = _provider(store, 'cn2_numa0', parent=ids['cn2'], inventories={'MEMORY_MB': _inv(4096)})
    ids['pool'] = _provider(store, 'pool', inventories={'DISK_GB': _inv(1000, max_unit=500)},
                            traits=['MISC_SHARES_VIA_AGGREGATE'], aggregates=[AGG])
    ids['idle_pool'] = _provider(store, 'idle-pool', inventories={'DISK_GB': _inv(10)},
                                 traits=['MISC_SHARES_VIA_AGGREGATE'], aggregates=[AGG])
    ids['far_pool'] = _provider(store, 'far-pool', inventories={'DISK_GB': _inv(10)},
                                traits=['MISC_SHARES_VIA_AGGREGATE'], aggregates=[OTHER_AGG])
    store.post_allocations({
        GUEST: {'allocations': {ids['cn1']: {'resources': {'VCPU': 2, 'MEMORY_MB': 1024}},
                                ids['cn1_fpga']: {'resources': {'CUSTOM_FPGA': 1}},
                                ids['pool']: {'resources': {'DISK_GB': 20}}},
                'project_id': 'p1', 'user_id': 'u1', 'consumer_generation': None, 'consumer_type': 'INSTANCE'},
        ELSEWHERE: {'allocations': {ids['cn1']: {'resources': {'VCPU': 1}},
                                    ids['cn2_numa0']: {'resources': {'MEMORY_MB': 512}}},
                    'project_id': 'p2', 'user_id': 'u2', 'consumer_generation': None, 'consumer_type': 'INSTANCE'},
        STRANGER: {'allocations': {ids['cn2']: {'resources': {'VCPU': 3}}},
                   'project_id': 'p3', 'user_id': 'u3', 'consumer_generation': None, 'consumer_type': 'INSTANCE'},
    })
    # nova's migration record: no consumer type (written before 1.38, through the reshaper)
    inv = store.get_inventories(ids['cn1'])
    store.reshape({'inventories': {ids['cn1']: {'resource_provider_generation': inv['resource_provider_generation'],
                                                'inventories': inv['inventories']}},
                   'allocations': {MIGRATION: {'allocations': {ids['cn1']: {'resources': {'VCPU': 1}}},
                                               'project_id': 'p1', 'user_id': 'u1', 'consumer_generation': None}}})
    try:
        yield store, ids
    finally:
        store.close()


def _without_generations(data):
    providers = dict((u, dict((k, v) for k, v in p.items() if k != 'why')) for u, p in data['providers'].items())
    allocations = {}
    for consumer, body in data['allocations'].items():
        allocations[consumer] = (dict((rp, e['resources']) for rp, e in body['allocations'].items()),
                                 body.get('project_id'), body.get('user_id'), body.get('consumer_type'))
    return providers, allocations


def test_read_export_takes_the_tree_its_consumers_the_sharing_providers_and_what_they_hold(source):
    store, ids = source
    data = export.read_export(store, ['cn1'])
    why = dict((p['name'], p['why']) for p in data['providers'].values())
    # cn2_numa0 is held by a consumer of cn1, so it comes with the provider above it; cn2's own
    # consumer (STRANGER) does not; the pool of another aggregate does not
    assert why == {'cn1': 'tree', 'cn1_fpga': 'tree', 'pool': 'sharing', 'idle-pool': 'sharing',
                   'cn2': 'allocations', 'cn2_numa0': 'allocations'}
    assert sorted(data['allocations']) == sorted([GUEST, MIGRATION, ELSEWHERE])
    assert data['allocations'][MIGRATION]['consumer_type'] == 'unknown'
    assert export.summarize(data) == {
        'compute_nodes': ['cn1'], 'providers': 6, 'sharing_providers': ['idle-pool', 'pool'],
        'other_providers': ['cn2', 'cn2_numa0'], 'consumers': 3, 'allocations': 6}
    prov = data['providers'][ids['cn1']]
    assert prov['inventories']['MEMORY_MB'] == _inv(65536, reserved=512, step_size=256)
    assert prov['traits'] == ['CUSTOM_RACK_A', 'HW_CPU_X86_AVX2'] and prov['aggregates'] == [AGG]


def test_the_copy_holds_the_same_providers_and_consumers(source, tmp_path):
    store, ids = source
    data = export.read_export(store, [ids['cn1']])          # a uuid names a node too
    dest = str(tmp_path / 'copy.db')
    assert export.write_export(data, dest) == dest
    assert sorted(os.listdir(str(tmp_path))) == ['copy.db', 'source.db', 'source.db-shm', 'source.db-wal']
    assert oct(os.stat(dest).st_mode & 0o777) == '0o600'
    with EmbeddedBackend(dest, create=False) as copy:
        again = export.read_export(copy, ['cn1'])
        assert _without_generations(again) == _without_generations(data)
        assert copy.get_allocations(MIGRATION)['consumer_type'] == 'unknown'
        assert copy.get_allocations(STRANGER) == {'allocations': {}}
        # the other node's provider has only the exported consumers' usage
        assert copy.get_usages(ids['cn2'])['usages'] == {'VCPU': 0}


def test_every_root_when_no_node_is_named(source):
    store, _ids = source
    data = export.read_export(store, [])
    assert export.summarize(data)['compute_nodes'] == ['cn1', 'cn2', 'far-pool', 'idle-pool', 'pool']
    assert sorted(data['allocations']) == sorted([GUEST, MIGRATION, ELSEWHERE, STRANGER])


def test_a_child_or_an_unknown_name_is_refused_before_anything_is_read(source):
    store, _ids = source
    with pytest.raises(ConfigurationError) as info:
        export.read_export(store, ['cn1_fpga', 'nope', 'cn1'])
    assert "no resource provider named or with uuid 'nope'" in str(info.value.detail)
    assert 'not root providers (name the compute node itself): cn1_fpga (a child of' in info.value.detail


def test_an_existing_store_is_never_overwritten_without_force(source, tmp_path):
    store, _ids = source
    data = export.read_export(store, ['cn1'])
    dest = tmp_path / 'copy.db'
    dest.write_text(u'keep me')
    with pytest.raises(LocalFileError) as info:
        export.write_export(data, str(dest))
    assert 'exists; an export never overwrites a store (set force to replace it)' in info.value.detail
    assert dest.read_text() == u'keep me'
    (tmp_path / 'copy.db-wal').write_text(u'stale journal of the old store')
    export.write_export(data, str(dest), force=True)
    assert not (tmp_path / 'copy.db-wal').exists()
    with EmbeddedBackend(str(dest), create=False) as copy:
        assert len(copy.list_providers()) == 6
    with pytest.raises(LocalFileError) as info:
        export.write_export(data, str(tmp_path / 'no' / 'such' / 'copy.db'))
    assert 'does not exist' in info.value.detail


def test_a_failed_export_leaves_no_file(source, tmp_path):
    store, _ids = source
    data = export.read_export(store, ['cn1'])
    data['allocations'][GUEST]['allocations']['not-a-provider'] = {'resources': {'VCPU': 1}}
    with pytest.raises(PlacementError):
        export.write_export(data, str(tmp_path / 'copy.db'))
    assert sorted(os.listdir(str(tmp_path))) == ['source.db', 'source.db-shm', 'source.db-wal']
