# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Names map to files without collisions (issue 12, item 7): one injective, readable mapping
(names.file_stem) for snapshots and fleet report node records; old snapshots stay findable."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.placement.upgrade.plugins.module_utils._placement import names
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import report
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import snapshot

ROOT = {'uuid': '33333333-3333-4333-8333-333333333333', 'name': 'cmp/01'}
OTHER = {'uuid': '44444444-4444-4444-8444-444444444444', 'name': 'cmp_01'}
STATE = {'providers': {}, 'allocations': {}}


@pytest.mark.parametrize('name,stem', [
    ('compute-01', 'compute-01'),
    ('compute-01.example.com', 'compute-01.example.com'),
    ('cmp/01', 'cmp%2F01'),
    ('cmp_01', 'cmp_01'),
    ('gpu node 1', 'gpu%20node%201'),
    ('gpu_node_1', 'gpu_node_1'),
    ('.hidden', '%2Ehidden'),
    ('50%', '50%25'),
    ('nœud', 'n%C5%93ud'),
    ('', '%'),
])
def test_readable_stems(name, stem):
    assert names.file_stem(name) == stem
    assert names.name_of_file_stem(stem) == name


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60), st.text(max_size=60))
def test_the_mapping_is_injective_and_file_system_safe(one, two):
    stems = names.file_stem(one), names.file_stem(two)
    assert (stems[0] == stems[1]) == (one == two)
    for stem in stems:
        assert '/' not in stem and '\x00' not in stem and not stem.startswith('.')
        assert len(stem) <= names.FILE_STEM_MAX
    if '~' not in stems[0]:
        assert names.name_of_file_stem(stems[0]) == one
    else:
        assert len(stems[0].split('~')[1]) == 16 and len(stems[0]) >= names.FILE_STEM_MAX - 2


def test_long_names_are_cut_with_a_hash_of_the_exact_name():
    one, two = 'x' * 199 + 'a', 'x' * 199 + 'b'
    assert len(names.file_stem(one)) == names.FILE_STEM_MAX
    assert names.file_stem(one) != names.file_stem(two)
    assert names.name_of_file_stem(names.file_stem(one)) is None
    escaped = '/' * 200                       # 600 characters escaped: the cut never splits an escape
    assert names.file_stem(escaped).split('~')[0].endswith('%2F')


def test_snapshots_of_colliding_names_do_not_share_a_file(tmp_path):
    folder = str(tmp_path)
    first = snapshot.write_snapshot(folder, ROOT, STATE)
    second = snapshot.write_snapshot(folder, OTHER, STATE)
    assert first != second
    assert snapshot.load_snapshot(snapshot.find_snapshot(folder, 'cmp/01'))['root'] == ROOT
    assert snapshot.load_snapshot(snapshot.find_snapshot(folder, 'cmp_01'))['root'] == OTHER
    spaced = snapshot.latest_path(folder, 'gpu node 1')
    assert spaced != snapshot.latest_path(folder, 'gpu_node_1')


def _legacy(folder, root, stamp='20250101T000000.000000Z'):
    doc = {'format': 1, 'kind': snapshot.KIND, 'created_at': '2025-01-01T00:00:00.000000Z', 'root': root,
           'state': STATE, 'foreign': {}, 'layout_children': [], 'created_children': [], 'plan': None,
           'run_id': 'r1'}
    stem = names.legacy_file_stem(root['name'])
    for tail in ('latest', stamp):
        with open(os.path.join(folder, '%s.%s.json' % (stem, tail)), 'w') as handle:
            json.dump(doc, handle)
    return os.path.join(folder, '%s.latest.json' % stem)


def test_an_old_snapshot_is_found_when_it_is_unambiguously_the_roots(tmp_path):
    folder = str(tmp_path)
    legacy = _legacy(folder, ROOT)
    assert snapshot.find_snapshot(folder, 'cmp/01') == legacy
    assert [p for p, _d in snapshot.run_snapshots(folder, 'cmp/01', 'r1')] == [
        os.path.join(folder, 'cmp_01.20250101T000000.000000Z.json')]
    # once a new snapshot exists it wins
    new = snapshot.write_snapshot(folder, ROOT, STATE)
    assert snapshot.find_snapshot(folder, 'cmp/01') == snapshot.latest_path(folder, 'cmp/01')
    assert os.path.basename(new).startswith('cmp%2F01.')


def test_an_old_snapshot_of_another_name_is_refused(tmp_path):
    folder = str(tmp_path)
    _legacy(folder, OTHER)                     # cmp_01's old snapshot, named cmp_01.latest.json
    with pytest.raises(snapshot.SnapshotError) as info:
        snapshot.find_snapshot(folder, 'cmp/01')
    assert 'cmp_01.latest.json' in info.value.detail and 'another provider' in info.value.detail
    assert snapshot.find_snapshot(folder, 'cmp/01', root_uuid=OTHER['uuid']).endswith('cmp_01.latest.json')
    assert snapshot.run_snapshots(folder, 'cmp/01', 'r1') == []


def test_fleet_records_of_colliding_names_do_not_share_a_file(tmp_path):
    dest = str(tmp_path)
    one = report.save_record(dest, {'node': 'cmp/01', 'status': 'noop'})
    two = report.save_record(dest, {'node': 'cmp_01', 'status': 'reshaped'})
    assert one != two
    records, problems = report.load_records(dest)
    assert problems == [] and sorted(r['node'] for r in records) == ['cmp/01', 'cmp_01']
