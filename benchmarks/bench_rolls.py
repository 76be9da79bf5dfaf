# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rolls of a 40-node fleet on Placement as production runs it, side by side (issue 28).

Usage (from the repository root)::

    make bench-rolls                                     # the full run (about 70 minutes on 2 cores)
    make bench-rolls BENCH_ROLLS_ARGS=--quick            # one repetition of each (about 10 minutes)
    .venv/bin/python benchmarks/bench_rolls.py [--quick] [--repeat N] [--nodes N] [--json FILE]
        [--configs mariadb:10,mariadb:20,mariadb:2x10,...]

Each run starts a fresh real Placement 16.0.0 (tests/placement_server.py): on MariaDB 10.11
behind gunicorn with 4 worker processes (oslo.db's deadlock retries logged), or on SQLite behind
one threaded wsgiref process (the test suites' fast lane); seeds a simulated fleet into it
(tools/simfleet.py: every node on one shared DISK_GB pool, as a Ceph-backed cloud has it) and
runs ``playbooks/rolling_reshape.yml`` over it with ``serial`` = ``forks`` = N, or two such rolls
at once on disjoint halves of the fleet (``2xN``).  Then it reads the whole Placement back
(tests/reliability/harness.py ``run_rolls``): every consumer's totals against the fleet's (lost,
doubled), usages against allocations, each node's outcome against the expected one.

A configuration is ``<database>:<serial>`` or ``<database>:2x<serial>``.  The table gives, per
configuration, the runs, the nodes that failed, the consumers lost or doubled, nodes per minute
(median over the runs, the roll alone, seeding and checks excluded), generation-conflict
retries per node, the POST /reshaper sent again after Placement's deadlock-retry 409 (settled),
the deadlocks MariaDB logged and the 500s Placement answered.
"""

from __future__ import absolute_import, division, print_function

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
for _path in (os.path.join(REPO, 'tests', 'reliability'), os.path.join(REPO, 'tests'), os.path.join(REPO, 'tools')):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import harness  # noqa: E402
from placement_server import PlacementServer  # noqa: E402

FULL = ['mariadb:1', 'mariadb:10', 'mariadb:20', 'mariadb:2x10', 'sqlite:1', 'sqlite:10', 'sqlite:20']
#: the configurations a real fleet runs, repeated --repeat times; the others run once
REPEATED = ('mariadb:10', 'mariadb:20', 'mariadb:2x10')


def parse_config(text):
    db, _sep, how = text.partition(':')
    if db not in ('mariadb', 'sqlite', 'postgresql') or not how:
        raise SystemExit('bad configuration %r: <mariadb|sqlite|postgresql>:<serial> or :2x<serial>' % text)
    rolls, serial = (int(how.split('x')[0]), int(how.split('x')[1])) if 'x' in how else (1, int(how))
    return db, rolls, serial


def one_run(db, rolls, serial, nodes, workdir):
    if db == 'sqlite':
        server = PlacementServer(workdir=os.path.join(workdir, 'placement'))
    else:
        server = PlacementServer.production(db=db, workers=4, workdir=os.path.join(workdir, 'placement'))
    server.start()
    try:
        return harness.run_rolls(server, workdir, nodes=nodes, serial=serial, forks=serial, rolls=rolls)
    finally:
        server.stop()


def row(config, runs):
    notes = [r['notes'] for r in runs]
    nodes = sum(r['trials'] for r in runs)
    per_min = [n['nodes_per_minute'] for n in notes if n.get('nodes_per_minute')]

    def total(key):
        values = [n.get(key) for n in notes]
        return None if any(v is None for v in values) else sum(values)
    return {
        'config': config, 'runs': len(runs),
        'failed_nodes': total('failed_nodes'),
        'runs_with_a_failed_node': len([n for n in notes if n.get('failed_nodes')]),
        'lost': sum(r['lost'] for r in runs), 'doubled': sum(r['doubled'] for r in runs),
        'mismatched': sum(r['mismatched'] for r in runs),
        'partial_nodes': sum(r['outcomes'].get(harness.PARTIAL, 0) for r in runs),
        'nodes_per_minute_median': round(statistics.median(per_min), 1) if per_min else None,
        'nodes_per_minute_range': [min(per_min), max(per_min)] if per_min else None,
        'retries_per_node': round(total('retries') / float(nodes), 2) if nodes else None,
        'max_retries_on_a_node': max(n.get('max_retries_on_a_node', 0) for n in notes),
        'deadlock_409_settled': total('deadlock_409_settled'),
        'db_deadlocks': total('db_deadlocks'),
        'placement_500s': total('placement_500s'),
        'playbook_rc': sorted(set(str(n.get('playbook_rc')) for n in notes)),
    }


def print_table(rows):
    head = ('config', 'runs', 'failed nodes', 'lost/doubled', 'nodes/min (median, range)', 'retries/node (max)',
            'deadlock 409 settled', 'db deadlocks', '500s')
    lines = [' | '.join(head), ' | '.join('---' for _col in head)]
    for r in rows:
        rng = r['nodes_per_minute_range']
        lines.append(' | '.join(str(x) for x in (
            r['config'], r['runs'], '%s (in %d run(s))' % (r['failed_nodes'], r['runs_with_a_failed_node']),
            '%d/%d' % (r['lost'], r['doubled']),
            '%s (%s-%s)' % (r['nodes_per_minute_median'], rng[0], rng[1]) if rng else '-',
            '%s (%s)' % (r['retries_per_node'], r['max_retries_on_a_node']),
            r['deadlock_409_settled'], '-' if r['db_deadlocks'] is None else r['db_deadlocks'],
            '-' if r['placement_500s'] is None else r['placement_500s'])))
    print('\n'.join('| %s |' % line for line in lines))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n', maxsplit=1)[0])
    parser.add_argument('--quick', action='store_true', help='one run of each configuration')
    parser.add_argument('--repeat', type=int, default=10, help='runs of each of %s (default 10)' % ', '.join(REPEATED))
    parser.add_argument('--nodes', type=int, default=40)
    parser.add_argument('--configs', default=','.join(FULL))
    parser.add_argument('--json', help='write every run\'s figures there')
    parser.add_argument('--keep', action='store_true', help='keep the work directories')
    args = parser.parse_args(argv)
    configs = [c.strip() for c in args.configs.split(',') if c.strip()]
    for config in configs:
        parse_config(config)
    started = time.time()
    results = dict((c, []) for c in configs)
    plan = []
    repeat = 1 if args.quick else args.repeat
    for i in range(max(repeat, 1)):
        # interleaved: a slow spell of the machine falls on every configuration alike
        plan.extend(c for c in configs if i == 0 or c in REPEATED)
    for n, config in enumerate(plan, 1):
        db, rolls, serial = parse_config(config)
        workdir = tempfile.mkdtemp(prefix='bench-rolls-')
        try:
            fig = one_run(db, rolls, serial, args.nodes, workdir)
        finally:
            if not args.keep:
                shutil.rmtree(workdir, ignore_errors=True)
        results[config].append(fig)
        notes = fig['notes']
        print('[%d/%d] %s: %s, %s nodes/min, failed nodes %s, lost %d, doubled %d, retries %s, deadlock 409 '
              'settled %s, db deadlocks %s, 500s %s' % (
                  n, len(plan), config, notes.get('statuses'), notes.get('nodes_per_minute'),
                  notes.get('failed_nodes'), fig['lost'], fig['doubled'], notes.get('retries'),
                  notes.get('deadlock_409_settled'), notes.get('db_deadlocks'), notes.get('placement_500s')),
              flush=True)
        for defect in fig['defects']:
            print('    defect: %s' % '; '.join(defect['details'][:5])[:1500], flush=True)
    rows = [row(c, results[c]) for c in configs]
    print('\n%d-node fleet, %d run(s) in %.0f s on %d cores:\n'
          % (args.nodes, len(plan), time.time() - started, os.cpu_count() or 0))
    print_table(rows)
    if args.json:
        with open(args.json, 'w') as fh:
            json.dump({'rows': rows, 'runs': results}, fh, indent=1, sort_keys=True, default=str)
    bad = [r['config'] for r in rows if r['config'].startswith('mariadb') and (
        r['failed_nodes'] or r['lost'] or r['doubled'] or r['partial_nodes'])]
    if bad:
        print('\nMariaDB configurations with a failed, partial or unbalanced node: %s' % ', '.join(bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
