# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Embedded SQLite placement vs the real Placement over REST: the same operations, one run.

Usage (from the repository root)::

    make bench                                   # full run, about 2-3 minutes on 2 cores
    make bench BENCH_ARGS=--quick                # about 30 s
    .venv/bin/python benchmarks/bench_backends.py [--quick] [--json FILE]
        [--placement-db-url URL] [--only OP[,OP...]] [--no-contention] [--no-module]
    .venv/bin/python benchmarks/bench_backends.py --compare run1.json run2.json

Every operation runs through the collection's one backend interface
(``plugins/module_utils/_placement/backends/base.py``), against

* ``EmbeddedBackend`` on a SQLite file in a temp dir (default options, the ones the
  modules use: WAL, ``synchronous=FULL``), and
* ``RestBackend`` opened exactly as a module opens it (``RestBackend.from_options`` with
  ``auth_type: admin_token``: openstacksdk + keystoneauth) on the REAL Placement 16.0.0
  that ``tests/placement_server.py`` starts on 127.0.0.1 (SQLite unless
  ``--placement-db-url``), sharing this machine's cores with the client.

Only the operation itself is inside ``time.perf_counter()``; the setup each iteration
needs (providers, inventories, consumers) is done before the clock starts.  After the
timed iterations every operation checks (untimed) that it did what it should, so a figure
is never printed for an operation that silently did nothing.  ``calls/op`` is the number of
backend calls (= HTTP requests for REST) in the timed section, counted in the warm-up.

Then the contention table: N processes (1, 2, 4) each run read-compute-write increments of
one provider's VCPU total through ``retry.with_conflict_retry`` (the modules' default
attempts and backoff) for a fixed time, on one embedded SQLite file and on the real
Placement; ops/s, conflict retries and give-ups, and a lost-update check (final total ==
initial + successful increments).

This is a measurement tool, not a test: nothing here passes or fails on timing.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import gc
import json
import math
import multiprocessing
import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
import uuid

_HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(_HERE)
sys.path.insert(0, os.path.join(REPO, 'tests'))  # placement_server (reused, not copied)

try:
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends import base as _backend
    from ansible_collections.placement.upgrade.plugins.module_utils._placement import errors, retry
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.rest import RestBackend
except ImportError as _exc:  # pragma: no cover - wrong interpreter
    sys.stderr.write('bench_backends: cannot import the collection (%s).\nRun it with the project venv: '
                     '`make bench` or `.venv/bin/python benchmarks/bench_backends.py`.\n' % _exc)
    sys.exit(2)

from placement_server import PlacementServer  # noqa: E402  (tests/placement_server.py)

PROJECT = '6b6f5c1e-6a4a-4d6f-9a3b-5d1f3c3e2a10'
USER = '0d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d'
SHARING_TRAIT = 'MISC_SHARES_VIA_AGGREGATE'
GPU_ADDRESSES = ('0000:84:00.0', '0000:85:00.0')
# the reshape scenario: VGPU 8 on the root, 3 consumers holding 3 + 3 + 2, two GPUs of 4
# consumer index -> {GPU index: mdevs held}
VGPU_OWNERSHIP = ({0: 3}, {0: 1, 1: 2}, {1: 2})

# per operation: (iterations full, iterations quick)
ITERATIONS = {
    'fresh_process': (8, 3),
    'open_backend': (40, 10),
    'create_tree': (60, 15),
    'put_inventories': (80, 20),
    'put_allocations_new': (80, 20),
    'move_consumer': (80, 20),
    'provider_tree_state': (40, 10),
    'reshape_post': (25, 5),
    'reshape_node': (15, 3),
}
WARMUP = (3, 1)
MODULE_ITERATIONS = (6, 2)
CONTENTION_PROCS = (1, 2, 4)
CONTENTION_SECONDS = (5.0, 1.0)


class BenchError(Exception):
    """An operation did not do what it should: its figures are not reported."""


def _uid():
    return str(uuid.uuid4())


def _name(prefix):
    return 'bench-%s-%s' % (prefix, uuid.uuid4().hex[:12])


def _inv(total, **kw):
    rec = {'total': total}
    rec.update(kw)
    return rec


def _check(cond, message):
    if not cond:
        raise BenchError(message)


# ---------------------------------------------------------------------------
# backends


class Backends(object):
    """Opens the two backends the way the modules do."""

    def __init__(self, workdir, server):
        self.workdir = workdir
        self.server = server
        self.embedded_path = os.path.join(workdir, 'embedded.db')

    def rest_options(self):
        return self.server.module_auth()

    def open(self, kind):
        if kind == 'embedded':
            return EmbeddedBackend(self.embedded_path)
        return RestBackend.from_options(self.rest_options())


class CountingBackend(object):
    """Proxy counting the backend calls made while ``counting`` is set."""

    def __init__(self, inner):
        self._inner = inner
        self.counting = False
        self.calls = 0

    def __getattr__(self, name):
        attr = getattr(self._inner, name)
        if name.startswith('_') or not callable(attr):
            return attr

        def call(*args, **kwargs):
            if self.counting:
                self.calls += 1
            return attr(*args, **kwargs)
        return call


# ---------------------------------------------------------------------------
# scenario building blocks (untimed setup)


def make_sharing_provider(be, disk_total=1000000):
    """A DISK_GB sharing pool (trait MISC_SHARES_VIA_AGGREGATE, one aggregate)."""
    rp = be.create_provider(_name('share'))
    gen = be.set_inventories(rp['uuid'], rp['generation'],
                             {'DISK_GB': _inv(disk_total)})['resource_provider_generation']
    gen = be.set_aggregates(rp['uuid'], gen, [_uid()])['resource_provider_generation']
    be.set_provider_traits(rp['uuid'], gen, [SHARING_TRAIT])
    return rp['uuid']


def make_node(be, vgpu=0, vcpu=1024, memory_mb=1048576):
    """A compute node root provider with VCPU / MEMORY_MB (and flat VGPU when given)."""
    rp = be.create_provider(_name('cn'))
    inv = {'VCPU': _inv(vcpu, allocation_ratio=4.0), 'MEMORY_MB': _inv(memory_mb, reserved=512)}
    if vgpu:
        inv['VGPU'] = _inv(vgpu, max_unit=vgpu)
    be.set_inventories(rp['uuid'], rp['generation'], inv)
    return be.get_provider(rp['uuid'])


def alloc_body(allocations, generation=None):
    return {'allocations': allocations, 'project_id': PROJECT, 'user_id': USER,
            'consumer_generation': generation, 'consumer_type': 'INSTANCE'}


def node_allocs(root, share, vgpu=0, vcpu=2, memory_mb=2048, disk_gb=20):
    res = {'VCPU': vcpu, 'MEMORY_MB': memory_mb}
    if vgpu:
        res['VGPU'] = vgpu
    return {root: {'resources': res}, share: {'resources': {'DISK_GB': disk_gb}}}


def make_vgpu_node(be, share):
    """The reshape scenario's node: flat VGPU 8 on the root, 3 consumers using 3 + 3 + 2."""
    root = make_node(be, vgpu=8)
    consumers = []
    for owned in VGPU_OWNERSHIP:
        consumer = _uid()
        be.put_allocations(consumer, alloc_body(node_allocs(root['uuid'], share, vgpu=sum(owned.values()))))
        consumers.append(consumer)
    return be.get_provider(root['uuid']), consumers


def gpu_child_name(root_name, address):
    # nova's name for a physical GPU's child (layout.py's default template)
    return '%s_pci_%s' % (root_name, address.replace(':', '_').replace('.', '_'))


def device_report(root_name, consumers):
    """The device report discovery would return for the reshape scenario's node."""
    gpus = []
    for index, address in enumerate(GPU_ADDRESSES):
        mdevs = []
        for consumer, owned in zip(consumers, VGPU_OWNERSHIP):
            for _unit in range(owned.get(index, 0)):
                mdevs.append({'uuid': _uid(), 'type': 'nvidia-222', 'instance_uuid': consumer})
        gpus.append({
            'address': address, 'vendor_id': '10de', 'product_id': '1eb8', 'class_id': '030200',
            'numa_node': index, 'physfn': None,
            'mdev_types': {'nvidia-222': {'name': 'GRID T4-2Q', 'available_instances': 4 - len(mdevs),
                                          'device_api': 'vfio-pci', 'description': ''}},
            'mdevs': mdevs,
        })
    instances = {}
    for n, consumer in enumerate(consumers):
        held = [m['uuid'] for g in gpus for m in g['mdevs'] if m['instance_uuid'] == consumer]
        instances[consumer] = {'name': 'instance-%08x' % (n + 1), 'mdevs': held, 'pci_addresses': [],
                               'source': '/etc/libvirt/qemu/instance-%08x.xml' % (n + 1)}
    return {'hostname': root_name, 'sysfs_root': '/sys', 'gpus': gpus, 'sriov_pfs': [],
            'pci_devices': [], 'numa_cells': [], 'instances': instances, 'warnings': []}


def check_reshaped(be, root_uuid, consumers):
    """After a reshape: no VGPU on the root, 4 + 4 on two children, usage 4 + 4, consumers intact."""
    state = _backend.provider_tree_state(be, root_uuid)
    root = state['providers'][root_uuid]
    _check('VGPU' not in root['inventories'], 'VGPU still on the root after the reshape')
    children = [p for u, p in state['providers'].items() if u != root_uuid]
    _check(sorted(p['inventories'].get('VGPU', {}).get('total', 0) for p in children) == [4, 4],
           'children do not carry VGPU 4 + 4: %r' % [(p['name'], p['inventories']) for p in children])
    _check(sorted(p['usages'].get('VGPU', 0) for p in children) == [4, 4],
           'children VGPU usage is not 4 + 4: %r' % [(p['name'], p['usages']) for p in children])
    for consumer, owned in zip(consumers, VGPU_OWNERSHIP):
        allocs = state['allocations'][consumer]['allocations']
        on_root = allocs[root_uuid]['resources']
        _check('VGPU' not in on_root and on_root.get('VCPU') == 2, 'consumer %s root allocation wrong: %r'
               % (consumer, on_root))
        vgpu = sum(e['resources'].get('VGPU', 0) for e in allocs.values())
        _check(vgpu == sum(owned.values()), 'consumer %s holds %d VGPU after the reshape' % (consumer, vgpu))
        _check(any('DISK_GB' in e['resources'] for e in allocs.values()),
               'consumer %s lost its sharing DISK_GB allocation' % consumer)


# ---------------------------------------------------------------------------
# the operations: each has setup(be) -> timed callable, and check(be) afterwards


class Op(object):
    name = None
    label = None
    #: backend calls per timed operation when they cannot be counted in-process ('-' if None)
    fixed_calls = 'count'

    def __init__(self, ctx):
        self.ctx = ctx

    def prepare(self, be):
        """Once per backend, untimed."""

    def setup(self, be):
        """Per iteration, untimed; returns the callable that is timed."""
        raise NotImplementedError

    def check(self, be):
        """Once at the end, untimed: raise BenchError if the operation did not do its job."""


class OpenBackend(Op):
    name = 'open_backend'
    label = 'open backend in-process (factory options)'
    fixed_calls = None

    def prepare(self, be):
        self.opened = []

    def setup(self, be):
        kind = self.ctx['kind']

        def timed():
            self.opened.append(self.ctx['backends'].open(kind))
        return timed

    def after(self):
        while self.opened:
            self.opened.pop().close()

    def check(self, be):
        be2 = self.ctx['backends'].open(self.ctx['kind'])
        try:
            _check(be2.microversion == '1.39', 'negotiated %s, not 1.39' % be2.microversion)
        finally:
            be2.close()


_FRESH_SNIPPET = '''
import json, os
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends import factory
be = factory.get_backend(json.loads(os.environ['BENCH_BACKEND_OPTIONS']))
be.list_providers(name='bench-none')
be.close()
'''


class FreshProcess(Op):
    name = 'fresh_process'
    label = 'new Python process: import core, open, 1 GET'
    fixed_calls = 1

    def prepare(self, be):
        kind = self.ctx['kind']
        opts = ({'embedded_db': self.ctx['backends'].embedded_path} if kind == 'embedded'
                else self.ctx['backends'].rest_options())
        self.env = dict(os.environ, BENCH_BACKEND_OPTIONS=json.dumps(opts))
        self.env['NO_PROXY'] = self.env['no_proxy'] = '127.0.0.1,localhost'
        self.failed = None

    def setup(self, be):
        cmd = [sys.executable, '-c', _FRESH_SNIPPET]

        def timed():
            proc = subprocess.run(cmd, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
            if proc.returncode != 0 and self.failed is None:
                self.failed = proc.stdout.decode()[-800:]
        return timed

    def check(self, be):
        _check(self.failed is None, 'the child process failed: %s' % self.failed)


class CreateTree(Op):
    name = 'create_tree'
    label = 'create root + 2 children (3 POST)'

    def prepare(self, be):
        self.last = None

    def setup(self, be):
        names = [_name('cn')]
        names += ['%s_pci_%d' % (names[0], i) for i in range(2)]

        def timed():
            root = be.create_provider(names[0])
            for child in names[1:]:
                be.create_provider(child, parent_provider_uuid=root['uuid'])
            self.last = root['uuid']
        return timed

    def check(self, be):
        tree = be.list_providers(in_tree=self.last)
        _check(len(tree) == 3 and sum(1 for p in tree if p['parent_provider_uuid'] == self.last) == 2,
               'tree of %s has %r' % (self.last, tree))


class PutInventories(Op):
    name = 'put_inventories'
    label = 'PUT inventories VCPU,MEMORY_MB,DISK_GB,VGPU'

    def prepare(self, be):
        rp = be.create_provider(_name('inv'))
        self.uuid = rp['uuid']
        self.generation = rp['generation']
        self.n = 0

    def setup(self, be):
        self.n += 1
        body = {'VCPU': _inv(64 + self.n % 2, allocation_ratio=4.0), 'MEMORY_MB': _inv(262144, reserved=512),
                'DISK_GB': _inv(2000), 'VGPU': _inv(8, max_unit=8)}

        def timed():
            out = be.set_inventories(self.uuid, self.generation, body)
            self.generation = out['resource_provider_generation']
        return timed

    def check(self, be):
        inv = be.get_inventories(self.uuid)
        _check(inv['resource_provider_generation'] == self.generation == self.n,
               'generation %s after %d PUTs' % (inv['resource_provider_generation'], self.n))
        _check(sorted(inv['inventories']) == ['DISK_GB', 'MEMORY_MB', 'VCPU', 'VGPU'], 'inventory %r' % inv)


class PutAllocationsNew(Op):
    name = 'put_allocations_new'
    label = 'PUT /allocations new consumer (root + sharing DISK_GB)'

    def prepare(self, be):
        self.share = make_sharing_provider(be)
        self.root = make_node(be)['uuid']
        self.consumers = []

    def setup(self, be):
        consumer = _uid()
        body = alloc_body(node_allocs(self.root, self.share))

        def timed():
            be.put_allocations(consumer, body)
            self.consumers.append(consumer)
        return timed

    def check(self, be):
        usages = be.get_usages(self.root)['usages']
        _check(usages['VCPU'] == 2 * len(self.consumers), 'root VCPU usage %r' % usages)
        got = be.get_allocations(self.consumers[-1])
        _check(got['consumer_generation'] == 1 and len(got['allocations']) == 2, 'consumer %r' % got)


class MoveConsumer(Op):
    name = 'move_consumer'
    label = 'move a consumer (PUT /allocations replace)'

    def prepare(self, be):
        self.share = make_sharing_provider(be)
        self.nodes = [make_node(be)['uuid'], make_node(be)['uuid']]
        self.consumer = _uid()
        be.put_allocations(self.consumer, alloc_body(node_allocs(self.nodes[0], self.share)))
        self.generation = 1
        self.at = 0

    def setup(self, be):
        dest = 1 - self.at
        body = alloc_body(node_allocs(self.nodes[dest], self.share), self.generation)

        def timed():
            be.put_allocations(self.consumer, body)
            self.generation += 1
            self.at = dest
        return timed

    def check(self, be):
        got = be.get_allocations(self.consumer)
        _check(got['consumer_generation'] == self.generation, 'consumer generation %r, expected %d'
               % (got.get('consumer_generation'), self.generation))
        _check(sorted(got['allocations']) == sorted([self.nodes[self.at], self.share]),
               'consumer is on %r' % sorted(got['allocations']))
        _check(be.get_usages(self.nodes[1 - self.at])['usages']['VCPU'] == 0, 'old node still used')


class TreeState(Op):
    name = 'provider_tree_state'
    label = 'provider_tree_state (3 providers, 3 consumers)'

    def prepare(self, be):
        share = make_sharing_provider(be)
        root, consumers = make_vgpu_node(be, share)
        # a reshaped node: the state a verify / re-plan reads
        for address in GPU_ADDRESSES:
            child = be.create_provider(gpu_child_name(root['name'], address), parent_provider_uuid=root['uuid'])
            be.set_inventories(child['uuid'], child['generation'], {'VGPU': _inv(4, max_unit=4)})
        self.root = root['uuid']
        self.consumers = consumers
        self.state = None

    def setup(self, be):
        def timed():
            self.state = _backend.provider_tree_state(be, self.root)
        return timed

    def check(self, be):
        _check(len(self.state['providers']) == 3, 'read %d providers' % len(self.state['providers']))
        _check(sorted(self.state['allocations']) == sorted(self.consumers), 'read consumers %r'
               % sorted(self.state['allocations']))


class ReshapePost(Op):
    name = 'reshape_post'
    label = 'POST /reshaper: VGPU 8 root -> 2 GPU children'

    def prepare(self, be):
        self.share = make_sharing_provider(be)
        self.last = None

    def setup(self, be):
        root, consumers = make_vgpu_node(be, self.share)
        children = []
        for address in GPU_ADDRESSES:
            children.append(be.create_provider(gpu_child_name(root['name'], address),
                                               parent_provider_uuid=root['uuid']))
        root_inv = be.get_inventories(root['uuid'])
        new_root_inv = dict((rc, rec) for rc, rec in root_inv['inventories'].items() if rc != 'VGPU')
        inventories = {root['uuid']: {'resource_provider_generation': root_inv['resource_provider_generation'],
                                      'inventories': new_root_inv}}
        for child in children:
            inventories[child['uuid']] = {'resource_provider_generation': child['generation'],
                                          'inventories': {'VGPU': _inv(4, max_unit=4)}}
        allocations = {}
        for consumer, owned in zip(consumers, VGPU_OWNERSHIP):
            cur = be.get_allocations(consumer)
            new = dict((rp, {'resources': dict(e['resources'])}) for rp, e in cur['allocations'].items())
            new[root['uuid']]['resources'].pop('VGPU')
            for gpu, units in owned.items():
                new[children[gpu]['uuid']] = {'resources': {'VGPU': units}}
            allocations[consumer] = alloc_body(new, cur['consumer_generation'])
        body = {'inventories': inventories, 'allocations': allocations}
        self.last = (root['uuid'], consumers)

        def timed():
            be.reshape(body)
        return timed

    def check(self, be):
        check_reshaped(be, *self.last)


class ReshapeNode(Op):
    name = 'reshape_node'
    label = 'reshaper.reshape_node (read, plan, 2 children, snapshot, reshape, verify)'

    def prepare(self, be):
        from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper
        self.reshaper = reshaper
        self.share = make_sharing_provider(be)
        self.snapdir = tempfile.mkdtemp(prefix='snap-', dir=self.ctx['workdir'])
        self.last = None

    def setup(self, be):
        root, consumers = make_vgpu_node(be, self.share)
        report = device_report(root['name'], consumers)
        self.last = (root['uuid'], consumers)

        def timed():
            result = self.reshaper.reshape_node(be, root['uuid'], report, snapshot_dir=self.snapdir)
            self.result = result
        return timed

    def check(self, be):
        _check(self.result['status'] == 'reshaped' and self.result['verified'] is True,
               'reshape_node answered status %s, verified %s: %s' % (
                   self.result['status'], self.result['verified'], self.result.get('msg')))
        check_reshaped(be, *self.last)


OPS = (FreshProcess, OpenBackend, CreateTree, PutInventories, PutAllocationsNew, MoveConsumer, TreeState,
       ReshapePost, ReshapeNode)


# ---------------------------------------------------------------------------
# measuring


def stats(samples_s):
    ms = sorted(s * 1000.0 for s in samples_s)
    n = len(ms)
    return {
        'n': n,
        'median_ms': statistics.median(ms),
        'p90_ms': ms[max(0, int(math.ceil(0.9 * n)) - 1)],
        'min_ms': ms[0],
        'max_ms': ms[-1],
        'mean_ms': statistics.fmean(ms),
    }


# A broken (or still unfinished) core function is reported in its row; the rest is still measured.
_OP_ERRORS = (BenchError, errors.PlacementError, ImportError, AttributeError, KeyError, TypeError, ValueError)


class Series(object):
    """The measurements of one operation on one backend."""

    def __init__(self, op_cls, kind, ctx):
        self.kind = kind
        self.error = None
        self.samples = []
        self.calls = []
        self.elapsed = 0.0
        self.be = None
        self.op = None
        t0 = time.perf_counter()
        try:
            self.be = ctx['backends'].open(kind)
            self.counter = CountingBackend(self.be)
            self.op = op_cls(dict(ctx, kind=kind))
            self.op.prepare(self.be)
        except _OP_ERRORS as exc:
            self._fail(exc)
        self.elapsed += time.perf_counter() - t0

    def _fail(self, exc):
        self.error = {'error': '%s: %s' % (type(exc).__name__, exc), 'traceback': traceback.format_exc()}

    def step(self, warmup):
        """One iteration: setup (untimed), the timed call, cleanup (untimed).

        Warm-up iterations go through the counting proxy and are not timed.
        """
        if self.error:
            return
        t_start = time.perf_counter()
        try:
            if warmup:
                timed = self.op.setup(self.counter)
                self.counter.calls = 0
                self.counter.counting = True
                try:
                    timed()
                finally:
                    self.counter.counting = False
                self.calls.append(self.counter.calls)
            else:
                timed = self.op.setup(self.be)
                gc_was = gc.isenabled()
                gc.disable()
                try:
                    t0 = time.perf_counter()
                    timed()
                    t1 = time.perf_counter()
                finally:
                    if gc_was:
                        gc.enable()
                self.samples.append(t1 - t0)
            getattr(self.op, 'after', lambda: None)()
        except _OP_ERRORS as exc:
            self._fail(exc)
        self.elapsed += time.perf_counter() - t_start

    def finish(self):
        t0 = time.perf_counter()
        try:
            if not self.error:
                self.op.check(self.be)
        except _OP_ERRORS as exc:
            self._fail(exc)
        finally:
            if self.be is not None:
                self.be.close()
        self.elapsed += time.perf_counter() - t0
        if self.error:
            out = dict(self.error)
        else:
            out = stats(self.samples)
            if self.op.fixed_calls == 'count':
                out['calls_per_op'] = (sum(self.calls) / float(len(self.calls))) if self.calls else None
            else:
                out['calls_per_op'] = self.op.fixed_calls
            out['samples_ms'] = [round(x * 1000.0, 4) for x in self.samples]
        out['elapsed_s'] = round(self.elapsed, 2)
        return out


def run_op(op_cls, ctx, iterations, warmup):
    """Both backends, iterations INTERLEAVED (embedded, real, embedded, ...) so that load
    from elsewhere on the machine hits both series alike.  Returns {kind: result}."""
    series = [Series(op_cls, kind, ctx) for kind in ('embedded', 'rest')]
    for i in range(warmup + iterations):
        for one in series:
            one.step(warmup=i < warmup)
    return dict((one.kind, one.finish()) for one in series)


# ---------------------------------------------------------------------------
# contention: N processes doing compare-and-update increments with with_conflict_retry


def _contention_worker(kind, options, rp_uuid, ready, start, duration, result_q):
    """One process: increment VCPU total by read-compute-write until ``duration`` is over."""
    try:
        if kind == 'embedded':
            be = EmbeddedBackend(options)
        else:
            be = RestBackend.from_options(options)
    except errors.PlacementError as exc:
        ready.put('open failed: %s' % exc)
        return
    ops = retries = gave_up = failures = 0
    latencies = []
    first_failure = None

    def step():
        cur = be.get_inventories(rp_uuid)
        rec = dict(cur['inventories']['VCPU'])
        rec['total'] += 1
        be.set_inventories(rp_uuid, cur['resource_provider_generation'], {'VCPU': rec})

    ready.put('ready')
    start.wait()
    deadline = time.perf_counter() + duration
    while time.perf_counter() < deadline:
        t0 = time.perf_counter()
        try:
            _result, n = retry.with_conflict_retry(step)
        except errors.ConcurrentUpdate:
            gave_up += 1
            retries += retry.DEFAULT_ATTEMPTS - 1
            continue
        except errors.PlacementError as exc:  # e.g. a locked database answered 503/500
            failures += 1
            first_failure = first_failure or str(exc)
            continue
        latencies.append(time.perf_counter() - t0)
        ops += 1
        retries += n
    be.close()
    result_q.put({'ops': ops, 'retries': retries, 'gave_up': gave_up, 'failures': failures,
                  'first_failure': first_failure, 'latencies': latencies})


def run_contention(kind, ctx, procs, duration):
    be = ctx['backends'].open(kind)
    try:
        rp = be.create_provider(_name('contend'))
        be.set_inventories(rp['uuid'], rp['generation'], {'VCPU': _inv(1000)})
    finally:
        be.close()
    options = ctx['backends'].embedded_path if kind == 'embedded' else ctx['backends'].rest_options()
    mp = multiprocessing.get_context('fork')
    ready, results, start = mp.Queue(), mp.Queue(), mp.Event()
    workers = [mp.Process(target=_contention_worker,
                          args=(kind, options, rp['uuid'], ready, start, duration, results))
               for _proc in range(procs)]
    for w in workers:
        w.start()
    try:
        for _worker in workers:
            msg = ready.get(timeout=120)
            if msg != 'ready':
                raise BenchError('contention worker: %s' % msg)
        t0 = time.perf_counter()
        start.set()
        outs = [results.get(timeout=duration + 120) for _worker in workers]
        wall = time.perf_counter() - t0
    finally:
        for w in workers:
            w.join(30)
            if w.is_alive():
                w.terminate()
                w.join(5)
    be = ctx['backends'].open(kind)
    try:
        final = be.get_inventories(rp['uuid'])['inventories']['VCPU']['total']
    finally:
        be.close()
    ops = sum(o['ops'] for o in outs)
    lat = [x for o in outs for x in o['latencies']]
    out = {
        'procs': procs, 'seconds': round(wall, 3), 'ops': ops,
        'ops_per_s': ops / wall,
        'retries': sum(o['retries'] for o in outs),
        'retries_per_op': sum(o['retries'] for o in outs) / float(ops) if ops else None,
        'gave_up': sum(o['gave_up'] for o in outs),
        'failures': sum(o['failures'] for o in outs),
        'first_failure': next((o['first_failure'] for o in outs if o['first_failure']), None),
        'lost_updates': (1000 + ops) - final,
    }
    if lat:
        s = stats(lat)
        out['latency_median_ms'] = s['median_ms']
        out['latency_p90_ms'] = s['p90_ms']
    return out


# ---------------------------------------------------------------------------
# machine and output


def _version(dist):
    try:
        from importlib import metadata
        return metadata.version(dist)
    except Exception:  # pylint: disable=broad-except
        return None


def machine_info(server, db_url):
    cpu = None
    try:
        with open('/proc/cpuinfo') as fh:
            for line in fh:
                if line.startswith('model name'):
                    cpu = line.split(':', 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        nproc = int(subprocess.check_output(['nproc']).decode().strip())
    except (OSError, ValueError, subprocess.CalledProcessError):
        nproc = os.cpu_count()
    try:
        load = os.getloadavg()
    except OSError:
        load = None
    pkgs = dict((d, _version(d)) for d in ('openstack-placement', 'openstacksdk', 'keystoneauth1', 'SQLAlchemy',
                                           'oslo.db', 'ansible-core'))
    pkgs['sqlite (python sqlite3)'] = sqlite3.sqlite_version
    return {
        'nproc': nproc, 'cpu': cpu, 'python': sys.version.split()[0], 'implementation': platform.python_implementation(),
        'platform': platform.platform(), 'loadavg_at_start': load, 'packages': pkgs,
        'placement_server': 'tests/placement_server.py: wsgiref ThreadingMixIn on 127.0.0.1, noauth2, db %s'
                            % (db_url or 'SQLite file'),
        'embedded': 'EmbeddedBackend defaults (WAL, synchronous=FULL, busy_timeout 30 s), file in %s'
                    % tempfile.gettempdir(),
    }


def _short(text, limit=230):
    text = ' '.join(str(text).split())
    return text if len(text) <= limit else text[:limit] + ' ...'


def _fmt(value, digits=2):
    if value is None:
        return '-'
    return '%.*f' % (digits, value)


def _table(headers, rows):
    widths = [max([len(str(h))] + [len(str(r[i])) for r in rows]) for i, h in enumerate(headers)]
    lines = [' | '.join(str(h).ljust(widths[i]) for i, h in enumerate(headers)).rstrip(),
             '-|-'.join('-' * w for w in widths)]
    for r in rows:
        cells = []
        for i, c in enumerate(r):
            cells.append(str(c).ljust(widths[i]) if i == 0 else str(c).rjust(widths[i]))
        lines.append(' | '.join(cells).rstrip())
    return '\n'.join(lines)


def ops_table(results):
    headers = ['operation', 'n', 'calls/op', 'embedded ms/op median', 'p90', 'real REST ms/op median', 'p90',
               'ratio real/embedded']
    rows = []
    for op in OPS:
        r = results.get(op.name)
        if r is None:
            continue
        emb, rest = r['embedded'], r['rest']
        if 'error' in emb or 'error' in rest:
            rows.append([op.label, '-', '-', 'ERROR' if 'error' in emb else _fmt(emb['median_ms']), '-',
                         'ERROR' if 'error' in rest else _fmt(rest['median_ms']), '-', '-'])
            continue
        if emb['calls_per_op'] is None:
            calls = '-'
        else:
            calls = '%g' % emb['calls_per_op']
            if rest['calls_per_op'] != emb['calls_per_op']:
                calls += '/%g' % rest['calls_per_op']
        rows.append([op.label, emb['n'], calls, _fmt(emb['median_ms']), _fmt(emb['p90_ms']),
                     _fmt(rest['median_ms']), _fmt(rest['p90_ms']), '%.1fx' % (rest['median_ms'] / emb['median_ms'])])
    return _table(headers, rows)


def contention_table(results):
    headers = ['procs', 'embedded ops/s', 'retries/op', 'gave up', 'errors', 'op median ms', 'op p90 ms',
               'real REST ops/s', 'retries/op', 'gave up', 'errors', 'op median ms', 'op p90 ms']
    rows = []
    for n in sorted(set(c['procs'] for c in results.get('embedded', []) + results.get('rest', []))):
        row = [n]
        for kind in ('embedded', 'rest'):
            c = next((x for x in results.get(kind, []) if x['procs'] == n), None)
            if c is None or 'error' in c:
                row += ['ERROR' if c else '-', '-', '-', '-', '-', '-']
                continue
            row += [_fmt(c['ops_per_s'], 1), _fmt(c['retries_per_op'], 3), c['gave_up'], c['failures'],
                    _fmt(c.get('latency_median_ms')), _fmt(c.get('latency_p90_ms'))]
        rows.append(row)
    return _table(headers, rows)


# ---------------------------------------------------------------------------
# the optional module-level table (plugins/modules/reshape.py, when it exists)


def module_reshape_available():
    return os.path.exists(os.path.join(REPO, 'plugins', 'modules', 'reshape.py'))


def _playbook_env():
    env = dict(os.environ)
    env['ANSIBLE_COLLECTIONS_PATH'] = os.path.join(REPO, '.venv', 'collections')
    env['ANSIBLE_NOCOLOR'] = '1'
    env['ANSIBLE_LOCALHOST_WARNING'] = 'false'
    env['ANSIBLE_INVENTORY_UNPARSED_WARNING'] = 'false'
    env['NO_PROXY'] = env['no_proxy'] = '127.0.0.1,localhost'
    return env


def _run_playbook(ctx, task):
    """Wall time of ``ansible-playbook`` running one task on localhost (local connection)."""
    play = [{'hosts': 'localhost', 'gather_facts': False, 'tasks': [task]}]
    path = os.path.join(ctx['workdir'], 'module-task.yml')
    with open(path, 'w') as fh:
        json.dump(play, fh)  # JSON is YAML
    cmd = [os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), '-i', 'localhost,', '-c', 'local',
           '-e', 'ansible_python_interpreter=%s' % sys.executable, path]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=_playbook_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise BenchError('ansible-playbook rc %d: %s' % (proc.returncode, proc.stdout.decode()[-1500:]))
    return elapsed


def run_module_reshape(ctx, iterations):
    """One node's reshape through ansible-playbook + the reshape module, per backend.

    Wall time of ``ansible-playbook`` running ONE task (``placement.upgrade.reshape``)
    against localhost; the node is set up beforehand through the backend and checked
    afterwards.  ``floor`` is the same playbook with one ``ansible.builtin.ping`` task.
    The three series are interleaved (ping, embedded, real, ping, ...) so that load from
    elsewhere hits them alike; the first round is an untimed warm-up.
    """
    snapdir = os.path.join(ctx['workdir'], 'module-snapshots')
    samples = {'floor': [], 'embedded': [], 'rest': []}
    failed = {}
    shares = {}

    def reshape_once(kind):
        be = ctx['backends'].open(kind)
        try:
            if kind not in shares:
                shares[kind] = make_sharing_provider(be)
            root, consumers = make_vgpu_node(be, shares[kind])
        finally:
            be.close()
        args = {'root_provider': root['uuid'], 'devices': device_report(root['name'], consumers),
                'snapshot_dir': snapdir}
        if kind == 'embedded':
            args['embedded_db'] = ctx['backends'].embedded_path
        else:
            args.update(ctx['backends'].rest_options())
        elapsed = _run_playbook(ctx, {'name': 'reshape', 'placement.upgrade.reshape': args})
        be = ctx['backends'].open(kind)
        try:
            check_reshaped(be, root['uuid'], consumers)
        finally:
            be.close()
        return elapsed

    for i in range(iterations + 1):
        for kind in ('floor', 'embedded', 'rest'):
            if kind in failed:
                continue
            try:
                if kind == 'floor':
                    elapsed = _run_playbook(ctx, {'name': 'ping', 'ansible.builtin.ping': {}})
                else:
                    elapsed = reshape_once(kind)
            except (BenchError, errors.PlacementError) as exc:
                failed[kind] = str(exc)
                continue
            if i:  # round 0 is the warm-up (page cache, .pyc)
                samples[kind].append(elapsed)
    return dict((kind, {'error': failed[kind]} if kind in failed else stats(samples[kind]))
                for kind in ('floor', 'embedded', 'rest'))


def module_table(mod):
    headers = ['one node, ansible-playbook with 1 task (s)', 'n', 'embedded s median', 'p90',
               'real REST s median', 'p90', 'ratio']

    def sec(r, key):
        return 'ERROR' if 'error' in r else _fmt(r[key] / 1000.0, 3)

    emb, rest, floor = mod['embedded'], mod['rest'], mod['floor']
    ok = 'error' not in emb and 'error' not in rest
    rows = [['placement.upgrade.reshape', emb.get('n', rest.get('n', '-')), sec(emb, 'median_ms'),
             sec(emb, 'p90_ms'), sec(rest, 'median_ms'), sec(rest, 'p90_ms'),
             '%.2fx' % (rest['median_ms'] / emb['median_ms']) if ok else '-']]
    if 'error' not in floor:
        for key in ('embedded', 'rest'):
            if 'error' not in mod[key]:
                mod[key]['minus_floor_ms'] = mod[key]['median_ms'] - floor['median_ms']
        rows.append(['  minus the ping floor', '',
                     _fmt(emb['minus_floor_ms'] / 1000.0, 3) if 'minus_floor_ms' in emb else '-', '',
                     _fmt(rest['minus_floor_ms'] / 1000.0, 3) if 'minus_floor_ms' in rest else '-', '', ''])
    rows.append(['floor: ansible.builtin.ping (no backend)', floor.get('n', '-'), sec(floor, 'median_ms'),
                 sec(floor, 'p90_ms'), '', '', ''])
    return _table(headers, rows)


def compare(paths):
    """Medians of several --json runs side by side, with the spread (max/min - 1) per figure."""
    runs = []
    for path in paths:
        with open(path) as fh:
            runs.append(json.load(fh))
    headers = ['figure'] + ['run %d' % (i + 1) for i in range(len(runs))] + ['spread']
    rows = []

    def add(label, values, digits=2):
        vals = [v for v in values if v is not None]
        spread = '%.0f%%' % (100.0 * (max(vals) / min(vals) - 1)) if len(vals) > 1 and min(vals) > 0 else '-'
        rows.append([label] + [_fmt(v, digits) for v in values] + [spread])

    for op in OPS:
        for kind, short in (('embedded', 'emb'), ('rest', 'REST')):
            vals = [((r.get('operations') or {}).get(op.name) or {}).get(kind, {}).get('median_ms') for r in runs]
            if any(v is not None for v in vals):
                add('%s %s median ms' % (op.name, short), vals)
        ratios = []
        for r in runs:
            e = ((r.get('operations') or {}).get(op.name) or {})
            ok = 'median_ms' in e.get('embedded', {}) and 'median_ms' in e.get('rest', {})
            ratios.append(e['rest']['median_ms'] / e['embedded']['median_ms'] if ok else None)
        if any(v is not None for v in ratios):
            add('%s ratio' % op.name, ratios, 1)
    for kind, short in (('embedded', 'emb'), ('rest', 'REST')):
        for procs in CONTENTION_PROCS:
            vals = []
            for r in runs:
                c = next((x for x in ((r.get('contention') or {}).get(kind) or []) if x.get('procs') == procs), {})
                vals.append(c.get('ops_per_s'))
            if any(v is not None for v in vals):
                add('contention %s x%d ops/s' % (short, procs), vals, 1)
    for kind in ('floor', 'embedded', 'rest'):
        vals = [((r.get('module_reshape') or {}).get(kind) or {}).get('median_ms') for r in runs]
        if any(v is not None for v in vals):
            add('module %s median s' % kind, [v / 1000.0 if v is not None else None for v in vals], 3)
    print(_table(headers, rows))
    for i, r in enumerate(runs):
        m = r.get('machine') or {}
        print('run %d: %s, %s mode, load at start %s, at end %s, %s s' % (
            i + 1, r.get('started'), r.get('mode'),
            ' '.join('%.2f' % x for x in m.get('loadavg_at_start') or ()),
            ' '.join('%.2f' % x for x in m.get('loadavg_at_end') or ()), r.get('elapsed_s')))
    return 0


# ---------------------------------------------------------------------------


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='fewer iterations, shorter contention (~30 s)')
    parser.add_argument('--json', metavar='FILE', help='also write every figure (and raw samples) as JSON')
    parser.add_argument('--only', metavar='OP[,OP]', help='run only these operations (%s)'
                        % ', '.join(o.name for o in OPS))
    parser.add_argument('--no-contention', action='store_true', help='skip the contention table')
    parser.add_argument('--no-module', action='store_true', help='skip the module-level reshape table')
    parser.add_argument('--placement-db-url', metavar='URL',
                        help='SQLAlchemy URL for the real Placement\'s database (default: a SQLite file)')
    parser.add_argument('--keep', action='store_true', help='keep the temp dir (databases, server log)')
    parser.add_argument('--compare', nargs='+', metavar='JSON',
                        help='do not measure: print the medians of these --json files side by side')
    args = parser.parse_args(argv)
    if args.compare:
        return compare(args.compare)

    q = 1 if args.quick else 0
    only = set(args.only.split(',')) if args.only else None
    if only and only - set(o.name for o in OPS):
        parser.error('unknown operation(s): %s' % ', '.join(sorted(only - set(o.name for o in OPS))))
    started = time.perf_counter()
    workdir = tempfile.mkdtemp(prefix='bench-backends-')
    server = PlacementServer(workdir=os.path.join(workdir, 'placement'), db_url=args.placement_db_url)
    report = {'mode': 'quick' if args.quick else 'full', 'started': time.strftime('%Y-%m-%dT%H:%M:%S%z'),
              'command': ' '.join([os.path.relpath(sys.executable, REPO) if sys.executable.startswith(REPO)
                                   else sys.executable, 'benchmarks/bench_backends.py'] + list(argv or sys.argv[1:]))}
    try:
        server.start()
        ctx = {'backends': Backends(workdir, server), 'workdir': workdir}
        report['machine'] = machine_info(server, args.placement_db_url)
        m = report['machine']
        print('machine: %s x %s, nproc %s, load %s; Python %s; %s' % (
            m['cpu'], os.cpu_count(), m['nproc'],
            ' '.join('%.2f' % x for x in m['loadavg_at_start']) if m['loadavg_at_start'] else '?',
            m['python'], m['platform']))
        print('packages: %s' % ', '.join('%s %s' % kv for kv in sorted(m['packages'].items())))
        print('real Placement: %s' % m['placement_server'])
        print('embedded: %s' % m['embedded'])
        print('mode: %s (iterations per operation below, warm-up %d)\n' % (report['mode'], WARMUP[q]))
        sys.stdout.flush()

        report['operations'] = {}
        for op in OPS:
            if only and op.name not in only:
                continue
            iterations = ITERATIONS[op.name][q]
            entry = {'label': op.label}
            entry.update(run_op(op, ctx, iterations, WARMUP[q]))
            for kind in ('embedded', 'rest'):
                if 'error' in entry[kind]:
                    print('  %s [%s]: ERROR %s' % (op.name, kind, _short(entry[kind]['error'], 400)))
            report['operations'][op.name] = entry
            sys.stdout.write('  done %-22s embedded %5.1fs, rest %5.1fs\n'
                             % (op.name, entry['embedded']['elapsed_s'], entry['rest']['elapsed_s']))
            sys.stdout.flush()
        print('\nPer operation (ms per operation; only the operation is timed; ratio = real median / '
              'embedded median)')
        print(ops_table(report['operations']))

        if not args.no_contention:
            duration = CONTENTION_SECONDS[q]
            report['contention'] = {'seconds_per_run': duration, 'attempts': retry.DEFAULT_ATTEMPTS,
                                    'embedded': [], 'rest': []}
            for kind in ('embedded', 'rest'):
                for procs in CONTENTION_PROCS:
                    try:
                        res = run_contention(kind, ctx, procs, duration)
                    except (BenchError, errors.PlacementError) as exc:
                        res = {'procs': procs, 'error': str(exc)}
                        print('  contention %s x%d: ERROR %s' % (kind, procs, exc))
                    report['contention'][kind].append(res)
                    if res.get('lost_updates'):
                        print('  contention %s x%d: %d LOST UPDATES' % (kind, procs, res['lost_updates']))
                    if res.get('failures'):
                        print('  contention %s x%d: %d failed increments, first: %s'
                              % (kind, procs, res['failures'], _short(res['first_failure'])))
            print('\nContention: N processes x %.1f s of read-compute-write increments on ONE provider, '
                  'retry.with_conflict_retry (attempts %d, backoff 0.05 s x attempt); "op" = one successful '
                  'increment incl. its retries; lost updates: %s'
                  % (duration, retry.DEFAULT_ATTEMPTS,
                     ', '.join('%s %s' % (k, sum(c.get('lost_updates', 0) for c in report['contention'][k]))
                               for k in ('embedded', 'rest'))))
            print(contention_table(report['contention']))

        if not args.no_module:
            if module_reshape_available():
                report['module_reshape'] = run_module_reshape(ctx, MODULE_ITERATIONS[q])
                print('\nOne node\'s reshape through the module (wall time of ansible-playbook with one task, '
                      'seconds)')
                print(module_table(report['module_reshape']))
                for kind in ('floor', 'embedded', 'rest'):
                    if 'error' in report['module_reshape'][kind]:
                        print('  module [%s]: %s' % (kind, report['module_reshape'][kind]['error']))
            else:
                report['module_reshape'] = None
                print('\n(module-level table skipped: plugins/modules/reshape.py does not exist yet)')

        report['elapsed_s'] = round(time.perf_counter() - started, 1)
        try:
            report['machine']['loadavg_at_end'] = os.getloadavg()
        except OSError:
            report['machine']['loadavg_at_end'] = None
        print('\ntotal %.1f s; load average at the end %s (other work on this machine skews every figure)'
              % (report['elapsed_s'], ' '.join('%.2f' % x for x in report['machine']['loadavg_at_end'] or ())))
        if args.json:
            if os.path.dirname(os.path.abspath(args.json)):
                os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
            with open(args.json, 'w') as fh:
                json.dump(report, fh, indent=1, sort_keys=True)
            print('figures written to %s' % args.json)
    finally:
        server.stop()
        if args.keep:
            print('kept %s' % workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    failed = [n for n, e in report.get('operations', {}).items() if 'error' in e['embedded'] or 'error' in e['rest']]
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
