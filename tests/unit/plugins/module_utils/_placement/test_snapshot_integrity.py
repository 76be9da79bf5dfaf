# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 26 section 1: a rollback never applies a snapshot that was edited, damaged or is not
the node's.  Each case goes through the reshape module (state=rolled_back, its main() on an
embedded store, as a task runs it) and checks the message AND that nothing in the store
changed (generations included: not one write).

The snapshot carries a sha256 digest of its canonical content; independent of it, the
rollback checks the snapshot against the plan recorded in it (each consumer's totals, the
inventory the reshape replaced) and against the node (old snapshots without that record).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import hashlib
import json
import os

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.base import provider_tree_state
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend
from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import PlacementError
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import rollback as _rollback
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import snapshot as _snapshot
from ansible_collections.placement.upgrade.plugins.modules import reshape

import fakehost
from module_runner import run_module_main
from test_reshaper_support import comparable, flat_gpu_node, gpu_report, make_provider, put, report_for


@pytest.fixture
def env(tmp_path):
    """compute-01 and compute-02 (flat GPU nodes) in one embedded store, compute-01 reshaped."""
    db = str(tmp_path / 'placement.db')
    store = EmbeddedBackend(db)
    report = gpu_report(tmp_path / 'host1', 'compute-01')
    node = flat_gpu_node(store, 'compute-01', report)
    report2 = gpu_report(tmp_path / 'host2', 'compute-02')
    node2 = flat_gpu_node(store, 'compute-02', report2)
    node.update(store=store, db=db, report=report, snapdir=str(tmp_path / 'snaps'), other=node2,
                other_report=report2)
    try:
        yield node
    finally:
        store.close()


@pytest.fixture
def run(capsys, env):
    def call(args, check=False):
        args = dict(args)
        args.setdefault('embedded_db', env['db'])
        return run_module_main(reshape.main, args, capsys, check=check)
    return call


def whole_store(env):
    """Both trees as read (generations included) and the pools' generations: any write shows."""
    store = env['store']
    return (provider_tree_state(store, env['root']), provider_tree_state(store, env['other']['root']),
            store.get_provider(env['pool'])['generation'], store.get_provider(env['other']['pool'])['generation'])


def reshaped(run, env, node='compute-01', report=None):
    rc, res = run({'root_provider': node, 'devices': report or env['report'], 'snapshot_dir': env['snapdir']})
    assert rc == 0 and res['status'] == 'reshaped' and res['verified'] is True, res
    return res['snapshot']


def latest(env, node='compute-01'):
    return os.path.join(env['snapdir'], '%s.latest.json' % node)


def read(path):
    with open(path) as handle:
        return json.load(handle)


def write(path, doc, digest=None):
    """Write ``doc``; ``digest``: 'keep' (as it is: now stale if doc was edited), 'renew' (what an
    editor who knows the format would write: a valid digest of the edited content), 'drop'."""
    doc = copy.deepcopy(doc)
    if digest == 'drop':
        doc.pop('digest', None)
    elif digest == 'renew':
        doc['digest'] = _snapshot.content_digest(doc)
    with open(path, 'w') as handle:
        json.dump(doc, handle, indent=1, sort_keys=True)


def as_old(doc):
    """The snapshot as the code before issue 26 wrote it: no digest, no record of the inventory
    the reshape replaced nor of the pinned guests' VCPU."""
    doc = copy.deepcopy(doc)
    doc.pop('digest', None)
    doc['plan'].pop('inventories_before', None)
    doc['plan'].pop('cpu_pinned', None)
    return doc


def biggest_consumer(env):
    consumer = max(sorted(env['consumers']), key=lambda c: env['consumers'][c])
    assert env['consumers'][consumer] >= 2, env['consumers']
    return consumer


def rollback(run, env, **extra):
    args = {'root_provider': 'compute-01', 'state': 'rolled_back', 'snapshot_dir': env['snapdir']}
    args.update(extra)
    return run(args)


def refused(run, env, *words, **extra):
    """Roll back (check mode, then for real): both fail with ``words`` in the msg, nothing written."""
    before = whole_store(env)
    for check in (True, False):
        args = {'root_provider': 'compute-01', 'state': 'rolled_back', 'snapshot_dir': env['snapdir']}
        args.update(extra)
        rc, res = run(args, check=check)
        assert rc == 1 and res['failed'] is True, res
        for word in words:
            assert word in res['msg'], (word, res['msg'])
        assert 'verification passed' not in res['msg']
        assert whole_store(env) == before, 'the refused rollback wrote to Placement'
    return res['msg']


# -- the digest ----------------------------------------------------------------------

def test_the_snapshot_carries_the_sha256_of_its_canonical_content(run, env):
    path = reshaped(run, env)
    for name in (path, latest(env)):
        doc = read(name)
        body = dict((k, v) for k, v in doc.items() if k != 'digest')
        text = json.dumps(body, sort_keys=True, separators=(',', ':'))
        assert doc['digest'] == 'sha256:' + hashlib.sha256(text.encode('utf-8')).hexdigest()
        # what the rollback checks the snapshot against is recorded with it
        assert set(doc['plan']['inventories_before']) == set(doc['state']['providers'])
        assert doc['plan']['cpu_pinned'] == {}


def test_an_untouched_snapshot_rolls_back_verified(run, env):
    before = comparable(provider_tree_state(env['store'], env['root']))
    reshaped(run, env)
    rc, res = rollback(run, env, remove_children=True)
    assert rc == 0 and res['status'] == 'rolled_back' and res['verified'] is True, res
    assert res['snapshot_verified'] is True and res['remarks'] == []
    assert res['msg'].endswith('verification passed')
    assert comparable(provider_tree_state(env['store'], env['root'])) == before


def test_edited_amount_is_refused_by_the_digest(run, env):
    reshaped(run, env)
    consumer = biggest_consumer(env)
    doc = read(latest(env))
    doc['state']['allocations'][consumer]['allocations'][env['root']]['resources']['VGPU'] = 4
    write(latest(env), doc, digest='keep')
    refused(run, env, latest(env), 'was changed after it was written', 'the digest written with it')


def test_edited_amount_without_digest_is_refused_by_the_plan_recorded_in_it(run, env):
    """The issue's case: one guest's VGPU 2 -> 4.  Without a digest (dropped, or an old snapshot)
    and with a valid digest of the edited content alike, the consumer's totals do not match what
    its plan says: refused, naming the consumer, the class and both amounts."""
    reshaped(run, env)
    consumer = biggest_consumer(env)
    held = env['consumers'][consumer]
    original = read(latest(env))
    doc = copy.deepcopy(original)
    doc['state']['allocations'][consumer]['allocations'][env['root']]['resources']['VGPU'] = held + 2
    for variant in (doc, as_old(doc)):
        for digest in ('drop', 'renew'):
            write(latest(env), variant, digest=digest)
            refused(run, env, latest(env), 'consumer %s, VGPU: the state gives it %d, but its plan says %d before the '
                    'reshape' % (consumer, held + 2, held), 'Nothing was changed')


def test_edited_inventory_is_refused(run, env):
    """A root inventory total x100 (MEMORY_MB, a class the reshape does not change; and VGPU, the
    class it moves off the root).  The digest catches both; without it, the plan's record of the
    inventory the reshape replaced does; an old snapshot without that record is compared with
    the node for the classes the reshape does not change."""
    reshaped(run, env)
    original = read(latest(env))
    for rc in ('MEMORY_MB', 'VGPU'):
        doc = copy.deepcopy(original)
        record = doc['state']['providers'][env['root']]['inventories'][rc]
        total = record['total']
        record['total'] = total * 100
        write(latest(env), doc, digest='keep')
        refused(run, env, latest(env), 'was changed after it was written')
        for digest in ('drop', 'renew'):
            write(latest(env), doc, digest=digest)
            refused(run, env, latest(env), 'provider compute-01, %s: the state has total=%d, the plan recorded '
                    'total=%d as the inventory the reshape replaced' % (rc, total * 100, total))
    # an old snapshot (no digest, no record): MEMORY_MB is compared with the node
    doc = as_old(original)
    doc['state']['providers'][env['root']]['inventories']['MEMORY_MB']['total'] = 131072 * 100
    write(latest(env), doc)
    refused(run, env, latest(env), 'provider compute-01, MEMORY_MB: the snapshot has total=13107200, the node '
            'total=131072 now, and the reshape does not change that record', 'Nothing was changed')


def test_empty_state_is_refused_and_the_root_keeps_its_traits(run, env):
    reshaped(run, env)
    traits = env['store'].get_provider_traits(env['root'])
    doc = read(latest(env))
    doc['state'] = {'providers': {}, 'allocations': {}}
    for digest in ('keep', 'drop', 'renew'):
        write(latest(env), doc, digest=digest)
        words = ['was changed after it was written'] if digest == 'keep' else [
            'its state has no provider %s, the root compute-01 it is the snapshot of' % env['root']]
        refused(run, env, latest(env), *words)
    assert env['store'].get_provider_traits(env['root']) == traits


def test_another_nodes_snapshot_is_refused(run, env):
    reshaped(run, env)
    other = reshaped(run, env, node='compute-02', report=env['other_report'])
    # given as the snapshot file, or copied over compute-01's latest
    refused(run, env, 'snapshot %s is of provider compute-02 (%s), not of compute-01 (%s)'
            % (other, env['other']['root'], env['root']), snapshot=other)
    original = read(latest(env))
    write(latest(env), read(other))
    refused(run, env, 'snapshot %s is of provider compute-02' % latest(env))
    # compute-01's snapshot with a provider of compute-02's tree in its state
    doc = copy.deepcopy(original)
    doc['state']['providers'][env['other']['root']] = read(other)['state']['providers'][env['other']['root']]
    for digest in ('drop', 'renew'):
        write(latest(env), doc, digest=digest)
        refused(run, env, latest(env), 'provider compute-02 (%s) is of another tree' % env['other']['root'])


def test_truncated_file_is_refused(run, env):
    reshaped(run, env)
    with open(latest(env)) as handle:
        text = handle.read()
    with open(latest(env), 'w') as handle:
        handle.write(text[:len(text) // 2])
    refused(run, env, 'snapshot %s is not valid JSON' % latest(env))


def test_a_snapshot_without_digest_still_rolls_back_and_says_it_was_not_verified(run, env):
    before = comparable(provider_tree_state(env['store'], env['root']))
    reshaped(run, env)
    write(latest(env), as_old(read(latest(env))))
    note = 'snapshot %s has no digest (written before snapshots carried one)' % latest(env)
    rc, res = run({'root_provider': 'compute-01', 'state': 'rolled_back', 'snapshot_dir': env['snapdir']},
                  check=True)
    assert rc == 0 and res['snapshot_verified'] is False and note in res['msg'], res
    rc, res = rollback(run, env, remove_children=True)
    assert rc == 0 and res['status'] == 'rolled_back' and res['verified'] is True, res
    assert res['snapshot_verified'] is False
    assert 'verification passed. ' + note in res['msg']
    assert any(note in remark for remark in res['remarks'])
    assert comparable(provider_tree_state(env['store'], env['root'])) == before


# -- what a reshape changes on purpose is not a violation; an edit of it is ---------------------

def _custom_class_pinned_node(store, where):
    """cn: a GPU of the custom mdev class CUSTOM_T4_4Q (instance-00000022's second VGPU goes there
    as that class) and a pinned guest (instance-00000021: its 2 VCPU become PCPU)."""
    spec = fakehost.multi_type_gpu_host(name='cn')
    spec['numa_cells'] = [{'id': 0, 'cpus': '0-3', 'memory_mb': 8192}, {'id': 1, 'cpus': '4-7', 'memory_mb': 8192}]
    spec['nova_conf']['compute'] = {'cpu_dedicated_set': '2-7', 'cpu_shared_set': '0-1'}
    spec['instances'][0]['pinned_cpus'] = [2, 3]
    report = report_for(where, spec, nova=True)
    names = dict((i['name'], u) for u, i in report['instances'].items())
    root = make_provider(store, 'cn', {'VCPU': {'total': 8, 'allocation_ratio': 4.0},
                                       'MEMORY_MB': {'total': 16384},
                                       'VGPU': {'total': 12, 'max_unit': 12}})
    put(store, names['instance-00000021'], {root: {'resources': {'VCPU': 2, 'MEMORY_MB': 1024, 'VGPU': 1}}})
    put(store, names['instance-00000022'], {root: {'resources': {'VCPU': 1, 'MEMORY_MB': 1024, 'VGPU': 2}}})
    return root, report, names


def test_custom_mdev_class_and_pinned_guests_roll_back(embedded_backend, tmp_path):
    """Both change a guest's per-class totals on purpose (the plan's assignments and cpu_pinned
    say how much): not a violation, the rollback gives them back."""
    root, report, names = _custom_class_pinned_node(embedded_backend, tmp_path / 'host')
    before = comparable(provider_tree_state(embedded_backend, root))
    snaps = str(tmp_path / 'snaps')
    result = reshaper.reshape_node(embedded_backend, 'cn', report, snapshot_dir=snaps)
    assert result['status'] == 'reshaped' and result['verified'], result['msg']
    plan = read(os.path.join(snaps, 'cn.latest.json'))['plan']
    assert plan['cpu_pinned'] == {names['instance-00000021']: 2}
    assert plan['planned_totals'][names['instance-00000021']] == {'PCPU': 2, 'MEMORY_MB': 1024, 'VGPU': 1}
    assert plan['planned_totals'][names['instance-00000022']] == {'VCPU': 1, 'MEMORY_MB': 1024, 'VGPU': 1,
                                                                  'CUSTOM_T4_4Q': 1}
    back = reshaper.rollback_node(embedded_backend, 'cn', snapshot_dir=snaps, remove_children=True)
    assert back['status'] == 'rolled_back' and back['verified'] is True and back['snapshot_verified'] is True
    assert comparable(provider_tree_state(embedded_backend, root)) == before


@pytest.mark.parametrize('instance, rc, amount, old', [
    ('instance-00000022', 'VGPU', 3, False),     # the class the custom GPU takes VGPU units as
    ('instance-00000021', 'VCPU', 3, False),     # the pinned guest's VCPU, converted to PCPU
    ('instance-00000021', 'VCPU', 3, True),      # the same in an old snapshot (no cpu_pinned)
])
def test_an_edited_amount_of_a_class_changed_on_purpose_is_refused(embedded_backend, tmp_path, instance, rc,
                                                                   amount, old):
    root, report, names = _custom_class_pinned_node(embedded_backend, tmp_path / 'host')
    snaps = str(tmp_path / 'snaps')
    assert reshaper.reshape_node(embedded_backend, 'cn', report, snapshot_dir=snaps)['status'] == 'reshaped'
    path = os.path.join(snaps, 'cn.latest.json')
    doc = as_old(read(path)) if old else read(path)
    consumer = names[instance]
    doc['state']['allocations'][consumer]['allocations'][root]['resources'][rc] = amount
    write(path, doc, digest='drop')
    state = provider_tree_state(embedded_backend, root)
    with pytest.raises(PlacementError) as info:
        reshaper.rollback_node(embedded_backend, 'cn', snapshot_dir=snaps, remove_children=True)
    assert 'consumer %s, %s: the state gives it %d, but its plan says 2 before the reshape' % (
        consumer, rc, amount) in info.value.detail
    assert path in info.value.detail and 'Nothing was changed' in info.value.detail
    assert provider_tree_state(embedded_backend, root) == state


ODD = [None, 7, -1, True, 'x', [], [1, 'a'], {}, {'a': 1}, {'a': {'b': 'c'}}, [{'name': 5, 'inventories': 'x'}]]


def test_odd_plan_parts_give_a_refusal_or_nothing_never_an_exception(run, env):
    """The plan's parts are not checked by check_document: the checks read any type."""
    reshaped(run, env)
    doc = as_old(read(latest(env)))
    state = provider_tree_state(env['store'], env['root'])
    consumer = biggest_consumer(env)
    keys = ('assignments', 'children', 'moved_classes', 'planned_totals', 'cpu_pinned', 'inventories_before')
    for key in keys:
        for value in ODD:
            for where in ('plan', 'consumer'):
                bad = copy.deepcopy(doc)
                if where == 'plan':
                    bad['plan'][key] = value
                elif key in ('assignments', 'planned_totals', 'cpu_pinned', 'inventories_before'):
                    bad['plan'].setdefault(key, {})
                    if isinstance(bad['plan'][key], dict):
                        bad['plan'][key][consumer if key != 'inventories_before' else env['root']] = value
                for problems in (_rollback.rollback_problems(bad), _rollback.inventory_drift(bad, state)):
                    assert isinstance(problems, list) and all(isinstance(p, str) for p in problems)
    bad = copy.deepcopy(doc)
    bad['plan'] = None
    assert _rollback.rollback_problems(bad) == [] and _rollback.inventory_drift(bad, state) == []
