# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tools/demo.py checks what it needs before it removes anything, says what it removes, and
removes only a directory a demo made."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess
import sys

import pytest

import demo

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
DEMO = os.path.join(REPO, 'tools', 'demo.py')


def _previous_run(path):
    path.mkdir()
    (path / demo.MARKER).write_text('')
    (path / 'report.md').write_text('the previous run\n')
    return path


def _files(path):
    return sorted(os.listdir(str(path)))


def test_without_ansible_it_says_how_to_run_it_and_removes_nothing(tmp_path):
    out = _previous_run(tmp_path / 'out')
    # -S -E: this Python without its site-packages (no ansible-core, no collection), as a
    # system python3 is
    proc = subprocess.run([sys.executable, '-S', '-E', DEMO, '--out', str(out), '--check'], cwd=REPO,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=120,
                          check=False)
    assert proc.returncode == 2, proc.stderr
    assert 'Traceback' not in proc.stderr + proc.stdout
    assert "ansible-core cannot be imported (No module named 'ansible')" in proc.stderr
    assert ('Run it with the project venv: .venv/bin/python tools/demo.py --out %s --check, or make demo '
            "DEMO_ARGS='--out %s --check'" % (out, out)) in proc.stderr
    assert 'Nothing was removed or written.' in proc.stderr
    assert _files(out) == sorted([demo.MARKER, 'report.md'])


def test_a_directory_no_demo_made_is_left_alone(tmp_path, capsys):
    mine = tmp_path / 'mine'
    mine.mkdir()
    (mine / 'thesis.tex').write_text('years of work\n')
    try:
        demo.main(['--out', str(mine), '--quiet'])
    except SystemExit as exc:
        assert exc.code == 2
    else:
        raise AssertionError('the demo ran in a directory it did not make')
    err = capsys.readouterr().err
    assert 'is not a directory this demo made (no %s in it): it is left as it is' % demo.MARKER in err
    assert 'nothing was removed or written' in err
    assert _files(mine) == ['thesis.tex']
    # a file given as the output directory is refused the same way
    assert demo.clear_out(str(mine / 'thesis.tex')).endswith('exists and is not a directory')


def test_bad_arguments_are_refused_before_anything_is_removed(tmp_path, capsys):
    out = _previous_run(tmp_path / 'out')
    for args in (['--unmapped', 'compute-99'], ['--unmapped', 'compute-12'], ['--nodes', '0']):
        try:
            demo.main(['--out', str(out), '--quiet'] + args)
        except SystemExit as exc:
            assert exc.code == 2, args
        else:
            raise AssertionError(args)
        assert 'nothing was removed or written' in capsys.readouterr().err, args
        assert _files(out) == sorted([demo.MARKER, 'report.md']), args


def test_a_previous_run_is_removed_and_it_says_so(tmp_path, capsys, monkeypatch):
    out = _previous_run(tmp_path / 'out')
    monkeypatch.chdir(str(tmp_path))
    assert demo.clear_out(str(out)) is None
    assert capsys.readouterr().out == ('demo: removing the previous demo run in out (its fleet, Placement store, '
                                       'snapshots and reports)\n')
    assert not out.exists()
    # nothing there, or an empty directory: nothing to say, nothing removed
    assert demo.clear_out(str(out)) is None
    out.mkdir()
    assert demo.clear_out(str(out)) is None and out.is_dir()
    assert capsys.readouterr().out == ''


def _summary(figures):
    totals = {'nodes': 2, 'statuses': {'planned': 1, 'reshaped': 1, 'noop': 1}, 'duration': 1.0,
              'consumers_moved': figures['consumers_moved'], 'allocations_moved': figures['allocations_moved'],
              'providers_created': figures['providers_created'], 'figures': figures}
    return {'totals': totals, 'deferred': [], 'failed': [], 'unreached': [], 'next_steps': []}


@pytest.mark.parametrize('check', [True, False], ids=['check', 'roll'])
def test_the_demo_summary_says_the_journals_figures_in_the_words_of_its_mode(capsys, check):
    """issue 40: PCI healing's created allocations and the VCPU -> PCPU conversion are said (they were
    missing, or counted as moved), in the words of the mode."""
    figures = {'consumers_moved': 2, 'allocations_moved': 3, 'allocations_created': 4, 'allocations_removed': 0,
               'allocations_converted': 2, 'providers_created': 5, 'providers_removed': 0, 'providers_left': 0,
               'inventories_changed': 7, 'traits_changed': 1}
    demo.print_summary({'nodes': [], 'embedded_db': '/tmp/placement.db'}, _summary(figures), '/tmp/report', 2.0,
                       check=check)
    out = capsys.readouterr().out
    if check:
        assert '  allocations to move     3  (of 2 consumers)' in out
        assert '  allocations to create   4' in out and '  allocations to convert   2' in out
        assert ' created' not in out and 'converted' not in out
    else:
        assert '  allocations moved       3  (of 2 consumers)' in out
        assert '  allocations created     4' in out and '  allocations converted   2' in out
        assert 'to create' not in out and 'to convert' not in out
    assert 'allocations removed' not in out and 'allocations to remove' not in out
