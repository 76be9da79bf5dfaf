# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""_placement/files.py: the run's private directories, made and checked in one place."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement import files
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import report
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper


def _mode(path):
    return stat.S_IMODE(os.stat(str(path)).st_mode)


def test_make_dirs_gives_every_level_it_creates_the_mode(tmp_path):
    old = os.umask(0o022)
    try:
        (tmp_path / 'kept').mkdir(mode=0o755)
        files.make_dirs(str(tmp_path / 'kept' / 'a' / 'b' / 'c'))
        files.make_dirs(str(tmp_path / 'kept' / 'a' / 'b' / 'c'))  # already there: nothing to do
    finally:
        os.umask(old)
    assert _mode(tmp_path / 'kept') == 0o755  # an existing directory is left as it is
    assert [_mode(tmp_path / 'kept' / p) for p in ('a', 'a/b', 'a/b/c')] == [0o700, 0o700, 0o700]


def test_an_empty_path_is_never_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(OSError):
        files.make_dirs('')
    with pytest.raises(OSError):
        report.save_record('', {'node': 'compute-01'})
    assert files.directory_problem('') == 'an empty path is not a directory'
    assert os.listdir(str(tmp_path)) == []


def test_the_snapshot_and_report_writers_make_private_directories(tmp_path):
    reshaper.prepare_snapshot_dir(str(tmp_path / 'run' / 'snapshots'))
    path = report.save_record(str(tmp_path / 'reports' / 'run-1'), {'node': 'compute-01'})
    assert os.path.isfile(path)
    assert [_mode(tmp_path / p) for p in ('run', 'run/snapshots', 'reports', 'reports/run-1')] == [0o700] * 4


def test_directory_problem(tmp_path):
    assert files.directory_problem(str(tmp_path)) is None
    assert files.directory_problem(str(tmp_path / 'x' / 'y')) is None
    (tmp_path / 'f').write_text(u'x')
    assert files.directory_problem(str(tmp_path / 'f')) == '%s exists and is not a directory' % (tmp_path / 'f')
    assert files.directory_problem(str(tmp_path / 'f' / 'y')) == (
        '%s cannot be created: %s is not a directory' % (tmp_path / 'f' / 'y', tmp_path / 'f'))
    assert files.directory_problem(str(tmp_path / 'f' / 'y' / 'z')) == (
        '%s cannot be created: %s is not a directory' % (tmp_path / 'f' / 'y' / 'z', tmp_path / 'f'))
    assert not os.path.exists(str(tmp_path / 'x'))


def test_directory_problem_unwritable(tmp_path, monkeypatch):
    # (the tests may run as root, who may write anywhere: the permission answer is the os's)
    (tmp_path / 'ro').mkdir()
    real = os.access
    monkeypatch.setattr(os, 'access', lambda p, m: False if str(p) == str(tmp_path / 'ro') else real(p, m))
    assert files.directory_problem(str(tmp_path / 'ro')) == '%s is not writable' % (tmp_path / 'ro')
    assert files.directory_problem(str(tmp_path / 'ro' / 'new')) == (
        '%s cannot be created: %s is not writable' % (tmp_path / 'ro' / 'new', tmp_path / 'ro'))
