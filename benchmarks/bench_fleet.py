# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rolling playbook against Ansible's floor (issue 13 targets 1, 2 and 5).

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_fleet.py [--nodes 12,200,1000] [--serial 1,10] [--json FILE]

For every fleet size N and batch size S, two fresh simulated fleets of N nodes are built
(tools/simfleet.py: local-connection hosts with fake sysfs and libvirt XML, the embedded
Placement seeded flat) and rolled in the same run, one after the other:

* ``floor``: benchmarks/floor/floor.yml, the cheapest play doing the node's work: ONE module
  run per node (discover, plan, snapshot, reshape, verify, record; the collection's own core)
  at serial S, and the run's report rendered once at the end;
* ``roll``: playbooks/rolling_reshape.yml at serial S (pre-flight, the role, the report), the
  rolling_progress callback on, no hooks, no nova steps: what an operator runs.  The simulated
  nodes are this controller (local connection, its Python), so discovery runs in process
  there, as the reshape does (plugins/action/device_info.py);
* ``remote``: the same roll with discovery run as a module, as on a real fleet where it runs
  on the node over SSH: the nodes' interpreter is a wrapper script around this Python, so the
  device_info action ships its module (``--no-remote`` leaves this one out).

Both use forks = S (``--forks F``: F for every run), and the controller's Python keeps its bytecode
(__pycache__), as an installed ansible-core and collection do.  Printed per (N, S): seconds per node of
each, their ratio, the roll's total time, the seconds from ansible-playbook's start to the first node's
pass (its discovery: the pre-flight before it, when nothing moves; from the report's ``started``),
the peak RSS of the ansible-playbook process (the controller: facts of every host live there), and
whether both ended with the same status per node (they must).

``--first-move``: only the time from ansible-playbook's start to the first node's snapshot file (the
roll writes it right before that node's POST /reshaper: nothing has moved before it), per kind; the roll
is stopped there and no floor runs (issue 45: the time before the first node moves at 1,000 nodes).

A measurement tool, not a test: nothing here passes or fails on timing.  The fleet build (not
counted) takes about 1 s per 20 nodes.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(_HERE)
sys.path.insert(0, os.path.join(REPO, 'tools'))

import simfleet  # noqa: E402

CFG = """\
[defaults]
forks = {forks}
{callbacks}
retry_files_enabled = false
host_key_checking = false
interpreter_python = auto_silent
nocows = true
library = {library}
callback_plugins = {callbacks_dir}
"""


def _ansible_playbook():
    candidate = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')
    return candidate if os.path.exists(candidate) else shutil.which('ansible-playbook')


def _collections(out):
    parent = os.path.join(out, 'collections', 'ansible_collections', 'placement')
    os.makedirs(parent)
    os.symlink(REPO, os.path.join(parent, 'upgrade'))
    return os.path.join(out, 'collections')


def _callbacks(kind, profile):
    names = (['placement.upgrade.rolling_progress'] if kind != 'floor' else []) + (['task_times'] if profile else [])
    return 'callbacks_enabled = %s' % ', '.join(names) if names else ''


def _first_snapshot(snapshot_dir):
    """True once a node's snapshot is in the folder: written right before that node's POST /reshaper."""
    try:
        return any(name.endswith('.json') and not name.endswith('.latest.json') for name in os.listdir(snapshot_dir))
    except OSError:
        return False


def run_one(kind, nodes, serial, base, keep, profile=False, forks=None, first_move=False):
    out = os.path.join(base, '%s-%d-s%d' % (kind, nodes, serial))
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    inventory_vars = None
    if kind == 'remote':
        # another interpreter path than this one: the actions of the nodes' tasks run their module
        wrapper = os.path.join(out, 'node-python')
        with open(wrapper, 'w') as handle:
            handle.write('#!/bin/sh\nexec %s "$@"\n' % sys.executable)
        os.chmod(wrapper, 0o755)
        inventory_vars = {'ansible_python_interpreter': wrapper}
    fleet = simfleet.build(out, nodes=nodes, inventory_vars=inventory_vars)
    run_id = 'bench-%s-%d-%d' % (kind, nodes, serial)
    with open(os.path.join(out, 'ansible.cfg'), 'w') as handle:
        handle.write(CFG.format(
            forks=max(forks or serial, 1),
            callbacks=_callbacks(kind, profile),
            library=os.path.join(_HERE, 'floor', 'library'), callbacks_dir=os.path.join(_HERE, 'callbacks')))
    env = dict(os.environ)
    env.update({
        'ANSIBLE_CONFIG': os.path.join(out, 'ansible.cfg'),
        'ANSIBLE_COLLECTIONS_PATH': _collections(out),
        'ANSIBLE_LOCAL_TEMP': os.path.join(out, '.ansible', 'tmp'),
        'ANSIBLE_HOME': os.path.join(out, '.ansible'),
    })
    env.pop('ANSIBLE_CALLBACKS_ENABLED', None)
    times_path = os.path.join(out, 'task-times.json')
    env['BENCH_TASK_TIMES'] = times_path
    # the controller keeps its bytecode, as an installed ansible-core and collection do (a module
    # packed by AnsiballZ is compiled in each run whatever this says)
    env.pop('PYTHONDONTWRITEBYTECODE', None)
    if kind == 'floor':
        extra = {'bench_serial': serial, 'bench_out': out, 'bench_run_id': run_id}
        playbook = os.path.join(_HERE, 'floor', 'floor.yml')
    else:
        extra = {'rolling_reshape_hosts': 'compute', 'rolling_reshape_serial': serial,
                 'rolling_reshape_snapshot_dir': os.path.join(out, 'snapshots'),
                 'rolling_reshape_report_dir': os.path.join(out, 'reports'),
                 'preflight_run_id': run_id}
        playbook = os.path.join(REPO, 'playbooks', 'rolling_reshape.yml')
    cmd = [_ansible_playbook(), '-i', fleet['inventory'], playbook, '-e', json.dumps(extra)]
    started = time.time()
    with open(os.path.join(out, 'ansible-output.txt'), 'w') as log:
        proc = subprocess.Popen(cmd, env=env, cwd=out, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=first_move)
        first_move_s = None
        if first_move:
            # the time before the first node moves: until its snapshot file exists (the roll writes
            # it right before the node's POST /reshaper); then the roll is stopped, nothing else timed
            snapshot_dir = os.path.join(out, 'snapshots')
            while proc.poll() is None and not _first_snapshot(snapshot_dir):
                time.sleep(0.02)
            if proc.poll() is None:
                first_move_s = time.time() - started
                os.killpg(proc.pid, 15)
        # the peak RSS of ansible-playbook itself (its workers are its children, not counted)
        _pid, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status) if hasattr(os, 'waitstatus_to_exitcode') else status >> 8
    seconds = time.time() - started
    peak_rss_mb = usage.ru_maxrss / 1024.0  # Linux: KB
    summary_path = os.path.join(out, 'reports', run_id, 'summary.json')
    statuses = {}
    first_pass = None
    if os.path.exists(summary_path):
        with open(summary_path) as handle:
            summary = json.load(handle)
        statuses = dict((n['node'], n['status']) for n in summary['nodes'])
        # when the first node's pass began (its discovery; the report's started), from
        # ansible-playbook's start: the pre-flight's time, before which nothing moves
        if summary.get('started') is not None:
            first_pass = float(summary['started']) - started
    task_times = []
    if profile and os.path.exists(times_path):
        with open(times_path) as handle:
            task_times = json.load(handle)
    result = dict(kind=kind, nodes=nodes, serial=serial, rc=proc.returncode, seconds=seconds,
                  per_node=seconds / nodes, peak_rss_mb=peak_rss_mb, statuses=statuses,
                  out=out, task_times=task_times, first_pass=first_pass, first_move=first_move_s)
    if not keep:
        shutil.rmtree(out, ignore_errors=True)
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--nodes', default='12,200', help='fleet sizes, comma-separated (default 12,200)')
    parser.add_argument('--serial', default='1,10', help='batch sizes, comma-separated (default 1,10)')
    parser.add_argument('--out', default=os.path.join(REPO, 'out', 'bench-fleet'))
    parser.add_argument('--keep', action='store_true', help='keep the fleets and the ansible output')
    parser.add_argument('--json', help='also write the figures to this file')
    parser.add_argument('--profile', action='store_true',
                        help='also print where the time goes: seconds per task (summed over the nodes)')
    parser.add_argument('--forks', type=int,
                        help='ansible forks (default: the batch size, as an operator sets forks >= serial)')
    parser.add_argument('--no-remote', action='store_true',
                        help='leave out the roll with discovery run as a module (as on remote nodes)')
    parser.add_argument('--first-move', action='store_true',
                        help='only the time from ansible-playbook\'s start to the first node\'s snapshot (written '
                             'right before its POST /reshaper), for each kind: the roll is stopped there and no '
                             'floor is run')
    args = parser.parse_args(argv)
    kinds = ['roll'] if args.no_remote else ['roll', 'remote']
    rows = []
    if args.first_move:
        return _first_moves(args, kinds)
    print('%6s %6s | %12s | %-8s %10s %6s | %10s %10s %12s %12s | %s' % (
        'nodes', 'serial', 'floor s/node', 'kind', 's/node', 'ratio', 'total', '1st node s', 'floor RSS MB',
        'RSS MB', 'same outcome'))
    for nodes in [int(n) for n in args.nodes.split(',')]:
        for serial in [int(s) for s in args.serial.split(',')]:
            floor = run_one('floor', nodes, serial, args.out, args.keep, args.profile, args.forks)
            row = dict(floor=floor)
            for kind in kinds:
                roll = run_one(kind, nodes, serial, args.out, args.keep, args.profile, args.forks)
                same = floor['statuses'] == roll['statuses'] and len(roll['statuses']) == nodes
                print('%6d %6d | %12.3f | %-8s %10.3f %6.2f | %8.1f m %10s %12s %12s | %s%s' % (
                    nodes, serial, floor['per_node'], kind, roll['per_node'], roll['per_node'] / floor['per_node'],
                    roll['seconds'] / 60.0,
                    '-' if roll['first_pass'] is None else '%.1f' % roll['first_pass'],
                    '%.0f' % floor['peak_rss_mb'], '%.0f' % roll['peak_rss_mb'],
                    'yes' if same else 'NO', '' if floor['rc'] == roll['rc'] == 0 else
                    ' (rc floor %d, %s %d: see --keep output)' % (floor['rc'], kind, roll['rc'])))
                row[kind] = roll
                row['same_outcome_' + kind] = same
                sys.stdout.flush()
            for item in [floor] + [row[kind] for kind in kinds] if args.profile else ():
                for seconds, runs, name in item['task_times'][:12]:
                    print('        %-6s %8.2f s %5d x  %s' % (item['kind'], seconds, runs, name[:90]))
            sys.stdout.flush()
            rows.append(row)
    if args.json:
        with open(args.json, 'w') as handle:
            json.dump(rows, handle, indent=1, sort_keys=True)
    return 0


def _first_moves(args, kinds):
    print('%6s %6s %5s | %-8s | %s' % ('nodes', 'serial', 'forks', 'kind', 's before the first node moves'))
    rows = []
    for nodes in [int(n) for n in args.nodes.split(',')]:
        for serial in [int(s) for s in args.serial.split(',')]:
            for kind in kinds:
                roll = run_one(kind, nodes, serial, args.out, args.keep, forks=args.forks, first_move=True)
                print('%6d %6d %5d | %-8s | %s' % (
                    nodes, serial, max(args.forks or serial, 1), kind,
                    '%.1f' % roll['first_move'] if roll['first_move'] is not None
                    else 'no node moved (rc %d: see --keep output)' % roll['rc']))
                sys.stdout.flush()
                rows.append(roll)
    if args.json:
        with open(args.json, 'w') as handle:
            json.dump(rows, handle, indent=1, sort_keys=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
