# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reliability harness (issue 12, figures a-c): a node, its ledger, a fault, the verdict.

A trial builds one compute node (tools/fakehost.py host, nova's legacy flat layout: VGPU
on the root, two GPUs, three VGPU guests, CPU-only guests and a sharing DISK_GB pool),
reads its LEDGER (every consumer's units per resource class summed over every provider
it uses: the invariant of a reshape), runs :func:`reshaper.reshape_node` under a fault,
then classifies what Placement holds (:func:`classify`):

``reshaped``  every consumer balances, every allocation sits where the plan puts it
              (VGPU on the GPU child its mdevs belong to, the rest on the root, DISK_GB
              on the pool) and ``verify_node`` passes;
``untouched`` every consumer balances, every allocation sits where it was, the root's
              inventory is as before and no child holds inventory or allocations;
``partial``   anything else (a defect).

and counts ``lost`` / ``doubled`` (a consumer holding fewer / more units of a class than
expected), ``mismatched`` (a provider whose usage is not the sum of its allocations, or,
in a partial state, an allocation on a provider neither layout puts it on) and
``leftover_children`` (empty children a failed run left behind).  A rerun without the
fault must then converge: ``reshaped`` with nothing lost, doubled or mismatched.

Suites: :func:`run_writers` (a: concurrent writers, real Placement),
:func:`run_rest_faults` (b: fault proxy in front of the real Placement, killed and
restarted too), :func:`run_embedded_kills` (b: SIGKILL of a process reshaping the
embedded store), :func:`run_fleet` (c: the rolling playbook, serial 10 / forks 10).
Each returns a figures dict; :func:`format_figures` prints it.  Loopback only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
REPO = os.path.dirname(TESTS)
for _path in (HERE, os.path.join(REPO, 'tools'), TESTS, os.path.join(TESTS, 'unit')):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import fakehost  # noqa: E402
import simfleet  # noqa: E402
from placement_server import PlacementServer  # noqa: E402
from test_reshaper_support import (  # noqa: E402
    DISK_PER_GUEST,
    MEM_PER_GUEST,
    PROJECT,
    USER,
    VCPU_PER_GUEST,
    flat_gpu_node,
    put,
    report_for,
)

from ansible_collections.placement.upgrade.plugins.module_utils._placement import errors  # noqa: E402
from ansible_collections.placement.upgrade.plugins.module_utils._placement.rules import inventory as inventory_rules  # noqa: E402
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.base import provider_tree_state
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.rest import RestBackend

RESHAPED = 'reshaped'
UNTOUCHED = 'untouched'
PARTIAL = 'partial'

#: CPU-only guests seeded with allocations, and guests whose domain exists but that hold
#: nothing yet (the concurrent writers spawn them: a consumer without a domain on the host
#: would rightly defer the node, see inflight.py)
CPU_GUESTS = ('instance-000000c0', 'instance-000000c1')
IDLE_GUESTS = ('instance-000000d0', 'instance-000000d1', 'instance-000000d2', 'instance-000000d3')
WRITER_TRAIT = 'CUSTOM_RELIABILITY_WRITER'


# ---------------------------------------------------------------------------
# the node

def node_spec(name):
    spec = fakehost.default_gpu_host(name=name)
    spec['instances'] = list(spec['instances']) + [{'name': g} for g in CPU_GUESTS + IDLE_GUESTS]
    return spec


def make_report(workdir, name):
    """Fake host ``name`` under ``workdir``; the device report discovery gives for it."""
    return report_for(workdir, node_spec(name))


def build_node(backend, workdir, name, report=None):
    """Seed ``backend`` with node ``name`` in the legacy layout; return its description.

    ``{name, root, pool, report, snapdir, guests: {instance name: uuid}, vgpu_target:
    {consumer: {child name: units}}, children: [child names]}``.
    """
    if report is None:
        report = make_report(os.path.join(workdir, 'host'), name)
    built = flat_gpu_node(backend, name, report)
    guests = dict((info['name'], uuid) for uuid, info in report['instances'].items())
    for guest in CPU_GUESTS:
        put(backend, guests[guest], {
            built['root']: {'resources': {'VCPU': VCPU_PER_GUEST, 'MEMORY_MB': MEM_PER_GUEST}},
            built['pool']: {'resources': {'DISK_GB': DISK_PER_GUEST}}})
    target = {}
    children = []
    for gpu in report['gpus']:
        child = child_name(name, gpu['address'])
        children.append(child)
        for mdev in gpu['mdevs']:
            if mdev['instance_uuid']:
                slot = target.setdefault(mdev['instance_uuid'], {})
                slot[child] = slot.get(child, 0) + 1
    return {'name': name, 'root': built['root'], 'pool': built['pool'], 'report': report,
            'snapdir': os.path.join(workdir, 'snapshots'), 'guests': guests,
            'vgpu_target': target, 'children': children}


def child_name(node, address):
    """nova's name of a physical GPU's provider: ``<node>_pci_0000_84_00_0``."""
    return '%s_pci_%s' % (node, address.replace(':', '_').replace('.', '_'))


# ---------------------------------------------------------------------------
# ledger and verdict

def totals_of(body):
    out = {}
    for entry in ((body or {}).get('allocations') or {}).values():
        for rc, n in (entry.get('resources') or {}).items():
            if n:
                out[rc] = out.get(rc, 0) + n
    return out


def placement_of(body):
    out = {}
    for rp, entry in ((body or {}).get('allocations') or {}).items():
        for rc, n in (entry.get('resources') or {}).items():
            if n:
                out[(rp, rc)] = n
    return out


def norm_inventories(invs):
    return dict((rc, inventory_rules.normalize_inventory(
        dict((k, v) for k, v in rec.items() if k in inventory_rules.INVENTORY_FIELDS), rc))
        for rc, rec in (invs or {}).items())


def read_consumers(backend, node, state=None):
    """{consumer: allocations body} of every guest of the node and every consumer found on
    its tree or its pool."""
    state = state or provider_tree_state(backend, node['root'])
    bodies = dict(state['allocations'])
    universe = set(node['guests'].values())
    universe.update(backend.get_provider_allocations(node['pool'])['allocations'])
    for consumer in sorted(universe - set(bodies)):
        bodies[consumer] = backend.get_allocations(consumer)
    return bodies


def ledger(backend, node):
    """The node's ledger: ``{consumer: {rc: units}}`` (consumers holding nothing left out)."""
    out = {}
    for consumer, body in read_consumers(backend, node).items():
        totals = totals_of(body)
        if totals:
            out[consumer] = totals
    return out


def snapshot_node(backend, node):
    """What a trial compares with: the ledger (as one alternative per consumer) and the
    root's and pool's inventories."""
    led = ledger(backend, node)
    return {'expected': dict((c, [t]) for c, t in led.items()),
            'root_inventories': [norm_inventories(backend.get_inventories(node['root'])['inventories'])],
            'pool_inventories': norm_inventories(backend.get_inventories(node['pool'])['inventories'])}


def _compare_totals(actual, alternatives):
    """(lost, doubled, lost_units, doubled_units, detail) of one consumer against the closest
    acceptable alternative (any alternative matching exactly gives zeros)."""
    if any(actual == alt for alt in alternatives):
        return 0, 0, 0, 0, None
    best = None
    for alt in alternatives:
        lost = doubled = lu = du = 0
        for rc in set(actual) | set(alt):
            diff = actual.get(rc, 0) - alt.get(rc, 0)
            if diff < 0:
                lost += 1
                lu -= diff
            elif diff > 0:
                doubled += 1
                du += diff
        if best is None or (lost + doubled) < (best[0] + best[1]):
            best = (lost, doubled, lu, du, 'holds %s, expected %s' % (actual, alt))
    return best


def classify(backend, node, baseline):
    """Verdict on the node as Placement holds it now; see the module doc.

    ``baseline``: ``{"expected": {consumer: [acceptable totals]}, "root_inventories":
    [acceptable root inventories], "pool_inventories": {...}}``.
    """
    state = provider_tree_state(backend, node['root'])
    bodies = read_consumers(backend, node, state)
    providers = state['providers']
    by_name = dict((p['name'], u) for u, p in providers.items())
    root, pool = node['root'], node['pool']
    out = {'outcome': None, 'lost': 0, 'doubled': 0, 'mismatched': 0, 'lost_units': 0,
           'doubled_units': 0, 'leftover_children': 0, 'leftover': [], 'details': []}
    expected = baseline['expected']
    for consumer in sorted(set(expected) | set(c for c, b in bodies.items() if totals_of(b))):
        actual = totals_of(bodies.get(consumer))
        lost, doubled, lu, du, detail = _compare_totals(actual, expected.get(consumer) or [{}])
        out['lost'] += lost
        out['doubled'] += doubled
        out['lost_units'] += lu
        out['doubled_units'] += du
        if detail:
            out['details'].append('consumer %s %s' % (consumer, detail))
    # usage against the sum of the allocations, provider by provider (the tree and the pool)
    usage_mismatch = 0
    summed = {}
    for body in bodies.values():
        for (rp, rc), n in placement_of(body).items():
            summed[(rp, rc)] = summed.get((rp, rc), 0) + n
    usages = dict((u, providers[u].get('usages') or {}) for u in providers)
    usages[pool] = backend.get_usages(pool)['usages']
    for uuid in sorted(usages):
        classes = set(usages[uuid]) | set(rc for rp, rc in summed if rp == uuid)
        for rc in sorted(classes):
            if usages[uuid].get(rc, 0) != summed.get((uuid, rc), 0):
                usage_mismatch += 1
                out['details'].append('provider %s %s: usage %s, allocations sum to %s'
                                      % (uuid, rc, usages[uuid].get(rc, 0), summed.get((uuid, rc), 0)))
    # where the allocations sit, against both layouts
    off_legacy = off_target = 0
    for consumer, body in bodies.items():
        actual = placement_of(body)
        totals = totals_of(body)
        legacy, target = {}, {}
        for rc, n in totals.items():
            if rc == 'DISK_GB':
                legacy[(pool, rc)] = target[(pool, rc)] = n
            elif rc == 'VGPU':
                legacy[(root, rc)] = n
                for child, units in (node['vgpu_target'].get(consumer) or {}).items():
                    target[(by_name.get(child, child), rc)] = units
            else:
                legacy[(root, rc)] = target[(root, rc)] = n
        off_legacy += len(set(k for k in set(actual) | set(legacy) if actual.get(k) != legacy.get(k)))
        off_target += len(set(k for k in set(actual) | set(target) if actual.get(k) != target.get(k)))
    ledger_ok = out['lost'] == 0 and out['doubled'] == 0 and usage_mismatch == 0
    root_inv = norm_inventories(providers[root]['inventories'])
    children = [u for u in providers if u != root]
    children_empty = all(not providers[u]['inventories'] and not providers[u].get('usages') for u in children)
    pool_ok = norm_inventories(backend.get_inventories(pool)['inventories']) == baseline['pool_inventories']
    legacy_inv = root_inv in baseline['root_inventories'] and children_empty and pool_ok
    verified = False
    if ledger_ok and off_target == 0:
        try:
            verified = bool(reshaper.verify_node(backend, node['name'], node['report'])['verified'])
        except errors.PlacementError as exc:
            out['details'].append('verify_node raised %s' % exc)
    if ledger_ok and off_target == 0 and verified and pool_ok and 'VGPU' not in root_inv:
        out['outcome'] = RESHAPED
    elif ledger_ok and off_legacy == 0 and legacy_inv:
        out['outcome'] = UNTOUCHED
        out['leftover_children'] = len(children)
        out['leftover'] = [(providers[u]['name'], u) for u in sorted(children)]
    else:
        out['outcome'] = PARTIAL
        out['details'].append('partial: %d allocation(s) off the legacy layout, %d off the target; root '
                              'inventory %s; children %s' % (
                                  off_legacy, off_target, sorted(root_inv),
                                  dict((providers[u]['name'], sorted(providers[u]['inventories']))
                                       for u in children)))
        usage_mismatch += min(off_legacy, off_target)
    out['mismatched'] = usage_mismatch
    return out


def rerun(backend, node, baseline):
    """Reshape again without any fault; the verdict afterwards (must be ``reshaped``, clean)."""
    error = None
    try:
        reshaper.reshape_node(backend, node['name'], node['report'], snapshot_dir=node['snapdir'])
    except errors.PlacementError as exc:
        error = '%s: %s' % (type(exc).__name__, exc)
    verdict = classify(backend, node, baseline)
    verdict['converged'] = (verdict['outcome'] == RESHAPED and not verdict['lost'] and not verdict['doubled']
                            and not verdict['mismatched'])
    if error:
        verdict['details'].append('rerun raised %s' % error)
    return verdict


# ---------------------------------------------------------------------------
# figures

def new_figures(suite, **extra):
    figures = {'suite': suite, 'trials': 0, 'faults': 0, 'by_kind': {}, 'by_step': {},
               'outcomes': {RESHAPED: 0, UNTOUCHED: 0, PARTIAL: 0}, 'lost': 0, 'doubled': 0,
               'mismatched': 0, 'leftover_children': 0, 'trials_with_leftovers': 0,
               'leftover_unnamed': 0, 'leftover_after_kill': 0,
               'rerun_converged': 0, 'rerun_failed': 0, 'run_errors': {}, 'defects': [], 'seconds': 0.0}
    figures.update(extra)
    return figures


def _count(table, key, n=1):
    table[key] = table.get(key, 0) + n


def record(figures, verdict, again, kind=None, step=None, error=None, label=None):
    """Add one trial's verdict (after the fault) and its rerun's to the figures."""
    figures['trials'] += 1
    if kind:
        figures['faults'] += 1
        _count(figures['by_kind'], kind)
        _count(figures['by_step'], step or '-')
    _count(figures['outcomes'], verdict['outcome'])
    for key in ('lost', 'doubled', 'mismatched'):
        figures[key] += verdict[key] + again[key]
    figures['leftover_children'] += verdict['leftover_children']
    if verdict['leftover_children']:
        figures['trials_with_leftovers'] += 1
    # issue 12.3: what a failed run leaves must be named in its message (a run killed with
    # SIGKILL says nothing: its leftovers are counted apart, the rerun reuses them)
    if error is None:
        figures['leftover_after_kill'] += verdict['leftover_children']
    else:
        unnamed = [name for name, uuid in verdict.get('leftover') or [] if name not in error and uuid not in error]
        figures['leftover_unnamed'] += len(unnamed)
    if again['converged']:
        figures['rerun_converged'] += 1
    else:
        figures['rerun_failed'] += 1
    if error:
        _count(figures['run_errors'], error.split(':')[0])
    bad = (verdict['outcome'] == PARTIAL or verdict['lost'] or verdict['doubled'] or verdict['mismatched']
           or not again['converged'])
    if bad:
        figures['defects'].append({'trial': label, 'kind': kind, 'step': step, 'error': error,
                                   'verdict': verdict, 'rerun': again})


def clean(figures):
    """Whether nothing was lost, doubled, mismatched or partial and every rerun converged."""
    return (not figures['defects'] and figures['lost'] == 0 and figures['doubled'] == 0 and figures['mismatched'] == 0
            and figures['outcomes'].get(PARTIAL, 0) == 0 and figures['rerun_failed'] == 0
            and figures['trials'] > 0)


def format_figures(figures):
    lines = ['== %s ==' % figures['suite']]
    lines.append('  trials %d, faults %d, %.1f s' % (figures['trials'], figures['faults'], figures['seconds']))
    if figures['by_kind']:
        lines.append('  faults by kind: %s' % ', '.join('%s %d' % kv for kv in sorted(figures['by_kind'].items())))
    if figures['by_step']:
        lines.append('  faults by step: %s' % ', '.join('%s %d' % kv for kv in sorted(figures['by_step'].items())))
    for key in ('writes', 'notes'):
        if figures.get(key):
            lines.append('  %s: %s' % (key, ', '.join('%s %s' % kv for kv in sorted(figures[key].items()))))
    lines.append('  outcomes: reshaped %d, untouched %d, partial %d' % (
        figures['outcomes'].get(RESHAPED, 0), figures['outcomes'].get(UNTOUCHED, 0),
        figures['outcomes'].get(PARTIAL, 0)))
    lines.append('  lost %d, doubled %d, mismatched %d' % (figures['lost'], figures['doubled'], figures['mismatched']))
    lines.append('  leftover children %d (in %d trials): %d named in the failure\'s message, %d not, %d after a '
                 'SIGKILL' % (figures['leftover_children'], figures['trials_with_leftovers'],
                              figures['leftover_children'] - figures['leftover_unnamed'] - figures['leftover_after_kill'],
                              figures['leftover_unnamed'], figures['leftover_after_kill']))
    if figures.get('rerun_run', True):
        lines.append('  rerun converged %d/%d' % (figures['rerun_converged'], figures['trials']))
    else:
        lines.append('  rerun: not run (quick run; the full run plays the playbook again)')
    if figures['run_errors']:
        lines.append('  reshape_node raised: %s' % ', '.join('%s %d' % kv for kv in sorted(figures['run_errors'].items())))
    if 'verify_node_failed' in figures:
        lines.append('  verify_node (state: verified) failed on %d node(s) the roll left in the layout%s' % (
            len(figures['verify_node_failed']), ':' if figures['verify_node_failed'] else ''))
        for item in figures['verify_node_failed']:
            lines.append('    %s' % item)
    for defect in figures['defects'][:10]:
        lines.append('  DEFECT %s' % json.dumps(defect, sort_keys=True, default=str)[:1500])
    lines.append('  verdict: %s' % ('CLEAN' if clean(figures) else 'DEFECTS'))
    return '\n'.join(lines)


def brief(verdict, again):
    """One trial in a few words (the -v line): outcome, counts, leftovers, the rerun."""
    return '%s (lost %d, doubled %d, mismatched %d, leftover children %d), rerun %s' % (
        verdict['outcome'], verdict['lost'], verdict['doubled'], verdict['mismatched'],
        verdict['leftover_children'], 'converged' if again['converged'] else 'FAILED: %s' % again['details'][:3])


def _err(exc):
    # whole: the end of the message names what a failed run left (issue 12.3)
    return '%s: %s' % (type(exc).__name__, exc)


# ---------------------------------------------------------------------------
# (a) concurrent writers on the real Placement

class _Writer(threading.Thread):
    """Writes to one node while it is reshaped; records what each write did by its answer.

    It owns some consumers (nobody else writes them but the reshape, which must keep their
    totals): resize (VCPU of an allocated guest, full PUT with its consumer generation),
    spawn (an idle guest gets VCPU/MEMORY_MB on the root and DISK_GB on the pool), delete
    (a CPU-only guest's allocations).  ``inventory`` / ``traits`` also rewrite the root's
    inventory (MEMORY_MB reserved) or traits with the generation read.  A 2xx changes the
    expected ledger, a 4xx does not; anything else (5xx, connection lost) makes both the old
    and the new state acceptable and the writer leaves that consumer alone afterwards.
    """

    def __init__(self, backend, node, owned, expected, root_inventories, rng, inventory=False,
                 traits=False, pause=0.01):
        super(_Writer, self).__init__(name='writer')
        self.daemon = True
        self.backend = backend
        self.node = node
        self.owned = list(owned)
        self.expected = expected
        self.root_inventories = root_inventories
        self.rng = rng
        self.inventory = inventory
        self.traits = traits
        self.pause = pause
        self.stop_event = threading.Event()
        self.frozen = set()
        self.counts = {}
        self.crash = None

    def run(self):
        try:
            while not self.stop_event.is_set():
                try:
                    self.one()
                except errors.PlacementError as exc:  # a read refused (e.g. 500 database is locked)
                    _count(self.counts, 'read_failed_%s' % type(exc).__name__)
                time.sleep(self.rng.uniform(0, self.pause))
        except Exception:  # a bug of the harness must show, not hang the trial
            self.crash = traceback.format_exc()

    def _outcome(self, what, func):
        try:
            func()
        except errors.PlacementError as exc:
            status = getattr(exc, 'status', None) or 0
            kind = 'unknown' if (status >= 500 or isinstance(exc, errors.ServiceUnavailable)) else 'refused'
            _count(self.counts, '%s_%s' % (what, kind))
            return kind
        _count(self.counts, '%s_ok' % what)
        return 'ok'

    def _settle(self, consumer, outcome, new):
        if outcome == 'ok':
            self.expected[consumer] = [new]
        elif outcome == 'unknown':
            self.expected[consumer] = list(self.expected.get(consumer) or [{}]) + [new]
            self.frozen.add(consumer)

    def one(self):
        ops = ['consumer'] * 3
        if self.inventory:
            ops.append('inventory')
        if self.traits:
            ops.append('traits')
        op = self.rng.choice(ops)
        backend, node = self.backend, self.node
        if op == 'inventory':
            inv = backend.get_inventories(node['root'])
            new = copy.deepcopy(inv['inventories'])
            mem = new['MEMORY_MB']
            mem['reserved'] = 1024 if mem.get('reserved') == 512 else 512
            outcome = self._outcome('inventory', lambda: backend.set_inventories(
                node['root'], inv['resource_provider_generation'], new))
            if outcome != 'refused':
                self.root_inventories.append(norm_inventories(new))
            return
        if op == 'traits':
            current = backend.get_provider_traits(node['root'])
            traits = set(current['traits']) ^ set([WRITER_TRAIT])
            self._outcome('traits', lambda: backend.set_provider_traits(
                node['root'], current['resource_provider_generation'], sorted(traits)))
            return
        candidates = [c for c in self.owned if c not in self.frozen]
        if not candidates:
            return
        consumer = self.rng.choice(candidates)
        body = backend.get_allocations(consumer)
        held = totals_of(body)
        if not held:
            allocs = {node['root']: {'resources': {'VCPU': 1, 'MEMORY_MB': 512}},
                      node['pool']: {'resources': {'DISK_GB': 10}}}
            put_body = {'allocations': allocs, 'project_id': PROJECT, 'user_id': USER,
                        'consumer_generation': body.get('consumer_generation'), 'consumer_type': 'INSTANCE'}
            outcome = self._outcome('spawn', lambda: backend.put_allocations(consumer, put_body))
            self._settle(consumer, outcome, totals_of(put_body))
            return
        if 'VGPU' not in held and self.rng.random() < 0.3:
            outcome = self._outcome('delete', lambda: backend.delete_allocations(consumer))
            self._settle(consumer, outcome, {})
            return
        allocs = dict((rp, {'resources': dict(e['resources'])}) for rp, e in body['allocations'].items())
        for entry in allocs.values():
            if 'VCPU' in entry['resources']:
                entry['resources']['VCPU'] = self.rng.choice([1, 2, 3, 4])
        put_body = {'allocations': allocs, 'project_id': body.get('project_id') or PROJECT,
                    'user_id': body.get('user_id') or USER,
                    'consumer_generation': body.get('consumer_generation'),
                    'consumer_type': body.get('consumer_type') or 'INSTANCE'}
        outcome = self._outcome('resize', lambda: backend.put_allocations(consumer, put_body))
        self._settle(consumer, outcome, totals_of(put_body))


PAUSES = (0.02, 0.2, 1.0, 2.0, 4.0)


def run_writers(server, workdir, trials=10, writers=3, seed=1, log=None):
    """Figure (a): ``trials`` reshapes of a fresh node each, while ``writers`` threads write
    to the same tree; every trial's ledger must balance against what the writes did."""
    rng = random.Random(seed)
    figures = new_figures('(a) concurrent writers during reshapes, real Placement 16.0.0 (%s) over REST'
                          % getattr(server, 'db_kind', 'sqlite'), writes={}, notes={})
    start = time.time()
    main = RestBackend(server.adapter())
    main.ensure_trait(WRITER_TRAIT)
    pool_of = [RestBackend(server.adapter()) for _i in range(writers)]
    try:
        for trial in range(trials):
            name = 'rel-a-%d-%04d' % (seed, trial)
            node = build_node(main, os.path.join(workdir, name), name)
            baseline = snapshot_node(main, node)
            expected, root_invs = baseline['expected'], baseline['root_inventories']
            guests = [node['guests'][g] for g in sorted(node['guests'])]
            # how hard the writers press: from a write every few ms (the reshape may give up
            # after its attempts) to a few a second (it usually wins on the first or a retry)
            pause = rng.choice(PAUSES)
            _count(figures['notes'], 'pause_%gs' % pause)
            threads = []
            for index in range(writers):
                owned = guests[index::writers]
                threads.append(_Writer(pool_of[index], node, owned, expected, root_invs,
                                       random.Random(rng.random()), inventory=index == 0,
                                       traits=index == 1 % writers, pause=pause))
            for thread in threads:
                thread.start()
            time.sleep(rng.uniform(0, 0.05))
            error = None
            result = None
            try:
                result = reshaper.reshape_node(main, name, node['report'], snapshot_dir=node['snapdir'])
            except errors.PlacementError as exc:
                error = _err(exc)
            time.sleep(rng.uniform(0, 0.05))
            for thread in threads:
                thread.stop_event.set()
            for thread in threads:
                thread.join(60)
                if thread.crash:
                    raise RuntimeError('writer crashed: %s' % thread.crash)
                for key, n in thread.counts.items():
                    _count(figures['writes'], key, n)
            if result is not None:
                _count(figures['notes'], 'reshape_%s' % result['status'])
                _count(figures['notes'], 'retries', result['retries'])
                if result['status'] == reshaper.STATUS_RESHAPED and not result['verified']:
                    # the tree was read while the writers still wrote: noted, judged below
                    _count(figures['notes'], 'verified_false_while_writing')
            verdict = classify(main, node, baseline)
            again = rerun(main, node, baseline)
            record(figures, verdict, again, error=error, label='seed %d trial %d (%s)' % (seed, trial, name))
            if log:
                log('(a) trial %d: %s%s' % (trial, brief(verdict, again), '; reshape_node raised %s' % error[:160]
                                            if error else ''))
    finally:
        main.close()
        for backend in pool_of:
            backend.close()
    figures['seconds'] = time.time() - start
    return figures


# ---------------------------------------------------------------------------
# (b) faults on the REST path

STEPS = ('read', 'rc', 'child', 'trait', 'reshape', 'verify')
REST_KINDS = ('500', '502', '503', '504', '503x4', 'lost', 'drop', 'timeout', 'kill', 'kill_before')


def _rest_client(url, timeout):
    from keystoneauth1 import adapter as ks_adapter
    from keystoneauth1 import session as ks_session
    from keystoneauth1 import token_endpoint
    sess = ks_session.Session(auth=token_endpoint.Token(url, 'admin'), timeout=timeout)
    adapter = ks_adapter.Adapter(session=sess, service_type='placement', endpoint_override=url,
                                 additional_headers={'X-Roles': 'admin,service'})
    return RestBackend(adapter)


def rest_steps(proxy, server, workdir):
    """A dry run through the proxy: how many requests each step of a reshape sends."""
    direct = RestBackend(server.adapter())
    try:
        node = build_node(direct, os.path.join(workdir, 'rel-b-dry'), 'rel-b-dry')
    finally:
        direct.close()
    client = _rest_client(proxy.url, 5)
    proxy.reset()
    try:
        reshaper.reshape_node(client, node['name'], node['report'], snapshot_dir=node['snapdir'])
    finally:
        client.close()
    return dict(proxy.step_counts)


#: the faults every run starts with (the quick run is the first six): a lost answer, a kill and a
#: timeout on POST /reshaper itself, a dropped child creation, a kill before a trait write, retries
#: outlasted on the verification, a 500 on a read, a lost child creation (nth 0: a random request)
FIRST_FAULTS = (('lost', 'reshape', 1), ('kill', 'reshape', 1), ('timeout', 'reshape', 1),
                ('drop', 'child', 1), ('kill_before', 'trait', 1), ('503x4', 'verify', 0),
                ('500', 'read', 0), ('lost', 'child', 2))


def plan_rest_faults(steps, count, rng):
    """``count`` (kind, step, nth) faults: :data:`FIRST_FAULTS`, then every kind at every
    step, round after round in a random order."""
    faults = []
    for kind, step, nth in FIRST_FAULTS:
        if len(faults) < count and step in steps:
            faults.append((kind, step, min(nth, steps[step]) or rng.randint(1, steps[step])))
    combos = []
    for step in sorted(s for s in steps if s in STEPS):
        for kind in REST_KINDS:
            combos.append((kind, step))
    while len(faults) < count:
        rng.shuffle(combos)
        for kind, step in combos:
            if len(faults) >= count:
                break
            faults.append((kind, step, rng.randint(1, steps[step])))
    return faults


def make_server(workdir, db=None):
    """The real Placement a suite runs against: SQLite behind threaded wsgiref (``db`` None), or
    ``db`` ('mariadb', 'postgresql') behind gunicorn with 4 workers, as production runs it."""
    if db in (None, 'sqlite'):
        return PlacementServer(workdir=workdir)
    return PlacementServer.production(db=db, workers=4, workdir=workdir)


def run_rest_faults(workdir, faults=20, seed=2, timeout=1.0, log=None, db=None):
    """Figure (b), REST: ``faults`` reshapes, each with one fault injected by the proxy in
    front of a real Placement of its own (killed and restarted by the ``kill`` faults); ``db``:
    its database (:func:`make_server`)."""
    from fault_proxy import FaultProxy

    rng = random.Random(seed)
    figures = new_figures('(b) injected faults on the REST path, real Placement 16.0.0 (%s) behind a fault proxy'
                          % (db or 'sqlite'), notes={})
    start = time.time()
    server = make_server(os.path.join(workdir, 'placement'), db)
    server.start()
    proxy = FaultProxy(lambda: server.url, restart=server.restart, client_timeout=timeout)
    proxy.start()
    try:
        steps = rest_steps(proxy, server, workdir)
        figures['notes'].update(dict(('requests_%s' % k, v) for k, v in steps.items()))
        for trial, (kind, step, nth) in enumerate(plan_rest_faults(steps, faults, rng)):
            name = 'rel-b-%d-%04d' % (seed, trial)
            direct = RestBackend(server.adapter())
            try:
                node = build_node(direct, os.path.join(workdir, name), name)
                baseline = snapshot_node(direct, node)
            finally:
                direct.close()
            client = _rest_client(proxy.url, timeout)
            proxy.reset()
            proxy.arm(kind, step, nth)
            error = None
            try:
                reshaper.reshape_node(client, name, node['report'], snapshot_dir=node['snapdir'])
            except errors.PlacementError as exc:
                error = _err(exc)
            finally:
                client.close()
            proxy.wait_idle(timeout * 3 + 30)
            fired = proxy.fired
            proxy.disarm()
            direct = RestBackend(server.adapter())
            try:
                verdict = classify(direct, node, baseline)
                again = rerun(direct, node, baseline)
            finally:
                direct.close()
            if not fired:
                _count(figures['notes'], 'not_reached')
            record(figures, verdict, again, kind=kind if fired else None, step=step if fired else None,
                   error=error, label='seed %d trial %d (%s): %s at %s #%d' % (seed, trial, name, kind, step, nth))
            if log:
                log('(b) trial %d %s at %s #%d%s: %s%s' % (
                    trial, kind, step, nth, '' if fired else ' (not reached)', brief(verdict, again),
                    '; reshape_node raised %s' % error[:160] if error else ''))
        # Placement's own answers, from its log (the proxy's injected 5xx never reach it)
        counts = server.deadlock_counts() if hasattr(server, 'deadlock_counts') else {}
        figures['notes'].update({'placement_500s': count_500s(server), 'db_deadlocks': counts.get('deadlocks'),
                                 'placement_db_retries': counts.get('retries')})
    finally:
        proxy.stop()
        server.stop()
    figures['seconds'] = time.time() - start
    return figures


# ---------------------------------------------------------------------------
# (b) SIGKILL on the embedded path

_CHILD = r'''
import json, os, signal, sqlite3, sys, time
args = json.loads(sys.argv[1])
kill_at = args['kill_at']
count = [0]
trace = []
real_connect = sqlite3.connect


def traced(stmt):
    count[0] += 1
    if args.get('trace'):
        trace.append(stmt.split(None, 3)[:3])
    if kill_at and count[0] == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)


def connect(*a, **kw):
    conn = real_connect(*a, **kw)
    conn.set_trace_callback(traced)
    return conn


sqlite3.connect = connect
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend
with open(args['report']) as fh:
    report = json.load(fh)
sys.stdout.write('ready\n')
sys.stdout.flush()
began = time.time()
backend = EmbeddedBackend(args['db'])
result = reshaper.reshape_node(backend, args['name'], report, snapshot_dir=args['snapdir'])
backend.close()
sys.stdout.write(json.dumps({'count': count[0], 'status': result['status'], 'trace': trace,
                             'seconds': time.time() - began}) + '\n')
sys.stdout.flush()
'''


def _child_env():
    env = dict(os.environ)
    paths = [p for p in sys.path if p and os.path.isdir(p)]
    env['PYTHONPATH'] = os.pathsep.join(paths)
    return env


def _copy_store(src, dst):
    for suffix in ('', '-wal', '-shm'):
        if os.path.exists(dst + suffix):
            os.unlink(dst + suffix)
        if os.path.exists(src + suffix):
            shutil.copy2(src + suffix, dst + suffix)


def _phases(trace):
    """Label every SQL statement of a reshape by the step it belongs to."""
    labels = []
    txn = []
    txns = []
    for stmt in trace:
        txn.append(stmt)
        word = (stmt[0] if stmt else '').upper()
        if word in ('COMMIT', 'ROLLBACK') or (len(txn) == 1 and word != 'BEGIN'):
            txns.append(txn)
            txn = []
    if txn:
        txns.append(txn)
    seen_reshape = False
    for txn in txns:
        text = ' '.join(' '.join(s) for s in txn).upper()
        if 'INSERT INTO ALLOCATIONS' in text or 'DELETE FROM ALLOCATIONS' in text:
            label = 'reshape'
            seen_reshape = True
        elif 'INSERT INTO PROVIDERS' in text:
            label = 'child'
        elif 'PROVIDER_TRAITS' in text and ('INSERT' in text or 'DELETE' in text):
            label = 'trait'
        elif 'CREATE' in text or 'PRAGMA' in text:
            label = 'open'
        else:
            label = 'verify' if seen_reshape else 'read'
        labels.extend([label] * len(txn))
    return labels


def run_embedded_kills(workdir, kills=20, seed=3, log=None):
    """Figure (b), embedded: ``kills`` processes reshaping a copy of one embedded store,
    each SIGKILLed at a random point (half at SQL statement k, half after a random delay)."""
    rng = random.Random(seed)
    figures = new_figures('(b) SIGKILL of a process reshaping the embedded store', notes={})
    start = time.time()
    name = 'rel-e-node'
    template = os.path.join(workdir, 'template.db')
    report_path = os.path.join(workdir, 'report.json')
    backend = EmbeddedBackend(template)
    try:
        node = build_node(backend, os.path.join(workdir, 'node'), name)
        baseline = snapshot_node(backend, node)
    finally:
        backend.close()
    with open(report_path, 'w') as fh:
        json.dump(node['report'], fh)
    env = _child_env()

    def child(db, snapdir, kill_at, trace=False):
        arg = json.dumps({'db': db, 'snapdir': snapdir, 'name': name, 'report': report_path,
                          'kill_at': kill_at, 'trace': trace})
        return subprocess.Popen([sys.executable, '-c', _CHILD, arg], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env, universal_newlines=True)

    # dry run: how many statements, which step each belongs to, how long the reshape takes
    dry_db = os.path.join(workdir, 'dry.db')
    _copy_store(template, dry_db)
    proc = child(dry_db, os.path.join(workdir, 'dry-snap'), 0, trace=True)
    out, err = proc.communicate(timeout=120)
    if proc.returncode != 0:
        raise RuntimeError('dry run failed: %s' % err)
    dry = json.loads(out.strip().splitlines()[-1])
    # measured in the child (the parent may read both lines at once on a loaded machine)
    duration = dry['seconds']
    labels = _phases(dry['trace'])
    figures['notes'].update({'statements': dry['count'], 'reshape_ms': int(duration * 1000)})
    trial = 0
    # every other kill at a random SQL statement, the others after a random delay; a delayed
    # kill that comes after the run finished is a normal run (counted, not a fault)
    while figures['faults'] < kills and trial < 3 * kills:
        db = os.path.join(workdir, 'trial.db')
        _copy_store(template, db)
        snapdir = os.path.join(workdir, 'snap-%04d' % trial)
        if trial % 2 == 0:
            kill_at = rng.randint(1, dry['count'])
            if trial % 6 == 0 and 'reshape' in labels:
                # a third of them at the reshape's own transaction: its statements, its COMMIT,
                # the first statement after it
                first = labels.index('reshape')
                last = len(labels) - labels[::-1].index('reshape')
                kill_at = rng.randint(first + 1, min(last + 1, dry['count']))
            step = labels[kill_at - 1] if kill_at - 1 < len(labels) else 'end'
            kind = 'sigkill_at_statement'
            proc = child(db, snapdir, kill_at)
            out, err = proc.communicate(timeout=120)
        else:
            delay = rng.uniform(0, duration)
            kind = 'sigkill_after_delay'
            step = 'delay_q%d' % min(4, 1 + int(4 * delay / duration))
            proc = child(db, snapdir, 0)
            proc.stdout.readline()
            time.sleep(delay)
            proc.send_signal(signal.SIGKILL)
            out, err = proc.communicate(timeout=120)
        killed = proc.returncode == -signal.SIGKILL
        if not killed:
            _count(figures['notes'], 'finished_before_kill')
        store = EmbeddedBackend(db)
        try:
            verdict = classify(store, node_for(node, snapdir), baseline)
            again = rerun(store, node_for(node, snapdir), baseline)
        finally:
            store.close()
        error = None if killed or proc.returncode == 0 else 'exit %s: %s' % (proc.returncode, err[-300:])
        record(figures, verdict, again, kind=kind if killed else None, step=step if killed else None,
               error=error, label='seed %d trial %d: %s (%s)' % (seed, trial, kind, step))
        if log:
            log('(b-embedded) trial %d %s at %s%s: %s' % (
                trial, kind, step, '' if killed else ' (finished first)', brief(verdict, again)))
        trial += 1
    figures['seconds'] = time.time() - start
    return figures


def node_for(node, snapdir):
    out = dict(node)
    out['snapdir'] = snapdir
    return out


# ---------------------------------------------------------------------------
# (c) the rolling playbook, serial 10 / forks 10, embedded store

def _store_ledger(backend):
    """{consumer: {(provider name, rc): units}} and usage mismatches over the whole store."""
    names = {}
    consumers = set()
    mismatches = []
    for prov in backend.list_providers():
        names[prov['uuid']] = prov['name']
        allocs = backend.get_provider_allocations(prov['uuid'])['allocations']
        consumers.update(allocs)
        inv = backend.get_inventories(prov['uuid'])['inventories']
        usages = backend.get_usages(prov['uuid'])['usages'] if inv else {}
        summed = {}
        for entry in allocs.values():
            for rc, n in entry['resources'].items():
                summed[rc] = summed.get(rc, 0) + n
        for rc in set(usages) | set(summed):
            if usages.get(rc, 0) != summed.get(rc, 0):
                mismatches.append('%s %s: usage %s, allocations %s' % (
                    prov['name'], rc, usages.get(rc, 0), summed.get(rc, 0)))
    totals = {}
    for consumer in consumers:
        totals[consumer] = totals_of(backend.get_allocations(consumer))
    return totals, mismatches


def _fleet_expected(fleet, before):
    """The fleet's ledger after the roll, from the fleet's own description: unchanged, except
    the SR-IOV/pinned node's healing (each guest gains its PCI devices' units) and its pinned
    guests' VCPU, which becomes PCPU (nova's Train reshape)."""
    expected = copy.deepcopy(before)
    for node in fleet['nodes']:
        if fleet['expected'].get(node['name']) != 'reshaped':
            continue
        for guest, units in simfleet.pci_held_units(node).items():
            consumer = node['instances'][guest]
            for rc, n in units.items():
                expected.setdefault(consumer, {})[rc] = expected.get(consumer, {}).get(rc, 0) + n
        for inst in node['spec'].get('instances', []):
            if inst.get('pinned_cpus'):
                consumer = node['instances'][inst['name']]
                held = expected.get(consumer, {})
                if 'VCPU' in held:
                    held['PCPU'] = held.get('PCPU', 0) + held.pop('VCPU')
    return expected


def _run_playbook(fleet, serial, forks, timeout=1800, limit=None, tag=''):
    proc, began = _start_playbook(fleet, serial, forks, limit=limit, tag=tag)
    try:
        output = proc.communicate(timeout=timeout)[0]
    except subprocess.TimeoutExpired:
        proc.kill()
        output = proc.communicate()[0]
    return proc.returncode, output, time.time() - began


def _start_playbook(fleet, serial, forks, limit=None, tag=''):
    """``ansible-playbook rolling_reshape.yml`` over the fleet, started (``(process, start time)``);
    ``limit``: hosts pattern; ``tag``: a roll's own snapshot and report folders (two rolls at once)."""
    out = fleet['out_dir']
    link_parent = os.path.join(out, 'collections', 'ansible_collections', 'placement')
    if not os.path.isdir(link_parent):
        os.makedirs(link_parent)
        os.symlink(REPO, os.path.join(link_parent, 'upgrade'))
    env = dict(os.environ)
    env.update({
        'ANSIBLE_COLLECTIONS_PATH': os.path.join(out, 'collections'),
        'ANSIBLE_FORKS': str(forks),
        'ANSIBLE_NOCOLOR': '1',
        'ANSIBLE_FORCE_COLOR': '0',
        'ANSIBLE_RETRY_FILES_ENABLED': '0',
        'ANSIBLE_HOME': os.path.join(out, '.ansible'),
        'ANSIBLE_LOCAL_TEMP': os.path.join(out, '.ansible', 'tmp'),
        'ANSIBLE_PYTHON_INTERPRETER': sys.executable,
    })
    env.pop('ANSIBLE_CONFIG', None)
    extra = {'rolling_reshape_snapshot_dir': os.path.join(out, 'snapshots' + tag),
             'rolling_reshape_report_dir': os.path.join(out, 'reports' + tag),
             'rolling_reshape_serial': serial}
    args = [os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), '-i', fleet['inventory'],
            os.path.join(REPO, 'playbooks', 'rolling_reshape.yml'), '-e', json.dumps(extra)]
    if limit:
        args += ['--limit', limit]
    began = time.time()
    proc = subprocess.Popen(args, env=env, cwd=out, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            universal_newlines=True)
    return proc, began


def _fleet_verdicts(fleet, store):
    """{node: {"in_layout", "verified", "msg"}} for every node of the fleet after the roll.

    ``in_layout``: the planner has nothing left to do on the node (a check-mode reshape says
    noop, or deferred for a node with a move in flight); ``verified``: ``verify_node``
    (``state: verified``) passes.
    """
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import discovery
    out = {}
    for node in fleet['nodes']:
        devices = discovery.discover(node['sysfs_root'], domain_xml_glob=node['domain_xml_glob'],
                                     hostname=node['provider'], nova_conf=node.get('nova_conf'),
                                     domain_capabilities=node.get('domain_capabilities'))
        entry = {'in_layout': False, 'verified': False, 'msg': ''}
        try:
            planned = reshaper.reshape_node(store, node['provider'], devices, check_mode=True)
            entry['in_layout'] = planned['status'] in (reshaper.STATUS_NOOP, reshaper.STATUS_DEFERRED)
            entry['planned'] = planned['status']
        except errors.PlacementError as exc:
            entry['msg'] = 'plan: %s' % exc
        try:
            result = reshaper.verify_node(store, node['provider'], devices)
            entry['verified'] = bool(result['verified'])
            if not entry['verified']:
                entry['msg'] = result['msg']
        except errors.PlacementError as exc:
            entry['msg'] = 'verify_node: %s' % exc
        out[node['name']] = entry
    return out


def _ledger_diff(expected, after):
    """``(lost, doubled, details)``: the (consumer, class) pairs holding fewer / more units than expected."""
    lost = doubled = 0
    details = []
    for consumer in sorted(set(expected) | set(after)):
        got, want = after.get(consumer, {}), expected.get(consumer, {})
        for cls in set(got) | set(want):
            if got.get(cls, 0) < want.get(cls, 0):
                lost += 1
                details.append('consumer %s %s: %s < %s' % (consumer, cls, got.get(cls, 0), want.get(cls, 0)))
            elif got.get(cls, 0) > want.get(cls, 0):
                doubled += 1
                details.append('consumer %s %s: %s > %s' % (consumer, cls, got.get(cls, 0), want.get(cls, 0)))
    return lost, doubled, details


def run_fleet(workdir, nodes=20, serial=10, forks=10, rerun=True, log=None):
    """Figure (c): the rolling playbook over a simulated fleet on the embedded store, then
    (``rerun``) the same playbook again; the whole store's ledger before and after each."""
    figures = new_figures('(c) rolling playbook, serial %d / forks %d, embedded store, %d nodes'
                          % (serial, forks, nodes), notes={})
    start = time.time()
    fleet = simfleet.build(os.path.join(workdir, 'fleet'), nodes=nodes)
    with EmbeddedBackend(fleet['embedded_db']) as store:
        before_trees = dict((n['name'], provider_tree_state(store, n['uuid'])) for n in fleet['nodes'])
        before, before_mismatch = _store_ledger(store)
    expected = _fleet_expected(fleet, before)
    runs = []
    for attempt in ('roll', 'rerun') if rerun else ('roll',):
        rc, output, seconds = _run_playbook(fleet, serial, forks)
        locked = len(re.findall(r'database (is )?locked|is locked by another process', output))
        with open(os.path.join(fleet['out_dir'], 'reports', 'latest', 'summary.json')) as fh:
            summary = json.load(fh)
        statuses = dict((n['node'], n['status']) for n in summary['nodes'])
        with EmbeddedBackend(fleet['embedded_db']) as store:
            after, mismatches = _store_ledger(store)
            verified = _fleet_verdicts(fleet, store)
            trees = dict((n['name'], provider_tree_state(store, n['uuid'])) for n in fleet['nodes'])
        lost, doubled, details = _ledger_diff(expected, after)
        outcomes = {}
        not_verified = []
        for node in fleet['nodes']:
            want = fleet['expected'][node['name']]
            check = verified[node['name']]
            if want in ('reshaped', 'noop'):
                # (verified: a rerun found the node a killed pass reshaped in the layout and matching its snapshot)
                outcome = RESHAPED if check['in_layout'] and statuses.get(node['name']) in (
                    'reshaped', 'noop', 'verified') and check.get('planned') == reshaper.STATUS_NOOP else PARTIAL
                if not check['verified']:
                    not_verified.append('%s (%s): %s' % (node['name'], node['kind'], check['msg'][:300]))
            else:
                same = _tree_view(trees[node['name']]) == _tree_view(before_trees[node['name']])
                outcome = UNTOUCHED if same and statuses.get(node['name']) == want else PARTIAL
            outcomes[node['name']] = outcome
            if outcome == PARTIAL:
                details.append('node %s (%s): expected %s, roll said %s, plan now %s %s' % (
                    node['name'], node['kind'], want, statuses.get(node['name']), check.get('planned'),
                    check['msg'][:300]))
        runs.append({'rc': rc, 'seconds': round(seconds, 1), 'locked': locked, 'lost': lost, 'doubled': doubled,
                     'not_verified': not_verified,
                     'mismatched': len(mismatches), 'outcomes': outcomes, 'statuses': statuses,
                     'details': details + mismatches, 'tail': output[-3000:] if rc else ''})
        if log:
            log('(c) %s: rc %s in %.0f s, lost %d doubled %d mismatched %d, locked messages %d' % (
                attempt, rc, seconds, lost, doubled, len(mismatches), locked))
    roll = runs[0]
    again = runs[-1] if rerun else {'rc': None, 'seconds': None, 'locked': 0, 'lost': 0, 'doubled': 0,
                                    'mismatched': 0, 'outcomes': {}, 'statuses': {}, 'not_verified': [],
                                    'details': [], 'tail': ''}
    figures['trials'] = nodes
    for name, outcome in roll['outcomes'].items():
        _count(figures['outcomes'], outcome)
    figures['lost'] = roll['lost'] + again['lost']
    figures['doubled'] = roll['doubled'] + again['doubled']
    figures['mismatched'] = roll['mismatched'] + again['mismatched'] + len(before_mismatch)
    if rerun:
        converged = again['rc'] == 0 and all(o != PARTIAL for o in again['outcomes'].values()) and not (
            again['lost'] or again['doubled'] or again['mismatched'])
        figures['rerun_converged'] = nodes if converged else 0
        figures['rerun_failed'] = 0 if converged else nodes
    figures['rerun_run'] = rerun
    figures['notes'].update({
        'playbook_rc': roll['rc'], 'roll_seconds': roll['seconds'],
        'database_locked_messages': roll['locked'] + again['locked'], 'consumers': len(before),
        'statuses': ' '.join('%s=%d' % (s, list(roll['statuses'].values()).count(s))
                             for s in sorted(set(roll['statuses'].values()))),
    })
    if rerun:
        figures['notes'].update({
            'rerun_rc': again['rc'], 'rerun_seconds': again['seconds'],
            'rerun_statuses': ' '.join('%s=%d' % (s, list(again['statuses'].values()).count(s))
                                       for s in sorted(set(again['statuses'].values())))})
    if roll['rc'] != 0:
        figures['run_errors']['playbook rc %s' % roll['rc']] = 1
    for run, label in ((roll, 'roll'), (again, 'rerun')):
        if run['details'] or run['rc']:
            figures['defects'].append({'trial': label, 'details': run['details'][:20], 'tail': run['tail']})
    # verify_node (the module's state: verified) on every node the roll left in the layout:
    # printed, and a defect of its own (not a lost/doubled/mismatched allocation)
    figures['verify_node_failed'] = sorted(set(again['not_verified']) | set(roll['not_verified']))
    figures['seconds'] = time.time() - start
    return figures


def _tree_view(state):
    names = dict((u, p['name']) for u, p in state['providers'].items())
    providers = dict((p['name'], (names.get(p.get('parent_provider_uuid')), norm_inventories(p['inventories']),
                                  p['usages'], p['traits']))
                     for p in state['providers'].values())
    allocations = dict((c, dict((names.get(rp, rp), e['resources']) for rp, e in b['allocations'].items()))
                       for c, b in state['allocations'].items())
    return providers, allocations


def run_rolls(server, workdir, nodes=40, serial=10, forks=10, rolls=1, seed=7, log=None):
    """The rolling playbook over a simulated fleet seeded into a REAL Placement (``server``: a
    started :class:`PlacementServer`, e.g. MariaDB behind gunicorn with 4 workers): one roll at
    ``serial`` / ``forks``, or ``rolls`` = 2 concurrent rolls on disjoint halves of the fleet, each
    with its own snapshot and report folders.  Every node shares the fleet's one DISK_GB pool, so
    every reshape rewrites allocations on it.  Then the whole Placement's ledger: every consumer's
    totals against the fleet's (nothing lost, nothing doubled), usages against allocations, every
    node's outcome against the fleet's expected one (the outcome a single-fork roll gives)."""

    label = '%s roll%s, serial %s / forks %d, %s, %d nodes' % (
        'one' if rolls == 1 else '%d concurrent' % rolls, '' if rolls == 1 else 's', serial, forks,
        getattr(server, 'db_kind', 'real Placement'), nodes)
    figures = new_figures(label, notes={})
    start = time.time()
    backend = RestBackend(server.adapter())
    try:
        fleet = simfleet.build(os.path.join(workdir, 'fleet'), nodes=nodes, seed=seed, backend=backend,
                               inventory_vars={'placement_backend': server.module_auth()})
        before_trees = dict((n['name'], provider_tree_state(backend, n['uuid'])) for n in fleet['nodes'])
        before, before_mismatch = _store_ledger(backend)
        names = [n['name'] for n in fleet['nodes']]
        limits = [None] if rolls == 1 else [','.join(names[i::rolls]) for i in range(rolls)]
        began = time.time()
        procs = [_start_playbook(fleet, serial, forks, limit=limit, tag='' if rolls == 1 else '-%d' % i)[0]
                 for i, limit in enumerate(limits)]
        outputs = [proc.communicate()[0] for proc in procs]
        seconds = time.time() - began
        rcs = [proc.returncode for proc in procs]
        statuses, retries, resent, deadlock_409, reasons = {}, {}, {}, {}, {}
        for i in range(len(limits)):
            tag = '' if rolls == 1 else '-%d' % i
            path = os.path.join(fleet['out_dir'], 'reports' + tag, 'latest', 'summary.json')
            if not os.path.exists(path):
                # the playbook ended before any report (its pre-flight play, say): say what it printed
                raise AssertionError('roll %d (rc %s) wrote no report %s; the end of its output:\n%s'
                                     % (i, rcs[i], path, '\n'.join((outputs[i] or '').splitlines()[-60:])))
            with open(path) as fh:
                summary = json.load(fh)
            for entry in summary['nodes']:
                statuses[entry['node']] = entry['status']
                reasons[entry['node']] = str(entry.get('reason') or '')
                retries[entry['node']] = int(entry.get('retries') or 0)
                # what the node's warnings say of POST /reshaper sent again (settled: a lost answer,
                # Placement's deadlock-retry 409)
                settled = [str(w) for w in entry.get('warnings') or []
                           if 'a re-read showed it' in str(w) and not str(w).startswith('POST /reshaper sent again')]
                resent[entry['node']] = len([w for w in settled if 'it was applied' not in w])
                deadlock_409[entry['node']] = len([w for w in settled if 'after a database deadlock' in w])
        after, mismatches = _store_ledger(backend)
        verified = _fleet_verdicts(fleet, backend)
        trees = dict((n['name'], provider_tree_state(backend, n['uuid'])) for n in fleet['nodes'])
    finally:
        backend.close()
    # the ledger a node's own outcome implies: a node the roll did not reshape (failed, not
    # reached) keeps its guests' totals, without the healing and the VCPU -> PCPU of a reshape
    # (its outcome is counted apart: a failed node is not a lost allocation)
    expected = _fleet_expected(dict(fleet, expected=dict(
        (name, want if statuses.get(name) in ('reshaped', 'noop', 'verified') else 'untouched')
        for name, want in fleet['expected'].items())), before)
    counts = server.deadlock_counts() if hasattr(server, 'deadlock_counts') else {}
    figures['notes'].update({'placement_db_retries': counts.get('retries'), 'db_deadlocks': counts.get('deadlocks'),
                             'placement_500s': count_500s(server)})
    lost, doubled, details = _ledger_diff(expected, after)
    for node in fleet['nodes']:
        want, check = fleet['expected'][node['name']], verified[node['name']]
        said = statuses.get(node['name'])
        same = _tree_view(trees[node['name']]) == _tree_view(before_trees[node['name']])
        if want in ('reshaped', 'noop') and said in ('reshaped', 'noop', 'verified'):
            ok = check['in_layout'] and check.get('planned') == reshaper.STATUS_NOOP
            outcome = RESHAPED if ok else PARTIAL
            if not check['verified']:
                details.append('node %s: verify_node: %s' % (node['name'], check['msg'][:300]))
        else:
            # not reshaped (deferred as expected, or failed / not reached): untouched, or a defect;
            # an empty child a failed pass left is counted apart (its message must name it)
            left = _empty_children_left(before_trees[node['name']], trees[node['name']])
            outcome = UNTOUCHED if same or left is not None else PARTIAL
            if left:
                figures['leftover_children'] += len(left)
                figures['trials_with_leftovers'] += 1
                # the node's reason in the report: its failure's message, which must name each one
                figures['leftover_unnamed'] += len([c for c in left if c not in reasons.get(node['name'], '')])
                details.append('node %s: empty child provider(s) left: %s' % (node['name'], ', '.join(left)))
        _count(figures['outcomes'], outcome)
        if outcome == PARTIAL or said != want and not (want == 'noop' and said == 'reshaped') \
                and not (want in ('reshaped', 'noop') and said == 'verified'):
            details.append('node %s (%s): expected %s, roll said %s, plan now %s %s' % (
                node['name'], node['kind'], want, said, check.get('planned'), check['msg'][:300]))
    failed = sorted(n for n, s in statuses.items() if s == 'failed')
    figures['trials'] = nodes
    figures['rerun_run'] = False
    figures['lost'], figures['doubled'] = lost, doubled
    figures['mismatched'] = len(mismatches) + len(before_mismatch)
    figures['notes'].update({
        'playbook_rc': ' '.join(str(rc) for rc in rcs), 'roll_seconds': round(seconds, 1),
        'nodes_per_minute': round(nodes * 60.0 / seconds, 1) if seconds else None,
        'failed_nodes': len(failed), 'retries': sum(retries.values()), 'resent': sum(resent.values()),
        'max_retries_on_a_node': max(retries.values() or [0]),
        'deadlock_409_settled': sum(deadlock_409.values()),
        'statuses': ' '.join('%s=%d' % (s, list(statuses.values()).count(s)) for s in sorted(set(statuses.values()))),
    })
    for rc, output in zip(rcs, outputs):
        if rc:
            figures['run_errors']['playbook rc %s' % rc] = figures['run_errors'].get('playbook rc %s' % rc, 0) + 1
            details.append('playbook rc %s: %s' % (rc, output[-2000:]))
    if details or mismatches:
        figures['defects'].append({'trial': label, 'details': (details + mismatches)[:30], 'tail': ''})
    figures['seconds'] = time.time() - start
    if log:
        log('%s: rc %s in %.0f s, %s; lost %d doubled %d mismatched %d; retries %d (max %d on a node)' % (
            label, figures['notes']['playbook_rc'], seconds, figures['notes']['statuses'], lost, doubled,
            figures['mismatched'], figures['notes']['retries'], figures['notes']['max_retries_on_a_node']))
    return figures


def count_500s(server):
    """Answers 500 in the server's log (gunicorn's access log or wsgiref's request lines), or None."""
    path = getattr(server, 'log_path', None)
    if not path or not os.path.exists(path):
        return None
    with open(path, 'rb') as fh:
        text = fh.read().decode('utf-8', 'replace')
    # placement's request log: '... "POST /reshaper" status: 500 len: ...'
    return len(re.findall(r'status: 500\b', text))


def _empty_children_left(before, after):
    """The names of the providers ``after`` has in addition to ``before``, when they are all
    empty (no inventory, no usage, no allocation) and everything else is as before; else None."""
    names = dict((u, p['name']) for u, p in after['providers'].items())
    extra = [u for u in after['providers'] if u not in before['providers']]
    if any(after['providers'][u].get('inventories') or any((after['providers'][u].get('usages') or {}).values())
           for u in extra):
        return None
    pruned = dict(after, providers=dict((u, p) for u, p in after['providers'].items() if u not in extra))
    if _tree_view(pruned) != _tree_view(before):
        return None
    return sorted(names[u] for u in extra)
