# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""`make demo`: a rolling reshape of a simulated fleet, on the embedded Placement.

1. builds a simulated fleet under ./out/demo/ (tools/simfleet.py: a dozen compute nodes,
   each a local-connection inventory host with its own fake sysfs and libvirt XML; GPUs
   with mdevs held by guests, an SR-IOV node, a node already reshaped, a migration in
   flight, one shared DISK_GB pool) and seeds the embedded Placement with the legacy flat
   layout (VGPU on the root) and every guest's allocations;
2. runs ``ansible-playbook playbooks/rolling_reshape.yml`` on it (the collection from this
   working tree, the rolling_progress callback on, a canary batch of 1 then 25 %, the
   demo's hooks "disabling" nova-compute on each node around its reshape);
3. prints the fleet summary (nodes reshaped / skipped / deferred / failed, allocations
   moved, time taken) and the path of the report (HTML and Markdown).

Exit status: ansible-playbook's, or 3 when the outcome differs from what the simulated
fleet should give.  ``--check`` runs the whole roll in check mode (a plan report,
nothing changed); ``--unmapped compute-03`` adds a VGPU allocation no guest explains on
that node, so the roll stops there.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import simfleet  # noqa: E402

ANSIBLE_CFG = """\
# Written by tools/demo.py for the demo run.
[defaults]
forks = 2
callbacks_enabled = placement.upgrade.rolling_progress
display_skipped_hosts = false
retry_files_enabled = false
host_key_checking = false
interpreter_python = auto_silent
nocows = true
"""


def _collections_link(out):
    """out/collections/ansible_collections/placement/upgrade -> this working tree."""
    parent = os.path.join(out, 'collections', 'ansible_collections', 'placement')
    if not os.path.isdir(parent):
        os.makedirs(parent)
    link = os.path.join(parent, 'upgrade')
    if os.path.islink(link) or os.path.exists(link):
        os.unlink(link)
    os.symlink(REPO, link)
    return os.path.join(out, 'collections')


def _ansible_playbook():
    candidate = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')
    if os.path.exists(candidate):
        return candidate
    found = shutil.which('ansible-playbook')
    if not found:
        raise SystemExit('demo: ansible-playbook not found (run `make demo`, which builds the venv)')
    return found


def _write(path, text):
    with open(path, 'w') as handle:
        handle.write(text)


def prepare(out, nodes=12, unmapped=(), serial=None, hooks=True):
    """Build the fleet and the run's files; return (fleet, extra vars path, env)."""
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    started = time.time()
    fleet = simfleet.build(out, nodes=nodes, unmapped=unmapped)
    built = time.time() - started
    extra = {
        'rolling_reshape_hosts': 'compute',
        'rolling_reshape_serial': serial if serial is not None else [1, '25%'],
        'rolling_reshape_snapshot_dir': os.path.join(out, 'snapshots'),
        'rolling_reshape_report_dir': os.path.join(out, 'reports'),
        'rolling_reshape_report_title': 'Rolling reshape of the simulated fleet (%d nodes)' % nodes,
    }
    if hooks:
        extra['rolling_reshape_pre_tasks'] = os.path.join(REPO, 'playbooks', 'hooks', 'demo_disable_compute.yml')
        extra['rolling_reshape_post_tasks'] = os.path.join(REPO, 'playbooks', 'hooks', 'demo_enable_compute.yml')
    extra_path = os.path.join(out, 'demo-vars.json')
    _write(extra_path, json.dumps(extra, indent=2, sort_keys=True) + '\n')
    _write(os.path.join(out, 'ansible.cfg'), ANSIBLE_CFG)
    env = dict(os.environ)
    env.update({
        'ANSIBLE_CONFIG': os.path.join(out, 'ansible.cfg'),
        'ANSIBLE_COLLECTIONS_PATH': _collections_link(out),
        'ANSIBLE_LOG_PATH': os.path.join(out, 'ansible.log'),
        'ANSIBLE_LOCAL_TEMP': os.path.join(out, '.ansible', 'tmp'),
        'ANSIBLE_HOME': os.path.join(out, '.ansible'),
        'PYTHONDONTWRITEBYTECODE': '1',
    })
    env.pop('ANSIBLE_CALLBACKS_ENABLED', None)
    fleet['build_seconds'] = built
    return fleet, extra_path, env


def run_playbook(fleet, extra_path, env, check=False, quiet=False):
    cmd = [_ansible_playbook(), '-i', fleet['inventory'], os.path.join(REPO, 'playbooks', 'rolling_reshape.yml'),
           '-e', '@' + extra_path]
    if check:
        cmd.append('--check')
    started = time.time()
    if quiet:
        proc = subprocess.run(cmd, env=env, cwd=fleet['out_dir'], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, universal_newlines=True, check=False)
        output = proc.stdout
    else:
        proc = subprocess.run(cmd, env=env, cwd=fleet['out_dir'], check=False)
        output = None
    return proc.returncode, time.time() - started, output


def load_summary(out):
    path = os.path.join(out, 'reports', 'latest', 'summary.json')
    if not os.path.exists(path):
        return None, path
    with open(path) as handle:
        return json.load(handle), path


def outcome_problems(fleet, summary, check=False):
    """Differences between what the roll did and what the simulated fleet should give.

    A plan visits every node.  A real roll stops at the first failing node: the nodes of
    its batch still get their outcome, the later ones are not reached.
    """
    problems = []
    got = dict((n['node'], n['status']) for n in summary['nodes'])
    stopped = False
    for node in [n['name'] for n in fleet['nodes']]:
        want = fleet['expected'][node]
        if check and want == 'reshaped':
            want = 'planned'
        allowed = (want, 'unreached') if stopped else (want,)
        if got.get(node) not in allowed:
            problems.append('%s: expected %s, got %s' % (node, ' or '.join(allowed), got.get(node, 'nothing')))
        if want == 'failed' and not check:
            stopped = True
    return problems


def print_summary(fleet, summary, report_dir, seconds, check=False):
    totals = summary['totals']
    counts = totals['statuses']
    width = 64
    lines = [
        '=' * width,
        'Fleet summary%s' % (' (check mode: a plan, nothing was changed)' if check else ''),
        '-' * width,
        '  nodes                %4d' % totals['nodes'],
    ]
    if check:
        lines.append('  would reshape        %4d' % counts.get('planned', 0))
    else:
        lines.append('  reshaped             %4d' % counts.get('reshaped', 0))
    lines += [
        '  skipped (in layout)  %4d' % counts.get('noop', 0),
        '  deferred             %4d' % counts.get('deferred', 0),
        ('  would stop the roll  %4d' if check else '  failed               %4d') % counts.get('failed', 0),
    ]
    if counts.get('unreached'):
        lines.append('  not reached          %4d' % counts['unreached'])
    lines += [
        '  allocations %s  %4d  (of %d consumers)' % (
            'to move' if check else 'moved  ', totals['allocations_moved'], totals['consumers_moved']),
        '  child providers      %4d  %s' % (totals['providers_created'], 'to create' if check else 'created'),
        '  time taken           %s (roll) / %s (whole demo)' % (
            _seconds(totals['duration']), _seconds(seconds)),
    ]
    for item in summary['deferred']:
        lines += _wrapped('  deferred %s: ' % item['node'], item['reason'])
    for item in summary['failed']:
        lines += _wrapped('  %s %s: ' % ('STOPS   ' if check else 'FAILED  ', item['node']), item['reason'])
    if summary['unreached']:
        lines.append('  not reached (untouched): %s' % ', '.join(summary['unreached']))
    for step in summary.get('next_steps') or []:
        lines += _wrapped('  next: ', step)
    lines += [
        '-' * width,
        '  report   %s' % os.path.join(report_dir, 'report.html'),
        '           %s' % os.path.join(report_dir, 'report.md'),
        '  Placement (embedded): %s' % fleet['embedded_db'],
        '=' * width,
    ]
    print('\n'.join(lines))


def _seconds(value):
    return '-' if value is None else '%.1f s' % value


def _wrapped(head, text, width=100):
    return textwrap.wrap(' '.join(str(text).split()), width=width, initial_indent=head,
                         subsequent_indent=' ' * 11)


def main(argv=None):
    parser = argparse.ArgumentParser(description='Rolling reshape of a simulated fleet on the embedded Placement.')
    parser.add_argument('--out', default=os.path.join(REPO, 'out', 'demo'), help='output directory (wiped)')
    parser.add_argument('--nodes', type=int, default=12)
    parser.add_argument('--check', action='store_true', help='check mode: the plan report only')
    parser.add_argument('--unmapped', action='append', default=[],
                        help='give this GPU node a VGPU allocation no guest explains (the roll stops there)')
    parser.add_argument('--serial', help='batch sizes, e.g. 1 or "1,25%%" (default 1 then 25%%)')
    parser.add_argument('--no-hooks', action='store_true', help='do not run the demo hooks around each reshape')
    parser.add_argument('--quiet', action='store_true', help='hide the ansible-playbook output')
    args = parser.parse_args(argv)

    started = time.time()
    out = os.path.abspath(args.out)
    serial = None
    if args.serial:
        serial = [int(p) if p.strip().isdigit() else p.strip() for p in args.serial.split(',')]
    print('demo: building a simulated fleet of %d compute nodes in %s' % (args.nodes, out))
    try:
        fleet, extra_path, env = prepare(out, nodes=args.nodes, unmapped=args.unmapped, serial=serial,
                                         hooks=not args.no_hooks)
    except ValueError as exc:
        parser.exit(2, 'demo: %s\n' % exc)
    kinds = {}
    for node in fleet['nodes']:
        kinds.setdefault(node['kind'], []).append(node['name'])
    print('demo: seeded the embedded Placement in %.1f s with the legacy flat layout: %s'
          % (fleet['build_seconds'], '; '.join('%s %s' % (k, ', '.join(v)) for k, v in sorted(kinds.items()))))
    print('demo: ansible-playbook playbooks/rolling_reshape.yml -i %s%s'
          % (os.path.relpath(fleet['inventory']), ' --check' if args.check else ''))
    sys.stdout.flush()
    rc, _seconds_taken, output = run_playbook(fleet, extra_path, env, check=args.check, quiet=args.quiet)
    summary, path = load_summary(out)
    if summary is None:
        if output:
            print(output)
        print('demo: the roll wrote no report (%s missing); ansible-playbook exited %d' % (path, rc))
        return rc or 1
    report_dir = os.path.realpath(os.path.dirname(path))
    print_summary(fleet, summary, report_dir, time.time() - started, check=args.check)
    problems = outcome_problems(fleet, summary, check=args.check)
    if problems:
        print('demo: the outcome differs from what the simulated fleet should give:')
        for problem in problems:
            print('  ' + problem)
        return rc or 3
    if rc:
        print('demo: ansible-playbook exited %d (%s, as the simulated fleet says it must)'
              % (rc, 'the plan says a node would stop the roll' if args.check else 'the roll stopped'))
    return rc


if __name__ == '__main__':
    sys.exit(main())
