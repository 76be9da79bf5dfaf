# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 40, section 3: each pass records a journal of its writes, and its figures are those of
a diff of Placement's state before and after the pass (read by the test itself), in every mode
the node's pass has: roll, check, rollback (children left, children removed), repeated rollback,
trait-only, PCI healing and the VCPU -> PCPU conversion.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from journal_support import assert_journal_is_the_diff as _assert_journal_is_the_diff
from journal_support import placement_diff as _placement_diff
from journal_support import read_whole as _read
from test_reshaper_support import make_provider, put, report_for

import fakehost  # noqa: E402  (tools/ is on sys.path once test_reshaper_support is imported)

from ansible_collections.placement.upgrade.plugins.module_utils._placement import journal as _journal
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import discovery, reshaper


def _gpu_node(backend, tmp_path):
    from test_reshaper_support import flat_gpu_node, gpu_report
    report = gpu_report(tmp_path / 'host', 'compute-01')
    built = flat_gpu_node(backend, 'compute-01', report)
    return report, built['root']


def test_roll_check_rollbacks_and_trait_only_journals_are_placements_diff(embedded_backend, tmp_path):
    backend = embedded_backend
    report, root = _gpu_node(backend, tmp_path)
    snaps = str(tmp_path / 'snaps')
    start = _read(backend, root)

    # check mode: nothing written, the journal says what would be, in "would"
    check = reshaper.reshape_node(backend, 'compute-01', report, check_mode=True)
    assert _read(backend, root) == start
    would = check['journal']
    assert would['mode'] == 'would' and would['figures']['allocations_moved'] > 0

    # the roll: its journal is Placement's diff, and the check said the same figures
    roll = reshaper.reshape_node(backend, 'compute-01', report, snapshot_dir=snaps)
    assert roll['verified'], roll['msg']
    rolled = _read(backend, root)
    did = _assert_journal_is_the_diff(roll, start, rolled, 'did')
    assert did['providers_created'] == 2 and did['consumers_moved'] == len(
        [c for c in start['allocations'] if any('VGPU' in e['resources'] for e in start['allocations'][c]['allocations'].values())])
    assert would['figures'] == did, (would['figures'], did)
    planned_lines, done_lines = _journal.journal_lines(would), _journal.journal_lines(roll['journal'])
    assert sum(1 for line in planned_lines if line.startswith('VGPU of consumer ') and ' to move: ' in line) == \
        did['allocations_moved'], planned_lines
    assert sum(1 for line in done_lines if line.startswith('VGPU of consumer ') and ' moved: ' in line) == \
        did['allocations_moved'], done_lines
    assert not any(' to ' in line.split(':')[0] for line in done_lines), done_lines

    # a rerun: nothing written, nothing counted
    again = reshaper.reshape_node(backend, 'compute-01', report, snapshot_dir=snaps)
    assert again['status'] == 'noop'
    assert _read(backend, root) == rolled
    assert set(again['journal']['figures'].values()) == {0}

    # trait-only: a trait lost meanwhile is put back; the journal has that trait and nothing else
    child = next(u for u, p in rolled['providers'].items() if u != root)
    gen = backend.get_provider(child)['generation']
    traits = [t for t in rolled['providers'][child]['traits'] if t != 'OWNER_NOVA']
    backend.set_provider_traits(child, gen, traits)
    lost = _read(backend, root)
    fixed = reshaper.reshape_node(backend, 'compute-01', report, snapshot_dir=snaps)
    assert fixed['changed'] is True, fixed['msg']
    figures = _assert_journal_is_the_diff(fixed, lost, _read(backend, root), 'did')
    assert figures['traits_changed'] == 1 and figures['allocations_moved'] == 0 and figures['providers_created'] == 0
    assert fixed['journal']['traits'][0]['added'] == ['OWNER_NOVA']
    rolled = _read(backend, root)

    # check mode of the rollback: nothing written, in "would"
    check_back = reshaper.rollback_node(backend, 'compute-01', snapshot_dir=snaps, check_mode=True)
    assert _read(backend, root) == rolled
    assert check_back['journal']['mode'] == 'would'
    assert check_back['journal']['figures']['allocations_moved'] == did['allocations_moved']

    # the rollback: "restored", nothing "created"; the children it leaves are named as left behind
    back = reshaper.rollback_node(backend, 'compute-01', snapshot_dir=snaps)
    assert back['verified'], back['msg']
    restored = _read(backend, root)
    figures = _assert_journal_is_the_diff(back, rolled, restored, 'restored', left=2)
    assert figures['allocations_moved'] == did['allocations_moved'] and figures['providers_created'] == 0
    lines = _journal.journal_lines(back['journal'])
    assert sum(1 for line in lines if 'left behind' in line) == 2 and not any('created' in line for line in lines), lines
    assert sum(1 for line in lines if ' moved back: ' in line) == did['allocations_moved'], lines
    text = _journal.figures_text(figures, 'restored')
    assert 'allocations moved back %d' % did['allocations_moved'] in text and 'created' not in text, text

    # the repeated rollback: nothing restored
    twice = reshaper.rollback_node(backend, 'compute-01', snapshot_dir=snaps)
    assert _read(backend, root) == restored
    figures = _assert_journal_is_the_diff(twice, restored, restored, 'restored', left=2)
    assert figures['allocations_moved'] == 0 and figures['inventories_changed'] == 0

    # and with remove_children: the children are removed, none is left
    gone = reshaper.rollback_node(backend, 'compute-01', snapshot_dir=snaps, remove_children=True)
    figures = _assert_journal_is_the_diff(gone, restored, _read(backend, root), 'restored')
    assert figures['providers_removed'] == 2 and figures['providers_left'] == 0


def _legacy_pinned_node(backend, report):
    root = make_provider(backend, 'cn', {'VCPU': {'total': 8, 'allocation_ratio': 4.0},
                                         'MEMORY_MB': {'total': 16384}})
    for uuid in sorted(report['instances']):
        put(backend, uuid, {root: {'resources': {'VCPU': 2, 'MEMORY_MB': 1024}}})
    return root


def test_the_conversion_is_journalled_as_a_conversion_and_the_root_inventory_change(embedded_backend, tmp_path):
    report = report_for(tmp_path / 'h', fakehost.default_pinned_host(name='cn'), nova=True)
    root = _legacy_pinned_node(embedded_backend, report)
    start = _read(embedded_backend, root)
    check = reshaper.reshape_node(embedded_backend, 'cn', report, check_mode=True)
    result = reshaper.reshape_node(embedded_backend, 'cn', report, snapshot_dir=str(tmp_path / 's'))
    assert result['verified'], result['msg']
    figures = _assert_journal_is_the_diff(result, start, _read(embedded_backend, root), 'did')
    assert figures['allocations_converted'] == 2 and figures['allocations_moved'] == 0
    assert figures['allocations_created'] == 0 and figures['consumers_moved'] == 0
    assert check['journal']['figures'] == figures
    inventories = dict((i['resource_class'], (i['before'], i['after'])) for i in result['journal']['inventories'])
    assert inventories == {'VCPU': (8, 2), 'PCPU': (None, 6)}, inventories
    lines = _journal.journal_lines(result['journal'])
    assert 'inventory VCPU on cn changed: 8 -> 2' in lines and 'inventory PCPU on cn changed: none -> 6' in lines, lines
    assert sum(1 for line in lines if line.startswith('2 VCPU of consumer ') and line.endswith(' converted to PCPU on cn')) == 2, lines
    assert not any('moved' in line or 'created' in line for line in lines), lines


def test_pci_healing_is_journalled_as_created_not_moved(embedded_backend, tmp_path):
    spec = fakehost.mixed_host(name='cn')
    built = fakehost.build_host(str(tmp_path / 'h'), spec, clean=True)
    report = discovery.discover(built['sysfs_root'], domain_xml_glob=built['domain_xml_glob'], hostname='cn',
                                nova_conf=built['nova_conf'], domain_capabilities=built['domain_capabilities'])
    root = make_provider(embedded_backend, 'cn', {
        'VCPU': {'total': 8, 'allocation_ratio': 4.0}, 'MEMORY_MB': {'total': 16384},
        'VGPU': {'total': 16, 'max_unit': 16}, 'MEM_ENCRYPTION_CONTEXT': {'total': 15, 'max_unit': 1}},
        traits=['COMPUTE_NODE', 'HW_CPU_X86_AMD_SEV'])
    held = {}
    for gpu in report['gpus']:
        for mdev in gpu['mdevs']:
            if mdev['instance_uuid']:
                held[mdev['instance_uuid']] = held.get(mdev['instance_uuid'], 0) + 1
    for uuid, info in sorted(report['instances'].items()):
        res = {'VCPU': 1, 'MEMORY_MB': 512}
        if held.get(uuid):
            res['VGPU'] = held[uuid]
        if info.get('mem_encryption'):
            res['MEM_ENCRYPTION_CONTEXT'] = 1
        put(embedded_backend, uuid, {root: {'resources': res}})
    start = _read(embedded_backend, root)
    result = reshaper.reshape_node(embedded_backend, 'cn', report, snapshot_dir=str(tmp_path / 's'))
    assert result['verified'], result['msg']
    figures = _assert_journal_is_the_diff(result, start, _read(embedded_backend, root), 'did')
    healed = [a for a in result['journal']['allocations'] if a['resource_class'].startswith('CUSTOM_PCI')]
    assert len(healed) == 3 and set(a['kind'] for a in healed) == {'created'}, healed
    assert figures['allocations_created'] == 3 and figures['allocations_converted'] >= 1
    moved = [a for a in result['journal']['allocations'] if a['kind'] == 'moved']
    assert all(not a['resource_class'].startswith('CUSTOM_PCI') for a in moved)


def _report_of(backend, name, result, mode='apply'):
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import records as stored
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import report
    rec, _warnings = report.collect_record(backend, stored.node_record(name, name, result), mode=mode)
    data = report.build_report([rec], mode=mode)
    return data, report.summary(data), report.summary_line(data), report.render_markdown(data)


def test_every_figure_of_the_report_is_the_journals_in_its_modes_words(embedded_backend, tmp_path):
    """The report, summary.json and the summary line of a check, a roll and a rollback: each figure is
    the journal's (Placement's diff), said as "to move" / "moved" / "moved back" and "left behind"."""
    backend = embedded_backend
    report_, root = _gpu_node(backend, tmp_path)
    snaps = str(tmp_path / 'snaps')
    start = _read(backend, root)
    check = reshaper.reshape_node(backend, 'compute-01', report_, check_mode=True)
    roll = reshaper.reshape_node(backend, 'compute-01', report_, snapshot_dir=snaps)
    rolled = _read(backend, root)
    diff = _placement_diff(start, rolled)
    back = reshaper.rollback_node(backend, 'compute-01', snapshot_dir=snaps)
    restored_diff = _placement_diff(rolled, _read(backend, root))

    data, summary, line, markdown = _report_of(backend, 'compute-01', check, mode='plan')
    assert summary['totals']['figures'] == dict(diff, providers_left=0) and summary['totals']['words'] == 'would'
    assert summary['nodes'][0]['figures'] == summary['totals']['figures']
    assert '%d allocations of %d consumers to move' % (diff['allocations_moved'], diff['consumers_moved']) in line, line
    assert '| allocations to move | %d |' % diff['allocations_moved'] in markdown
    assert '| child providers to create | %d |' % diff['providers_created'] in markdown
    assert '| allocations moved |' not in markdown and '| child providers created |' not in markdown

    data, summary, line, markdown = _report_of(backend, 'compute-01', roll)
    assert summary['totals']['figures'] == dict(diff, providers_left=0) and summary['totals']['words'] == 'did'
    assert '%d allocations of %d consumers moved' % (diff['allocations_moved'], diff['consumers_moved']) in line, line
    assert '| allocations moved | %d |' % diff['allocations_moved'] in markdown
    assert '| child providers created | %d |' % diff['providers_created'] in markdown
    assert 'Written by this run' in markdown

    data, summary, line, markdown = _report_of(backend, 'compute-01', back)
    assert summary['totals']['figures'] == dict(restored_diff, providers_left=2), summary['totals']
    assert summary['totals']['words'] == 'restored' and summary['totals']['providers_created'] == 0
    moved_back = '%d allocations of %d consumers moved back' % (restored_diff['allocations_moved'],
                                                                restored_diff['consumers_moved'])
    assert moved_back in line, line
    assert 'child providers left behind (empty) 2' in line, line
    assert '| allocations moved back | %d |' % restored_diff['allocations_moved'] in markdown
    assert '| child providers left behind (empty) | 2 |' in markdown
    assert 'created' not in ' '.join(data['nodes'][0]['journal_lines']) and data['nodes'][0]['created'] == []
    assert '(new)' not in markdown and 'Restored by this rollback' in markdown


def test_the_rollback_report_draws_the_tree_it_changed_and_how_to_remove_what_it_left(embedded_backend, tmp_path):
    """The rollback's "before" is what Placement held when the rollback read it (the reshaped tree), not
    the snapshot (then before == after); the children it left empty are "left behind", and the next
    step is the rollback again with remove_children, which removes exactly them."""
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet.trees import normalize_tree
    backend = embedded_backend
    report_, root = _gpu_node(backend, tmp_path)
    snaps = str(tmp_path / 'snaps')
    reshaper.reshape_node(backend, 'compute-01', report_, snapshot_dir=snaps)
    rolled = _read(backend, root)
    back = reshaper.rollback_node(backend, 'compute-01', snapshot_dir=snaps)
    restored = _read(backend, root)
    data, summary, _line, markdown = _report_of(backend, 'compute-01', back)
    node = data['nodes'][0]
    assert node['before'] == normalize_tree(rolled) and node['after'] == normalize_tree(restored)
    assert node['before'] != node['after'] and node['changed_tree']
    children = sorted(p['name'] for u, p in rolled['providers'].items() if u != root)
    assert len(children) == 2 and node['left'] == children
    assert all(not restored['providers'][u].get('inventories') for u in restored['providers'] if u != root)
    step = ('The rollback left the empty child providers %s behind on compute-01; to remove them, roll it back '
            'again with remove_children: ansible-playbook -i INVENTORY placement.upgrade.rollback '
            '-e rollback_nodes=compute-01 -e rolling_reshape_remove_children=true' % ', '.join(children))
    assert summary['next_steps'] == [step], summary['next_steps']
    assert step in markdown.replace('`', '')
    # a repeated rollback (nothing restored) still names them, and the rollback with remove_children
    # (what the command runs) removes them: nothing left, no step
    twice = reshaper.rollback_node(backend, 'compute-01', snapshot_dir=snaps)
    assert _report_of(backend, 'compute-01', twice)[1]['next_steps'] == [step]
    gone = reshaper.rollback_node(backend, 'compute-01', snapshot_dir=snaps, remove_children=True)
    assert gone['verified'], gone['msg']
    assert set(_read(backend, root)['providers']) == {root}
    assert _report_of(backend, 'compute-01', gone)[1]['next_steps'] == []


def test_a_pass_failing_after_its_writes_has_their_journal_and_the_report_its_figures(
        embedded_backend, tmp_path, monkeypatch):
    """The root's traits fail after POST /reshaper was applied: the error carries the journal of what
    the pass wrote (Placement's diff), the failed task returns it, and the failed node's figures in
    the report are the journal's, not counted from the trees."""
    import pytest
    from ansible_collections.placement.upgrade.plugins.module_utils import common
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import ServiceUnavailable
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import records as stored
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import report

    def traits_fail(*args, **kwargs):
        raise ServiceUnavailable('Placement at http://placement answered 503 to PUT /traits')

    backend = embedded_backend
    report_, root = _gpu_node(backend, tmp_path)
    snaps = str(tmp_path / 'snaps')
    start = _read(backend, root)
    monkeypatch.setattr(reshaper, '_set_root_traits', traits_fail)
    with pytest.raises(ServiceUnavailable) as info:
        reshaper.reshape_node(backend, 'compute-01', report_, snapshot_dir=snaps, run_id='r1')
    after = _read(backend, root)
    failed = common.error_result(info.value)
    figures = _assert_journal_is_the_diff(failed, start, after, 'did')
    assert figures['allocations_moved'] > 0 and figures['providers_created'] == 2
    record = stored.node_record('compute-01', 'compute-01', failed)
    record.update(status='failed', reason=failed['msg'])
    rec, _w = report.collect_record(backend, record, snapshot_dir=snaps, run_id='r1')
    data = report.build_report([rec])
    node = data['nodes'][0]
    assert node['status'] == 'failed' and node['journal_mode'] == 'did'
    assert node['figures'] == figures and report.summary(data)['totals']['figures'] == figures
    # a failure before anything was written has no journal
    monkeypatch.undo()
    assert 'journal' not in common.error_result(ServiceUnavailable('down'))
