# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""`make demo`: a rolling reshape of a simulated fleet, on the embedded Placement.

1. builds a simulated fleet under ./out/demo/ (tools/simfleet.py: a dozen compute nodes,
   each a local-connection inventory host with its own fake sysfs and libvirt XML; GPUs
   with mdevs held by guests, an SR-IOV node, a node already reshaped, a migration in
   flight, one shared DISK_GB pool) and seeds the embedded Placement with the legacy flat
   layout (VGPU on the root) and every guest's allocations;
2. runs ``ansible-playbook placement.upgrade.rolling_reshape`` on it (the collection from
   this working tree, the rolling_progress callback on, a canary batch of 1 then 25 %, the
   demo's hooks "disabling" nova-compute on each node around its reshape);
3. prints the fleet summary (nodes reshaped / skipped / deferred / failed, allocations
   moved, time taken) and the path of the report (HTML and Markdown).  The reasons and the
   next steps with their commands are the play summary's, just above it (printed once); with
   ``--quiet`` (no ansible-playbook output) the summary prints them, as the report has them.

Every command it prints runs as printed from the directory the demo was started in (the
project root for ``make demo``), and writes only under the output directory:
``out/demo/ansible-playbook -i out/demo/inventory.yml ...``; the report's commands (the rerun, the
rollback) run from anywhere: ``/abs/out/demo/ansible-playbook -e @/abs/out/demo/demo-vars.json -i ...``.  ``out/demo/ansible-playbook`` is
a script the demo writes: the venv's ansible-playbook (``.venv/bin/ansible-playbook``) with
``ANSIBLE_CONFIG=out/demo/ansible.cfg`` and no Python bytecode cache written in the working
tree.  The demo's ansible.cfg keeps Ansible's own files (home, temp, log) there too and names
the collection; the inventory carries the demo's stores (the embedded Placement, the
snapshot and report directories), its hooks and how the report spells its commands, so a
rollback or a rerun finds them; demo-vars.json holds the roll's batches.

Before removing anything it checks that this Python can run the demo (ansible-core and the
collection importable: the project venv) and that the output directory is one a demo made;
it says what it removes.

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
import shlex
import shutil
import subprocess
import sys
import textwrap
import time

# the demo writes only under its output directory: no __pycache__ in the working tree
sys.dont_write_bytecode = True

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import simfleet  # noqa: E402

#: the file that marks a directory as one the demo made (and may remove)
MARKER = '.placement-upgrade-demo'
#: what the demo's run needs in this Python (the project venv has all of it)
REQUIRED_MODULES = (
    ('ansible', 'ansible-core'),
    ('ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded',
     'the collection placement.upgrade (make venv links this working tree into .venv)'),
)
#: the roll the demo runs (and prints)
PLAYBOOK = 'placement.upgrade.rolling_reshape'

WRAPPER = """\
#!/bin/sh
# Written by tools/demo.py: the project venv's ansible-playbook with the demo's settings, from
# any directory: its ansible.cfg (what Ansible writes stays in {out}), no Python bytecode cache
# written in the working tree, and none of the caller's settings that would override ansible.cfg.
unset ANSIBLE_CALLBACKS_ENABLED ANSIBLE_COLLECTIONS_PATH ANSIBLE_COLLECTIONS_PATHS ANSIBLE_HOME \\
  ANSIBLE_LOCAL_TEMP ANSIBLE_REMOTE_TEMP ANSIBLE_LOG_PATH
ANSIBLE_CONFIG={config}
PYTHONDONTWRITEBYTECODE=1
export ANSIBLE_CONFIG PYTHONDONTWRITEBYTECODE
exec {ansible_playbook} "$@"
"""

ANSIBLE_CFG = """\
# Written by tools/demo.py for the demo run.  Every Ansible command of the demo runs with
# ANSIBLE_CONFIG pointing here ({out}/ansible-playbook sets it): what Ansible writes stays in
# {out}.
[defaults]
forks = 2
callbacks_enabled = placement.upgrade.rolling_progress
display_skipped_hosts = false
retry_files_enabled = false
host_key_checking = false
interpreter_python = auto_silent
nocows = true
collections_path = {collections}
home = {home}
local_tmp = {home}/tmp
remote_tmp = {home}/tmp
log_path = {log}
"""


def shown(path):
    """``path`` as printed in a command: relative to the current directory when under it."""
    path = os.path.abspath(path)
    relative = os.path.relpath(path, os.getcwd())
    return path if relative == os.pardir or relative.startswith(os.pardir + os.sep) else relative


def missing_prerequisites():
    """What this Python lacks to run the demo (checked before anything is removed or written)."""
    problems = []
    for module, what in REQUIRED_MODULES:
        try:
            __import__(module)
        except ImportError as exc:
            problems.append('%s cannot be imported (%s)' % (what, exc))
    if not problems and not _ansible_playbook():
        problems.append('ansible-playbook is neither next to %s nor on the PATH' % sys.executable)
    return problems


def clear_out(out):
    """Remove a previous demo run in ``out``; ``None``, or why ``out`` is left alone."""
    if not os.path.lexists(out):
        return None
    if os.path.islink(out) or not os.path.isdir(out):
        return '%s exists and is not a directory' % out
    entries = os.listdir(out)
    if not entries:
        return None
    if MARKER not in entries and 'demo-vars.json' not in entries:
        return ('%s is not a directory this demo made (no %s in it): it is left as it is. Choose another --out, '
                'or remove it yourself' % (out, MARKER))
    print('demo: removing the previous demo run in %s (its fleet, Placement store, snapshots and reports)'
          % shown(out))
    shutil.rmtree(out)
    return None


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
    """ansible-playbook of this Python's environment (the venv's), else the one on the PATH."""
    candidate = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')
    if os.path.exists(candidate):
        return candidate
    return shutil.which('ansible-playbook')


def _write(path, text):
    with open(path, 'w') as handle:
        handle.write(text)


def prepare(out, nodes=12, unmapped=(), serial=None, hooks=True):
    """Build the fleet and the run's files in ``out`` (new or emptied by :func:`clear_out`).

    Returns (fleet, extra vars path, env).  The inventory carries the demo's stores and hooks (so
    every command on it finds them), the extra vars the roll's batches, ansible.cfg Ansible's own
    files.
    """
    if not os.path.isdir(out):
        os.makedirs(out)
    _write(os.path.join(out, MARKER), 'tools/demo.py made this directory and removes it at its next run.\n')
    started = time.time()
    stores = {
        'rolling_reshape_snapshot_dir': os.path.join(out, 'snapshots'),
        'rolling_reshape_report_dir': os.path.join(out, 'reports'),
        'rolling_reshape_report_title': 'Rolling reshape of the simulated fleet (%d nodes)' % nodes,
        # the commands the report and the play print run as printed, from anywhere, with the demo's
        # batches (the same extra vars as the roll): the one rerun command there is
        'rolling_reshape_report_command': '%s -e %s' % (shlex.quote(os.path.join(out, 'ansible-playbook')),
                                                        shlex.quote('@' + os.path.join(out, 'demo-vars.json'))),
    }
    if hooks:
        # the demo's hooks around each node's reshape (a rehearsal sets its own: none)
        stores['rolling_reshape_pre_tasks'] = os.path.join(REPO, 'playbooks', 'hooks', 'demo_disable_compute.yml')
        stores['rolling_reshape_post_tasks'] = os.path.join(REPO, 'playbooks', 'hooks', 'demo_enable_compute.yml')
    fleet = simfleet.build(out, nodes=nodes, unmapped=unmapped, inventory_vars=stores)
    built = time.time() - started
    # the shape of the roll: play keywords, which inventory variables cannot set
    extra = {
        'rolling_reshape_hosts': 'compute',
        'rolling_reshape_serial': serial if serial is not None else [1, '25%'],
    }
    extra_path = os.path.join(out, 'demo-vars.json')
    _write(extra_path, json.dumps(extra, indent=2, sort_keys=True) + '\n')
    home = os.path.join(out, '.ansible')
    _write(os.path.join(out, 'ansible.cfg'), ANSIBLE_CFG.format(
        out=out, collections=_collections_link(out), home=home, log=os.path.join(out, 'ansible.log')))
    wrapper = os.path.join(out, 'ansible-playbook')
    _write(wrapper, WRAPPER.format(out=out, config=shlex.quote(os.path.join(out, 'ansible.cfg')),
                                   ansible_playbook=shlex.quote(os.path.abspath(_ansible_playbook()))))
    os.chmod(wrapper, 0o755)
    env = dict(os.environ)
    fleet['build_seconds'] = built
    fleet['report_command'] = stores['rolling_reshape_report_command']
    fleet['extra_vars_file'] = extra_path
    fleet['ansible_playbook'] = wrapper
    return fleet, extra_path, env


def command_words(fleet, playbook, *args):
    """The argv of an Ansible command on the demo's fleet (what is run and what is printed)."""
    return [fleet['ansible_playbook'], '-i', fleet['inventory'], playbook] + list(args)


def printable(fleet, words):
    """``words`` as one shell line that runs from the current directory."""
    shown_words = []
    for word in words:
        if os.path.isabs(word):
            word = shown(word)
        elif word.startswith('@') and os.path.isabs(word[1:]):
            word = '@' + shown(word[1:])
        shown_words.append(word)
    if '/' not in shown_words[0]:
        shown_words[0] = './' + shown_words[0]   # a program in the current directory, not one on the PATH
    return ' '.join(shlex.quote(w) for w in shown_words)


def roll_words(fleet, check=False):
    words = command_words(fleet, PLAYBOOK, '-e', '@' + fleet['extra_vars_file'])
    return words + ['--check'] if check else words


def step_parts(fleet, step):
    """``(text, command)`` of a next step of the report (its command as the report has it: it starts
    with the demo's ``rolling_reshape_report_command``), or ``(step, None)``."""
    program = fleet.get('report_command') or 'ansible-playbook'
    at = step.find(': ' + program + ' ')
    if at < 0:
        return step, None
    return step[:at], step[at + 2:]


def run_playbook(fleet, extra_path, env, check=False, quiet=False):
    """Run the roll as :func:`roll_words` says (the command the demo prints), from here."""
    cmd = roll_words(fleet, check=check)
    started = time.time()
    if quiet:
        proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, universal_newlines=True, check=False)
        output = proc.stdout
    else:
        proc = subprocess.run(cmd, env=env, check=False)
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


def print_summary(fleet, summary, report_dir, seconds, check=False, play_shown=False):
    """The demo's summary of the roll.  ``play_shown``: ansible-playbook's output was shown, whose play
    summary says each deferral or failure reason and each next step (the report's commands) already:
    they are not printed twice, only pointed to.  Without it (--quiet) they are printed here, the
    commands as the report has them."""
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
    ]
    # the other figures of the nodes' journals (PCI healing, the VCPU -> PCPU conversion), when not 0
    figures = totals.get('figures') or {}
    for key, would, did in (('allocations_created', 'to create', 'created'),
                            ('allocations_converted', 'to convert', 'converted'),
                            ('allocations_removed', 'to remove', 'removed')):
        if figures.get(key):
            lines.append('  allocations %-9s%4d' % (would if check else did, figures[key]))
    lines += [
        '  time taken           %s (roll) / %s (whole demo)' % (
            _seconds(totals['duration']), _seconds(seconds)),
    ]
    if play_shown:
        named = [('deferred', [item['node'] for item in summary['deferred']]),
                 ('would stop the roll' if check else 'failed', [item['node'] for item in summary['failed']])]
        for what, nodes in named:
            if nodes:
                lines += _wrapped('  %s: ' % what, ', '.join(nodes))
    else:
        for item in summary['deferred']:
            lines += _wrapped('  deferred %s: ' % item['node'], item['reason'])
        for item in summary['failed']:
            lines += _wrapped('  %s %s: ' % ('STOPS   ' if check else 'FAILED  ', item['node']), item['reason'])
    if summary['unreached']:
        lines.append('  not reached (untouched): %s' % ', '.join(summary['unreached']))
    reasons = ' '.join(str(item['reason']) for item in summary['deferred'] + summary['failed'])
    if 'openstack ' in reasons or 'nova-manage ' in reasons:
        lines += _wrapped('  note: ', 'the openstack and nova-manage commands in the reasons are for a real cloud; '
                          'the simulated fleet has no nova to ask.')
    steps = summary.get('next_steps') or []
    if play_shown and (steps or summary['deferred'] or summary['failed']):
        lines += _wrapped('  see: ', 'the reasons and the next steps (their commands run as printed) are in the '
                          'play summary above, and in the report:')
    elif not play_shown:
        for step in steps:
            text, command = step_parts(fleet, step)
            if command is None:
                lines += _wrapped('  next: ', step)
            else:
                # the command on a line of its own, never wrapped: it runs as printed
                lines += _wrapped('  next: ', text + ':')
                lines.append(' ' * 11 + command)
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
    parser.add_argument('--out', default=os.path.join(REPO, 'out', 'demo'),
                        help='output directory (a previous demo run there is removed first)')
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
    given = ' '.join(shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv))
    problems = missing_prerequisites()
    if problems:
        parser.exit(2, 'demo: this Python (%s) cannot run the demo: %s. Run it with the project venv: '
                       '.venv/bin/python tools/demo.py%s, or make demo%s (make builds .venv first). '
                       'Nothing was removed or written.\n'
                    % (sys.executable, '; '.join(problems), ' ' + given if given else '',
                       ' DEMO_ARGS=%s' % shlex.quote(given) if given else ''))
    try:
        simfleet.fleet_plan(nodes=args.nodes, unmapped=args.unmapped)
    except ValueError as exc:
        parser.exit(2, 'demo: %s; nothing was removed or written\n' % exc)
    refused = clear_out(out)
    if refused:
        parser.exit(2, 'demo: %s; nothing was removed or written\n' % refused)
    print('demo: building a simulated fleet of %d compute nodes in %s' % (args.nodes, shown(out)))
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
    print('demo: the roll%s, from %s (run it again with this command; the commands below run from here too):'
          % (' in check mode' if args.check else '', os.getcwd()))
    print(' ' * 6 + printable(fleet, roll_words(fleet, check=args.check)))
    sys.stdout.flush()
    rc, _seconds_taken, output = run_playbook(fleet, extra_path, env, check=args.check, quiet=args.quiet)
    summary, path = load_summary(out)
    if summary is None:
        if output:
            print(output)
        print('demo: the roll wrote no report (%s missing); ansible-playbook exited %d' % (path, rc))
        return rc or 1
    report_dir = os.path.realpath(os.path.dirname(path))
    print_summary(fleet, summary, report_dir, time.time() - started, check=args.check, play_shown=not args.quiet)
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
