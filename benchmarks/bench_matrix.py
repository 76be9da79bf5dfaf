# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The backend matrix (issues 13 and 28): one node's pass on four Placements, side by side.

Usage (from the repository root)::

    make bench-matrix                                    # full run, about 12 minutes on 2 quiet cores
    make bench-matrix BENCH_MATRIX_ARGS=--quick          # about 1-2 minutes
    .venv/bin/python benchmarks/bench_matrix.py [--quick] [--consumers 10,100,1000,10000]
        [--nodes 10,100,1000] [--repeats N] [--json FILE]

The same sequence, on the same kind of node, through the collection's one backend interface, on

* ``embedded``: ``EmbeddedBackend`` on a SQLite file (the modules' default options);
* ``mariadb``: ``RestBackend.from_options`` on the REAL Placement 16.0.0 as production runs it: on a
  private MariaDB 10.11 behind gunicorn with 4 worker processes (``PlacementServer.production``);
* ``http``: ``RestBackend.from_options`` (openstacksdk + keystoneauth, as a module opens it) on the
  REAL Placement 16.0.0 that ``tests/placement_server.py`` serves on 127.0.0.1 (SQLite);
* ``direct``: ``RestBackend(adapter)`` over ``placement.direct.PlacementDirect``, Placement 16.0.0's
  own in-process client (wsgi-intercept: the same WSGI application, no socket), on its own SQLite
  file with the same ``placement.conf`` and policy as the server and the schema Placement's
  migrations make.

Two axes (their full cross product, 10,000 consumers on each of 1,000 nodes, is not feasible on
this machine): (a) consumers on the measured node 10, 100, 1,000, 10,000 (``--consumers``), in a
store of 10 nodes; (b) nodes in the store 10, 100, 1,000 (``--nodes``), 10 consumers on each.
A node is ``bench_rest_calls.build_node``'s: a root with VCPU, MEMORY_MB and a flat VGPU
inventory, a sharing DISK_GB pool, N consumers holding VCPU/MEMORY_MB on the root and DISK_GB on
the pool, M = 10 of them also 1 VGPU (two GPUs in the device report).  The nodes of the store
that are not measured (``seed_fillers``) have a root with VCPU, MEMORY_MB and VGPU and 10
consumers each, on one sharing DISK_GB pool for all of them.  Per measured node, the sequence
(``bench_rest_calls.measure_node``): ``plan`` (``reshaper.reshape_node`` in check mode),
``reshape`` (``reshape_node`` applied, its own verification included), ``verify_node`` and
``report`` (``fleet.report.collect_record``).

Each backend of a cell lives in its own worker process (a fresh store: Placement's database
engine and caches are process-wide), seeded in parallel and untimed (``POST /allocations`` of
200 consumers at a time, the embedded store through its own backend).  The measured runs are
then interleaved, one backend at a time, in a rotating order.  After each run, untimed: the node
is reshaped (no VGPU on the root, the children carry the root's former VGPU total, no consumer
holds VGPU on the root, every consumer holds exactly what it held before), or the cell's figures
are not printed.  Printed per cell, backend and operation: seconds (median of the repeats),
backend calls per node (= HTTP requests for http and direct), and the ratios http/embedded and
direct/embedded.

A measurement tool, not a test: nothing here passes or fails on timing.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import json
import multiprocessing
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
import traceback
import uuid

_HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(_HERE)
sys.path.insert(0, os.path.join(REPO, 'tests'))  # placement_server (reused, not copied)
sys.path.insert(0, _HERE)  # bench_rest_calls, bench_backends (reused, not copied)

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend  # noqa: E402
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.rest import RestBackend  # noqa: E402
from bench_backends import BenchError, _check, alloc_body, make_sharing_provider  # noqa: E402
from bench_rest_calls import build_node, measure_node  # noqa: E402
from placement_server import PlacementServer  # noqa: E402

BACKENDS = ('embedded', 'http', 'direct', 'mariadb')
OPERATIONS = ('plan', 'reshape', 'verify_node', 'report')
VGPU_CONSUMERS = 10
FILLER_CONSUMERS = 10
STORE_FOR_CONSUMERS = 10
CONSUMERS_PER_NODE_FOR_NODES = 10


def repeats_for(consumers, quick):
    if quick:
        return 1
    if consumers <= 100:
        return 3
    return 1


# ---------------------------------------------------------------------------
# the worker: one backend, one fresh store


def _open_direct(workdir):
    """Placement's in-process client on its own SQLite file (the server's conf and policy)."""
    from oslo_config import cfg
    from placement import conf as placement_conf
    from placement import db_api
    from placement.db.sqlalchemy import migration
    from placement.direct import PlacementDirect

    files = PlacementServer(workdir=workdir)
    os.makedirs(workdir, exist_ok=True)
    files._write_config()  # pylint: disable=protected-access  # placement.conf + policy.yaml, as the server's
    config = cfg.ConfigOpts()
    placement_conf.register_opts(config)
    config([], project='placement', default_config_files=[files.conf_path])
    db_api.configure(config)
    # the schema from Placement's migrations, once (as `placement-manage db sync` does for the server);
    # sync_on_startup would run them again on every request: PlacementDirect builds its app per request
    migration.upgrade('head')
    direct = PlacementDirect(config)
    be = RestBackend(direct.__enter__())

    def close():
        be.close()
        direct.__exit__(None, None, None)
    return be, close


def _open(kind, workdir):
    if kind == 'embedded':
        be = EmbeddedBackend(os.path.join(workdir, 'embedded.db'))
        return be, be.close
    if kind in ('http', 'mariadb'):
        # http: Placement on SQLite behind threaded wsgiref (the tests' fast lane); mariadb:
        # Placement as deployed, on MariaDB 10.11 behind gunicorn with 4 worker processes
        if kind == 'http':
            server = PlacementServer(workdir=os.path.join(workdir, 'placement'))
        else:
            server = PlacementServer.production(db='mariadb', workers=4, workdir=os.path.join(workdir, 'mariadb'))
        server.start()
        try:
            be = RestBackend.from_options(server.module_auth())
        except BaseException:
            server.stop()
            raise

        def close():
            try:
                be.close()
            finally:
                server.stop()
        return be, close
    return _open_direct(os.path.join(workdir, 'direct'))


def seed_fillers(be, count):
    """``count`` nodes that are not measured, in few calls: one sharing pool for all, a root with
    inventory each (2 calls), their consumers (each VCPU/MEMORY_MB/VGPU on its root, DISK_GB on
    the pool) 200 to a ``POST /allocations``."""
    if not count:
        return
    pool = make_sharing_provider(be, disk_total=10 * FILLER_CONSUMERS * count)
    body = {}
    for _n in range(count):
        root = be.create_provider('bench-filler-%s' % uuid.uuid4().hex[:12])
        be.set_inventories(root['uuid'], root['generation'], {
            'VCPU': {'total': 4 * FILLER_CONSUMERS, 'allocation_ratio': 4.0},
            'MEMORY_MB': {'total': 1024 * FILLER_CONSUMERS + 512, 'reserved': 512},
            'VGPU': {'total': FILLER_CONSUMERS, 'max_unit': FILLER_CONSUMERS}})
        for _c in range(FILLER_CONSUMERS):
            body[str(uuid.uuid4())] = alloc_body({root['uuid']: {'resources': {'VCPU': 1, 'MEMORY_MB': 512, 'VGPU': 1}},
                                                  pool: {'resources': {'DISK_GB': 1}}})
            if len(body) == 200:
                be.post_allocations(body)
                body = {}
    if body:
        be.post_allocations(body)


def _seed(be, consumers, vgpu, store, measured):
    """``store`` nodes: the fillers, then the ``measured`` ones; returns the measured nodes."""
    seed_fillers(be, store - measured)
    nodes = []
    for _n in range(measured):
        root, report = build_node(be, consumers, vgpu)
        first = next(iter(report['instances']))
        pool = [u for u in be.get_allocations(first)['allocations'] if u != root['uuid']]
        _check(len(pool) == 1, 'consumer %s is not on the root and one pool: %r' % (first, pool))
        vgpu_total = be.get_inventories(root['uuid'])['inventories']['VGPU']['total']
        nodes.append({'root': root, 'report': report, 'pool': pool[0], 'vgpu_total': vgpu_total})
    return nodes


def _expected_holdings(report):
    out = {}
    for consumer, guest in report['instances'].items():
        res = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}
        if guest['mdevs']:
            res['VGPU'] = len(guest['mdevs'])
        out[consumer] = res
    return out


def check_reshaped(be, node):
    """Untimed, after the sequence: the node is reshaped and every consumer holds what it held."""
    root_uuid = node['root']['uuid']
    tree = be.list_providers(in_tree=root_uuid)
    children = [p['uuid'] for p in tree if p['uuid'] != root_uuid]
    _check('VGPU' not in be.get_inventories(root_uuid)['inventories'], 'VGPU still on the root after the reshape')
    moved = sum(be.get_inventories(c)['inventories'].get('VGPU', {}).get('total', 0) for c in children)
    _check(children and moved == node['vgpu_total'],
           'the children carry VGPU %d, the root had %d' % (moved, node['vgpu_total']))
    held = {}
    for provider in [root_uuid] + children + [node['pool']]:
        for consumer, alloc in be.get_provider_allocations(provider)['allocations'].items():
            _check(provider != root_uuid or 'VGPU' not in alloc['resources'],
                   'consumer %s still holds VGPU on the root' % consumer)
            mine = held.setdefault(consumer, {})
            for rc, amount in alloc['resources'].items():
                mine[rc] = mine.get(rc, 0) + amount
    expected = _expected_holdings(node['report'])
    wrong = [c for c in set(expected) | set(held) if expected.get(c) != held.get(c)]
    _check(not wrong, '%d consumers do not hold what they held, e.g. %s: %r, expected %r' % (
        len(wrong), wrong[:1], held.get(wrong[0]) if wrong else None, expected.get(wrong[0]) if wrong else None))


def _worker(conn, kind, workdir, consumers, vgpu, store, measured):
    close = None
    try:
        os.makedirs(workdir)
        be, close = _open(kind, workdir)
        t0 = time.perf_counter()
        nodes = _seed(be, consumers, vgpu, store, measured)
        conn.send(('ready', time.perf_counter() - t0))
        while True:
            msg = conn.recv()
            if msg[0] == 'stop':
                break
            node = nodes[msg[1]]
            row = measure_node(be, workdir, node['root'], node['report'], consumers, vgpu)
            check_reshaped(be, node)
            conn.send(('done', row))
    except BaseException:  # pylint: disable=broad-except  # reported to the parent, which stops
        conn.send(('error', traceback.format_exc()))
    finally:
        if close is not None:
            close()
        conn.close()


# ---------------------------------------------------------------------------
# the parent: cells, interleaving, tables


def _per_operation(row):
    calls, seconds = row['calls'], row['seconds']
    return {
        'plan': (calls['plan'], seconds['plan']),
        'reshape': (calls['reshape'] + calls['verify'], seconds['reshape'] + seconds['verify']),
        'verify_node': (calls['verify_node'], seconds['verify_node']),
        'report': (calls['report'], seconds['report']),
    }


def _receive(conn, kind, what):
    tag, payload = conn.recv()
    if tag == 'error':
        raise BenchError('%s worker failed during %s:\n%s' % (kind, what, payload))
    return payload


def run_cell(ctx, axis, consumers, store, repeats):
    vgpu = min(VGPU_CONSUMERS, consumers)
    workdir = tempfile.mkdtemp(prefix='cell-', dir=ctx['workdir'])
    workers = {}
    spawn = ctx['mp']
    try:
        for kind in BACKENDS:
            parent, child = spawn.Pipe()
            proc = spawn.Process(target=_worker, name='bench-matrix-%s' % kind,
                                 args=(child, kind, os.path.join(workdir, kind), consumers, vgpu, store, repeats))
            proc.start()
            child.close()
            workers[kind] = (proc, parent)
        seed = dict((kind, _receive(workers[kind][1], kind, 'setup')) for kind in BACKENDS)
        runs = dict((kind, []) for kind in BACKENDS)
        for rep in range(repeats):
            order = BACKENDS[rep % len(BACKENDS):] + BACKENDS[:rep % len(BACKENDS)]
            for kind in order:
                workers[kind][1].send(('run', rep))
                runs[kind].append(_per_operation(_receive(workers[kind][1], kind, 'run %d' % rep)))
    finally:
        for proc, conn in workers.values():
            try:
                conn.send(('stop',))
            except (OSError, ValueError):
                pass  # that worker is gone already (it failed)
            proc.join(30)
            if proc.is_alive():
                proc.terminate()
                proc.join(10)
            conn.close()
        shutil.rmtree(workdir, ignore_errors=True)
    cell = {'axis': axis, 'consumers': consumers, 'vgpu': vgpu, 'store': store, 'repeats': repeats,
            'setup_seconds': seed, 'backends': {}}
    for kind in BACKENDS:
        cell['backends'][kind] = dict(
            (op, {'calls': [r[op][0] for r in runs[kind]], 'seconds': [r[op][1] for r in runs[kind]],
                  'calls_median': statistics.median([r[op][0] for r in runs[kind]]),
                  'seconds_median': statistics.median([r[op][1] for r in runs[kind]])})
            for op in OPERATIONS)
    return cell


HEADER = ('%-5s %6s %5s %3s  %-11s | %26s | %9s %9s %9s %9s | %8s %8s %10s' % (
    'axis', 'N', 'nodes', 'rep', 'operation', 'calls/node m/e/h/d', 'mariadb s', 'embed s', 'http s', 'direct s',
    'mdb/emb', 'http/emb', 'direct/emb'))


def _ratio(value, base):
    return '%7.1fx' % (value / base) if base > 0 else '      -'


def cell_lines(cell):
    lines = []
    b = cell['backends']
    for op in OPERATIONS + ('total',):
        if op == 'total':
            calls = dict((k, sum(b[k][o]['calls_median'] for o in OPERATIONS)) for k in BACKENDS)
            secs = dict((k, sum(b[k][o]['seconds_median'] for o in OPERATIONS)) for k in BACKENDS)
        else:
            calls = dict((k, b[k][op]['calls_median']) for k in BACKENDS)
            secs = dict((k, b[k][op]['seconds_median']) for k in BACKENDS)
        lines.append('%-5s %6d %5d %3d  %-11s | %5d %6d %6d %6d | %9.3f %9.3f %9.3f %9.3f | %8s %8s %10s' % (
            cell['axis'], cell['consumers'], cell['store'], cell['repeats'], op,
            calls['mariadb'], calls['embedded'], calls['http'], calls['direct'],
            secs['mariadb'], secs['embedded'], secs['http'], secs['direct'],
            _ratio(secs['mariadb'], secs['embedded']), _ratio(secs['http'], secs['embedded']),
            _ratio(secs['direct'], secs['embedded'])))
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n', maxsplit=1)[0])
    parser.add_argument('--quick', action='store_true', help='consumers 10,100 and nodes 10,100, 1 repeat')
    parser.add_argument('--consumers', help='axis (a), consumers on the measured node (default 10,100,1000,10000)')
    parser.add_argument('--nodes', help='axis (b), nodes in the store (default 10,100,1000); "" skips it')
    parser.add_argument('--repeats', type=int, help='measured nodes per cell (default 3 up to 100 consumers, else 1)')
    parser.add_argument('--json', help='write every run\'s figures here')
    args = parser.parse_args(argv)
    consumers = args.consumers if args.consumers is not None else ('10,100' if args.quick else '10,100,1000,10000')
    nodes = args.nodes if args.nodes is not None else ('10,100' if args.quick else '10,100,1000')
    cells = [('a', int(n), STORE_FOR_CONSUMERS) for n in consumers.split(',') if n.strip()]
    cells += [('b', CONSUMERS_PER_NODE_FOR_NODES, int(s)) for s in nodes.split(',') if s.strip()]
    ctx = {'workdir': tempfile.mkdtemp(prefix='bench-matrix-'), 'mp': multiprocessing.get_context('spawn')}
    started = time.perf_counter()
    print('bench_matrix: %s, Python %s, %d CPUs; backends %s; M = %d VGPU consumers per measured node' % (
        platform.platform(), platform.python_version(), os.cpu_count() or 0, ', '.join(BACKENDS), VGPU_CONSUMERS))
    print('seconds per operation (median of "rep" measured nodes), backend calls per node per operation; '
          'axis a: N consumers on a node in a store of %d nodes, axis b: %d consumers per node' % (
              STORE_FOR_CONSUMERS, CONSUMERS_PER_NODE_FOR_NODES))
    print(HEADER)
    sys.stdout.flush()
    done = []
    try:
        for axis, n, store in cells:
            repeats = args.repeats or repeats_for(n, args.quick)
            repeats = min(repeats, store)
            cell = run_cell(ctx, axis, n, store, repeats)
            done.append(cell)
            for line in cell_lines(cell):
                print(line)
            print('%-5s setup (untimed) s: %s' % ('', ', '.join('%s %.1f' % (k, cell['setup_seconds'][k]) for k in BACKENDS)))
            sys.stdout.flush()
    finally:
        shutil.rmtree(ctx['workdir'], ignore_errors=True)
    wall = time.perf_counter() - started
    print('wall time %.1f s (%.1f min), setup included' % (wall, wall / 60.0))
    if args.json:
        with open(args.json, 'w') as handle:
            json.dump({'cells': done, 'wall_seconds': wall}, handle, indent=1, sort_keys=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
