# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run the reliability suites of issue 12 and print their figures (docs/reliability.md).

    .venv/bin/python tests/reliability/run.py --quick     # what `make test` runs, < 2 min
    .venv/bin/python tests/reliability/run.py --full      # the documented figures (make reliability)
    .venv/bin/python tests/reliability/run.py --suite rest --faults 30 --seed 5 -v

Suites: ``writers`` (a), ``rest`` and ``embedded`` (b), ``fleet`` (c).  Every server,
proxy and store is on 127.0.0.1 / in a temp dir.  Exit status 1 when any suite has a
lost, doubled or mismatched allocation, a partial state or a rerun that did not converge.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402

QUICK = {'trials': 5, 'faults': 6, 'kills': 20, 'nodes': 12, 'rerun': False}
FULL = {'trials': 200, 'faults': 120, 'kills': 120, 'nodes': 40, 'rerun': True}
SUITES = ('writers', 'rest', 'embedded', 'fleet')


def run_suite(suite, workdir, sizes, seed, log=None, db=None):
    path = os.path.join(workdir, suite)
    os.makedirs(path)
    if suite == 'writers':
        server = harness.make_server(os.path.join(path, 'placement'), db)
        server.start()
        try:
            figures = harness.run_writers(server, path, trials=sizes['trials'], seed=seed, log=log)
            counts = server.deadlock_counts()
            figures['notes'].update({'placement_db_retries': counts.get('retries'),
                                     'db_deadlocks': counts.get('deadlocks'),
                                     'placement_500s': harness.count_500s(server)})
            return figures
        finally:
            server.stop()
    if suite == 'rest':
        return harness.run_rest_faults(path, faults=sizes['faults'], seed=seed + 1, log=log, db=db)
    if suite == 'embedded':
        return harness.run_embedded_kills(path, kills=sizes['kills'], seed=seed + 2, log=log)
    return harness.run_fleet(path, nodes=sizes['nodes'], serial=10, forks=10, rerun=sizes['rerun'], log=log)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument('--quick', action='store_true', help='the short run (default)')
    mode.add_argument('--full', action='store_true', help='the documented full run')
    parser.add_argument('--suite', action='append', choices=SUITES, help='run only this suite (repeatable)')
    parser.add_argument('--trials', type=int, help='(a) trials')
    parser.add_argument('--faults', type=int, help='(b) REST faults')
    parser.add_argument('--kills', type=int, help='(b) embedded SIGKILLs')
    parser.add_argument('--nodes', type=int, help='(c) fleet size')
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--db', choices=('sqlite', 'mariadb', 'postgresql'), default='sqlite',
                        help='the real Placement\'s database for the writers and rest suites: SQLite behind '
                             'threaded wsgiref (default), or MariaDB / PostgreSQL behind gunicorn, 4 workers')
    parser.add_argument('--json', help='also write the figures to this file')
    parser.add_argument('--keep', action='store_true', help='keep the work directory')
    parser.add_argument('-v', '--verbose', action='store_true', help='one line per trial')
    args = parser.parse_args(argv)
    sizes = dict(FULL if args.full else QUICK)
    for key in ('trials', 'faults', 'kills', 'nodes'):
        if getattr(args, key) is not None:
            sizes[key] = getattr(args, key)
    log = (lambda msg: print(msg, flush=True)) if args.verbose else None
    workdir = tempfile.mkdtemp(prefix='reliability-')
    results = []
    try:
        for suite in args.suite or SUITES:
            figures = run_suite(suite, workdir, sizes, args.seed, log=log,
                                db=None if args.db == 'sqlite' else args.db)
            results.append(figures)
            print(harness.format_figures(figures), flush=True)
    finally:
        if args.keep:
            print('work directory kept: %s' % workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    if args.json:
        with open(args.json, 'w') as fh:
            json.dump(results, fh, indent=1, sort_keys=True, default=str)
    ok = all(harness.clean(f) for f in results)
    print('reliability: %s' % ('every figure clean' if ok else 'DEFECTS found (see above)'))
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
