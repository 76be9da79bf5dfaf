# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every command the docs show for the demo, and every command the demo prints, runs as printed.

A fenced ``sh`` block of README.md or docs/*.md is runnable on the demo when the line before it
is ``<!-- runnable: demo -->`` (or ``<!-- runnable: demo, exit N -->`` when its last command
exits N on purpose).  Each document's marked blocks run in order, each as one ``bash -e``
script, from the project root of a fresh copy of the working tree (``.ci/copy-tree.sh``, its
``.venv`` the project's, linked entry by entry), in a fresh environment (no ANSIBLE_* or venv variables, an
empty HOME).  They must end with their status and write nothing outside ``out/``: neither in
the tree (no file added, changed or removed) nor in HOME.

The demo's own output (``make demo``) names the commands to run next (the roll itself, a rerun
of the deferred nodes, the rollback of the reshaped ones), each on a line of its own: every one
of them runs too, as printed, under the same rules.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MARK = re.compile(r'^<!--\s*runnable:\s*demo(?:,\s*exit\s+(\d+))?\s*-->\s*$')
FENCE = re.compile(r'^```(\S*)\s*$')
# a fresh login shell's PATH: nothing of the venv, pyenv or the test run
FRESH_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
# how the demo prints a command: on a line of its own, indented (its ansible-playbook script)
PRINTED = re.compile(r'^\s+(\S*/ansible-playbook -i \S+ placement\.upgrade\.\S+.*)$')
# how the play's summary (a debug task's list of lines) shows the report's next steps
PLAYED = re.compile(r'^\s+"next: [^"]*?: (/\S*/ansible-playbook (?:-e \S+ )?-i [^"]*)",?$')

pytestmark = pytest.mark.slow


def documents():
    names = ['README.md'] + sorted('docs/' + n for n in os.listdir(os.path.join(REPO, 'docs')) if n.endswith('.md'))
    return names


def runnable_blocks(text, name='document'):
    """``[(line number, expected exit status, script)]`` of the blocks marked runnable on the demo.

    A mark that is not directly followed by a fenced sh block is an error (a marked command must
    never be skipped silently).
    """
    lines = text.split('\n')
    blocks = []
    for index, line in enumerate(lines):
        mark = MARK.match(line.strip())
        if not mark:
            if 'runnable:' in line:
                raise ValueError('%s:%d: a runnable mark this test does not understand: %s' % (name, index + 1, line))
            continue
        fence = FENCE.match(lines[index + 1]) if index + 1 < len(lines) else None
        if not fence or fence.group(1) not in ('sh', 'bash'):
            raise ValueError('%s:%d: the runnable mark is not followed by a ```sh block' % (name, index + 1))
        end = index + 2
        while end < len(lines) and lines[end].strip() != '```':
            end += 1
        if end == len(lines):
            raise ValueError('%s:%d: the marked block is not closed' % (name, index + 1))
        script = '\n'.join(lines[index + 2:end]).strip()
        if not script:
            raise ValueError('%s:%d: the marked block is empty' % (name, index + 1))
        blocks.append((index + 2, int(mark.group(1) or 0), script))
    return blocks


def marked():
    found = []
    for name in documents():
        with open(os.path.join(REPO, name)) as handle:
            blocks = runnable_blocks(handle.read(), name)
        if blocks:
            found.append((name, blocks))
    return found


def printed_commands(output):
    """The commands the demo printed (each on a line of its own)."""
    return [m.group(1) for m in (PRINTED.match(line) for line in output.split('\n')) if m]


def _tree(root):
    """{relative path: (size, mtime)} of every file of the copy outside out/ (links not followed)."""
    state = {}
    for top, dirs, files in os.walk(root):
        rel_top = os.path.relpath(top, root)
        if rel_top == '.':
            dirs[:] = [d for d in dirs if d not in ('out', '.venv')]
        for name in files + [d for d in dirs if os.path.islink(os.path.join(top, d))]:
            path = os.path.join(top, name)
            info = os.lstat(path)
            state[os.path.normpath(os.path.join(rel_top, name))] = (info.st_size, info.st_mtime_ns)
    return state


def _changes(before, after):
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    changed = sorted(p for p in set(before) & set(after) if before[p] != after[p])
    return ['added %s' % p for p in added] + ['removed %s' % p for p in removed] + ['changed %s' % p for p in changed]


class Project(object):
    """A fresh copy of the working tree where the commands run as a new user runs them."""

    def __init__(self, tmp_path):
        self.tmp = tmp_path
        copied = subprocess.run([os.path.join(REPO, '.ci', 'copy-tree.sh'), str(tmp_path / 'tree')],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                                check=True)
        self.root = copied.stdout.strip().splitlines()[-1]
        assert not os.path.exists(os.path.join(self.root, 'out')), 'the copy must start without out/'
        # the project's venv, entry by entry, with a stamp of its own: `make demo` here finds it
        # built and never runs `make venv` (which would re-link the shared venv to this copy)
        venv = os.path.join(self.root, '.venv')
        os.mkdir(venv)
        for name in os.listdir(os.path.join(REPO, '.venv')):
            if name != '.installed':
                os.symlink(os.path.join(REPO, '.venv', name), os.path.join(venv, name))
        open(os.path.join(venv, '.installed'), 'w').close()
        self.home = tmp_path / 'home'
        self.home.mkdir()
        (tmp_path / 'tmp').mkdir()
        self.env = {'HOME': str(self.home), 'PATH': FRESH_PATH, 'LANG': 'C.UTF-8', 'TMPDIR': str(tmp_path / 'tmp'),
                    'USER': os.environ.get('USER', 'root')}
        current = subprocess.run(['make', '-q', 'venv'], cwd=self.root, env=self.env, check=False,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        assert current.returncode == 0, 'make would rebuild the venv of the copy'
        self.before = _tree(self.root)

    def run(self, script, timeout=600):
        proc = subprocess.run(['bash', '-e', '-o', 'pipefail', '-c', script], cwd=self.root, env=self.env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                              timeout=timeout, check=False)
        return proc.returncode, proc.stdout

    def outside_out(self):
        """What the commands wrote outside out/: in the tree, and in HOME."""
        problems = _changes(self.before, _tree(self.root))
        problems += ['HOME: %s' % os.path.relpath(os.path.join(top, n), str(self.home))
                     for top, dirs, files in os.walk(str(self.home)) for n in dirs + files]
        return problems

    def reports(self):
        folder = os.path.join(self.root, 'out', 'demo', 'reports')
        return sorted(n for n in os.listdir(folder) if n != 'latest') if os.path.isdir(folder) else []


# ---------------------------------------------------------------------------------------------

def test_the_extractor_finds_marked_blocks_and_refuses_a_broken_mark():
    text = ('intro\n<!-- runnable: demo -->\n```sh\nmake demo\n```\n\n```sh\nmake test\n```\n'
            '<!-- runnable: demo, exit 2 -->\n```sh\na \\\n  b\nc\n```\n')
    assert runnable_blocks(text) == [(3, 0, 'make demo'), (11, 2, 'a \\\n  b\nc')]
    for broken in ('<!-- runnable: demo -->\n\n```sh\nx\n```\n', '<!-- runnable: demo -->\n```yaml\nx: 1\n```\n',
                   '<!-- runnable: demo -->\n```sh\nx\n', '<!-- runnable: dmeo -->\n```sh\nx\n```\n'):
        with pytest.raises(ValueError):
            runnable_blocks(broken)
    # the documents: what a new user runs on the demo is marked (and nothing needing a cloud)
    found = dict(marked())
    assert {'README.md', 'docs/operator-guide.md', 'docs/rehearse.md'} <= set(found), sorted(found)
    scripts = '\n'.join(script for blocks in found.values() for _line, _rc, script in blocks)
    for words in ('make demo', 'placement.upgrade.rollback', 'placement.upgrade.rolling_reshape', '--check',
                  'DEMO_ARGS=', 'placement.upgrade.plan', 'placement.upgrade.rehearse', 'placement.upgrade.compare_plan',
                  '.venv/bin/python tools/demo.py', '. .venv/bin/activate'):
        assert words in scripts, words
    assert 'cloud' not in scripts and 'make test' not in scripts


def test_the_commands_the_demo_prints_run_as_printed(tmp_path):
    project = Project(tmp_path)
    rc, output = project.run('make demo')
    assert rc == 0, output
    commands = printed_commands(output)
    # the demo prints the roll itself
    assert len(commands) == 1, output
    assert commands[0].startswith('out/demo/ansible-playbook -i out/demo/inventory.yml '), commands
    assert commands[0].endswith(' placement.upgrade.rolling_reshape -e @out/demo/demo-vars.json'), commands
    # the next steps (the rerun of the deferred nodes, the rollback of the reshaped ones) once, in the
    # play's own summary (ansible-playbook's output): the report's commands, with the absolute paths of
    # rolling_reshape_report_command and the demo's batches (issue 40: the demo printed another rerun)
    played = [m.group(1) for m in (PLAYED.search(line) for line in output.split('\n')) if m]
    assert len(played) == 2, output
    head = '{0}/out/demo/ansible-playbook -e @{0}/out/demo/demo-vars.json -i '.format(project.root)
    assert all(c.startswith(head) for c in played), played
    assert played[0].endswith(' placement.upgrade.rolling_reshape --limit compute-07,compute-08,compute-11'), played
    assert ' placement.upgrade.rollback -e rollback_nodes=compute-01,' in played[1], played
    # each deferral reason once (the play summary's; rolling_progress says its head only)
    assert ' '.join(output.split()).count('then rerun the roll for this node') == 3, output
    # any other mention of an ansible-playbook command line would be one that was not checked
    others = [line for line in output.split('\n')
              if ('ansible-playbook -i' in line or 'ansible-playbook -e' in line)
              and not PRINTED.match(line) and not PLAYED.search(line)]
    assert others == [], others
    for index, command in enumerate(commands + played):
        reports = project.reports()
        rc, output = project.run(command)
        assert rc == 0, (command, output)
        # each wrote its report with the demo's
        assert len(project.reports()) == len(reports) + 1, (command, output)
        if index == 2:
            # the demo's rollback restored every node it named, from the demo's snapshots
            named = re.search(r'rollback_nodes=(\S+)', command).group(1).split(',')
            with open(os.path.join(project.root, 'out', 'demo', 'reports', 'latest', 'summary.json')) as handle:
                summary = json.load(handle)
            assert dict((n['node'], n['status']) for n in summary['nodes']) == dict((n, 'rolled_back') for n in named)
    assert project.outside_out() == []


@pytest.mark.parametrize('name', [name for name, _blocks in marked()])
def test_the_commands_the_docs_mark_as_runnable_on_the_demo_run(tmp_path, name):
    project = Project(tmp_path)
    for line, expected, script in dict(marked())[name]:
        rc, output = project.run(script)
        assert rc == expected, ('%s:%d exited %d, not %d' % (name, line, rc, expected), script, output)
    assert project.outside_out() == []
