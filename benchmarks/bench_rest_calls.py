# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""REST calls per node (issue 13 target 3): ONE node with N consumers of which M hold VGPU.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_rest_calls.py [--consumers 10,100,1000] [--vgpu 10] [--json FILE]
        [--db mariadb|sqlite|postgresql]

Runs the real Placement 16.0.0 on 127.0.0.1 (``tests/placement_server.py``: on MariaDB behind
gunicorn with 4 workers by default, as production runs it; ``--db sqlite`` as before) and reaches
it through ``RestBackend.from_options`` exactly as a module does.  Per N, a fresh node: root with
VCPU, MEMORY_MB and a flat VGPU inventory, a sharing DISK_GB pool; N consumers each holding
VCPU/MEMORY_MB on the root and DISK_GB on the pool, the first M also 1 VGPU on the root.  The
device report puts those M mdevs on two GPUs.  Phases, each counted (backend calls = HTTP
requests) and timed separately:

* ``plan``    ``reshaper.reshape_node(check_mode=True)``
* ``reshape`` ``reshaper.reshape_node`` up to and including ``POST /reshaper``
* ``verify``  the rest of ``reshape_node`` (its verification read)
* ``verify_node`` ``reshaper.verify_node`` afterwards (``state: verified``)
* ``report``  ``fleet.report.collect_record`` on the reshape's result

A measurement tool, not a test: nothing here passes or fails on timing.  The setup (providers,
consumers: one ``POST /allocations`` per 200 consumers) is not counted.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import uuid

_HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(_HERE)
sys.path.insert(0, os.path.join(REPO, 'tests'))  # placement_server (reused, not copied)

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.rest import RestBackend  # noqa: E402
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper  # noqa: E402
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import report as fleet_report  # noqa: E402
from placement_server import PlacementServer  # noqa: E402

PROJECT = '6b6f5c1e-6a4a-4d6f-9a3b-5d1f3c3e2a10'
USER = '0d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d'
GPU_ADDRESSES = ('0000:84:00.0', '0000:85:00.0')
PHASES = ('plan', 'reshape', 'verify', 'verify_node', 'report')


class Counting(object):
    """Proxy counting backend calls into the current phase (``reshape`` switches to ``verify``)."""

    def __init__(self, inner):
        self._inner = inner
        self.phase = None
        self.calls = dict((p, 0) for p in PHASES)

    def __getattr__(self, name):
        attr = getattr(self._inner, name)
        if name.startswith('_') or not callable(attr):
            return attr

        def call(*args, **kwargs):
            if self.phase is not None:
                self.calls[self.phase] += 1
            try:
                return attr(*args, **kwargs)
            finally:
                if name == 'reshape' and self.phase == 'reshape':
                    self.phase = 'verify'
                    self.switched = time.perf_counter()
        return call


def _uid():
    return str(uuid.uuid4())


def build_node(be, consumers, vgpu):
    name = 'bench-cn-%s' % uuid.uuid4().hex[:8]
    pool = be.create_provider('bench-share-%s' % uuid.uuid4().hex[:8])
    gen = be.set_inventories(pool['uuid'], pool['generation'], {'DISK_GB': {'total': 10000000}})['resource_provider_generation']
    gen = be.set_aggregates(pool['uuid'], gen, [_uid()])['resource_provider_generation']
    be.set_provider_traits(pool['uuid'], gen, ['MISC_SHARES_VIA_AGGREGATE'])
    per_gpu = (vgpu + 1) // 2 + 2
    root = be.create_provider(name)
    be.set_inventories(root['uuid'], root['generation'], {
        'VCPU': {'total': 4 * consumers, 'allocation_ratio': 4.0},
        'MEMORY_MB': {'total': 1024 * consumers + 512, 'reserved': 512},
        'VGPU': {'total': 2 * per_gpu, 'max_unit': 2 * per_gpu}})
    ids = [_uid() for _i in range(consumers)]
    for start in range(0, consumers, 200):
        body = {}
        for n, consumer in enumerate(ids[start:start + 200], start):
            res = {'VCPU': 1, 'MEMORY_MB': 512}
            if n < vgpu:
                res['VGPU'] = 1
            body[consumer] = {'allocations': {root['uuid']: {'resources': res},
                                              pool['uuid']: {'resources': {'DISK_GB': 1}}},
                              'project_id': PROJECT, 'user_id': USER, 'consumer_generation': None,
                              'consumer_type': 'INSTANCE'}
        be.post_allocations(body)
    gpus = []
    for index, address in enumerate(GPU_ADDRESSES):
        mdevs = [{'uuid': _uid(), 'type': 'nvidia-222', 'instance_uuid': c}
                 for n, c in enumerate(ids[:vgpu]) if n % 2 == index]
        gpus.append({'address': address, 'vendor_id': '10de', 'product_id': '1eb8', 'class_id': '030200',
                     'numa_node': index, 'physfn': None,
                     'mdev_types': {'nvidia-222': {'name': 'GRID T4-2Q', 'available_instances': per_gpu - len(mdevs),
                                                   'device_api': 'vfio-pci', 'description': ''}},
                     'mdevs': mdevs})
    instances = {}
    for n, consumer in enumerate(ids):
        held = [m['uuid'] for g in gpus for m in g['mdevs'] if m['instance_uuid'] == consumer]
        instances[consumer] = {'name': 'instance-%08x' % (n + 1), 'mdevs': held, 'pci_addresses': [],
                               'source': '/etc/libvirt/qemu/instance-%08x.xml' % (n + 1)}
    report = {'hostname': name, 'sysfs_root': '/sys', 'gpus': gpus, 'sriov_pfs': [], 'pci_devices': [],
              'numa_cells': [], 'instances': instances, 'warnings': []}
    return root, report


def run_one(be, workdir, consumers, vgpu):
    root, report = build_node(be, consumers, vgpu)
    return measure_node(be, workdir, root, report, consumers, vgpu)


def measure_node(be, workdir, root, report, consumers, vgpu):
    """The phases on a node ``build_node`` made (also benchmarks/bench_matrix.py's sequence)."""
    snapdir = tempfile.mkdtemp(prefix='snap-', dir=workdir)
    counting = Counting(be)
    seconds = {}

    counting.phase = 'plan'
    t0 = time.perf_counter()
    planned = reshaper.reshape_node(counting, root['uuid'], report, snapshot_dir=snapdir, check_mode=True)
    seconds['plan'] = time.perf_counter() - t0
    assert planned['status'] == 'reshaped', planned['msg']

    counting.phase = 'reshape'
    t0 = time.perf_counter()
    result = reshaper.reshape_node(counting, root['uuid'], report, snapshot_dir=snapdir)
    end = time.perf_counter()
    seconds['reshape'] = counting.switched - t0
    seconds['verify'] = end - counting.switched
    assert result['status'] == 'reshaped' and result['verified'] is True, result['msg']
    assert result['moved']['consumers'] == vgpu, result['moved']

    counting.phase = 'verify_node'
    t0 = time.perf_counter()
    checked = reshaper.verify_node(counting, root['uuid'], report, snapshot_dir=snapdir)
    seconds['verify_node'] = time.perf_counter() - t0
    assert checked['verified'] is True, checked['msg']

    counting.phase = 'report'
    t0 = time.perf_counter()
    record, _warnings = fleet_report.collect_record(counting, {
        'node': root['name'], 'provider': root['name'], 'status': 'reshaped', 'reshape': result})
    seconds['report'] = time.perf_counter() - t0
    counting.phase = None
    assert record['status'] == 'reshaped' and record['before'] and record['after']
    return {'consumers': consumers, 'vgpu': vgpu, 'calls': dict(counting.calls), 'seconds': seconds}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n', maxsplit=1)[0])
    parser.add_argument('--consumers', default='10,100,1000')
    parser.add_argument('--vgpu', type=int, default=10)
    parser.add_argument('--json')
    parser.add_argument('--db', choices=('mariadb', 'sqlite', 'postgresql'), default='mariadb',
                        help='Placement\'s database: MariaDB (default) or PostgreSQL behind gunicorn with 4 '
                             'workers, as production runs it; sqlite: one threaded wsgiref process')
    args = parser.parse_args(argv)
    workdir = tempfile.mkdtemp(prefix='bench-rest-calls-')
    if args.db == 'sqlite':
        server = PlacementServer(workdir=os.path.join(workdir, 'placement'))
    else:
        server = PlacementServer.production(db=args.db, workers=4, workdir=os.path.join(workdir, 'placement'))
    rows = []
    try:
        server.start()
        be = RestBackend.from_options(server.module_auth())
        for n in [int(x) for x in args.consumers.split(',')]:
            rows.append(run_one(be, workdir, n, min(args.vgpu, n)))
            row = rows[-1]
            print('%s N=%5d M=%3d  %s  total %5d calls  %s  total %.2f s' % (
                args.db, row['consumers'], row['vgpu'],
                ' '.join('%s %5d' % (p, row['calls'][p]) for p in PHASES), sum(row['calls'].values()),
                ' '.join('%s %.2fs' % (p, row['seconds'][p]) for p in PHASES), sum(row['seconds'].values())))
            sys.stdout.flush()
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    if args.json:
        with open(args.json, 'w') as handle:
            json.dump(rows, handle, indent=1, sort_keys=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
