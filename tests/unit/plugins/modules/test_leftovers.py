# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A write killed mid-way (SIGKILL between creating its temporary file and renaming it) leaves hidden
files: ``.<name>.<random>.tmp`` (files.atomic_write: node records, report files, snapshots) and
``.<store>.<random>.export`` with SQLite's ``-wal`` / ``-shm`` (placement_export).  The next task
writing that name removes them, only names of exactly its own pattern in the directory it writes,
only files older than its own process, and says so (a warning, ``leftovers_removed``).

Here through the modules' main() with the process start set after the leftovers were made (a new
process); a real SIGKILL and a fresh ansible-playbook run: tests/integration/test_killed_writes.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import time

from ansible_collections.placement.upgrade.plugins.module_utils._placement import files
from ansible_collections.placement.upgrade.plugins.modules import fleet_report, placement_export

#: the start of the process of the tasks below (after the leftovers were made, as for a new process)
STARTED = time.time() + 3600


def warnings(result):
    """The texts of the result's warnings (ansible-core 2.19 gives them as events)."""
    found = []
    for item in result.get('warnings') or []:
        found.append(item['event']['msg'] if isinstance(item, dict) and 'event' in item else item)
    return found


def _make(path, age):
    """A file whose mtime is ``age`` seconds before the process start (negative: after it)."""
    with open(path, 'w') as handle:
        handle.write('partial')
    when = STARTED - age
    os.utime(path, (when, when))
    return path


def test_a_node_record_write_removes_its_own_older_leftovers_and_says_so(run_module, tmp_path, monkeypatch):
    monkeypatch.setattr(files, 'STARTED', STARTED, raising=False)      # this task's process starts now
    dest = tmp_path / 'reports' / 'run-1'
    nodes = dest / 'nodes'
    os.makedirs(str(nodes))
    old = _make(str(nodes / '.cn1.json.k3j4h5g6.tmp'), 3600)
    kept = [
        _make(str(nodes / '.cn1.json.a1b2c3d4.tmp'), -5),           # newer than the process: a write in progress
        _make(str(nodes / '.cn2.json.zzzzzzzz.tmp'), 3600),         # a name this task does not write
        _make(str(nodes / '.cn1.json.short.tmp'), 3600),            # not the random part of a temporary name
        _make(str(nodes / '.cn1.json.k3j4h5g6.tmp.bak'), 3600),     # more after the pattern
        _make(str(nodes / 'cn1.json.k3j4h5g6.tmp'), 3600),          # not hidden
        _make(str(dest / '.cn1.json.k3j4h5g7.tmp'), 3600),          # another directory
    ]
    rc, res = run_module(fleet_report, {'dest': str(dest), 'records': [{'node': 'cn1', 'status': 'noop'}],
                                        'summarize': False, 'run_id': 'run-1'})
    assert rc == 0, res
    assert res['leftovers_removed'] == [old]
    assert ('removed 1 leftover file(s) of an interrupted earlier write (older than this task, '
            'of the temporary names this task writes): %s' % old) in warnings(res)
    assert not os.path.exists(old)
    assert all(os.path.exists(path) for path in kept)
    assert os.path.isfile(str(nodes / 'cn1.json'))
    # nothing left over: no key, no warning
    rc, res = run_module(fleet_report, {'dest': str(dest), 'records': [{'node': 'cn1', 'status': 'noop'}],
                                        'summarize': False, 'run_id': 'run-1'})
    assert rc == 0 and 'leftovers_removed' not in res and not [w for w in warnings(res) if 'leftover' in w], res


def test_an_export_removes_its_own_older_store_leftovers_and_says_so(run_module, store, tmp_path, monkeypatch):
    root = store.create_provider('cn1')
    store.set_inventories(root['uuid'], 0, {'VCPU': {'total': 8}})
    monkeypatch.setattr(files, 'STARTED', STARTED, raising=False)
    out = tmp_path / 'copy'
    os.makedirs(str(out))
    old = [_make(str(out / ('.x.db.abcd_123.export' + tail)), 600) for tail in ('', '-wal', '-shm')]
    kept = [_make(str(out / ('.x.db.efgh4567.export' + tail)), 600) for tail in ('', '-wal')]
    kept.append(_make(str(out / '.x.db.efgh4567.export-shm'), -5))   # one file of it newer: in progress
    kept += [_make(str(out / '.y.db.abcd1234.export'), 600),          # another store's
             _make(str(out / '.x.db.abcd1234.tmp'), 600),             # not the export's pattern
             _make(str(out / '.x.db.abcd1234.export-other'), 600)]
    rc, res = run_module(placement_export, {'compute_nodes': ['cn1'], 'dest': str(out / 'x.db')})
    assert rc == 0, res
    assert res['leftovers_removed'] == sorted(old)
    assert ('removed 3 leftover file(s) of an interrupted earlier write (older than this task, '
            'of the temporary names this task writes): %s' % ', '.join(sorted(old))) in warnings(res)
    assert not any(os.path.exists(path) for path in old)
    assert all(os.path.exists(path) for path in kept)
    assert os.path.isfile(str(out / 'x.db'))
    # check mode writes nothing, and removes nothing
    leftover = _make(str(out / '.x.db.zzzzzzzz.export'), 600)
    rc, res = run_module(placement_export, {'compute_nodes': ['cn1'], 'dest': str(out / 'x.db'), 'force': True}, check=True)
    assert rc == 0 and 'leftovers_removed' not in res and os.path.exists(leftover)


def test_a_recording_removes_its_own_older_leftovers_and_says_so(capsys, tmp_path, monkeypatch):
    """device_info's record_to (files.atomic_write, its own exit: not run_module)."""
    import fakehost
    from module_runner import run_module_main
    from ansible_collections.placement.upgrade.plugins.modules import device_info

    monkeypatch.setattr(files, 'STARTED', STARTED, raising=False)
    host = fakehost.build_host(str(tmp_path / 'node'), fakehost.default_gpu_host('compute-01'))
    records = tmp_path / 'records'
    os.makedirs(str(records))
    old = _make(str(records / '.compute-01.json.ab12cd34.tmp'), 3600)
    kept = _make(str(records / '.compute-02.json.ab12cd34.tmp'), 3600)
    rc, res = run_module_main(device_info.main, {'sysfs_root': host['sysfs_root'], 'domain_xml_glob': host['domain_xml_glob'],
                                                 'hostname': 'compute-01', 'record_to': str(records / 'compute-01.json')},
                              capsys)
    assert rc == 0, res
    assert res['leftovers_removed'] == [old] and not os.path.exists(old) and os.path.exists(kept)
    assert [w for w in warnings(res) if w.startswith('removed 1 leftover file(s)') and w.endswith(old)]


def test_the_latest_link_removes_its_own_older_temporary_links_and_says_so(run_module, tmp_path, monkeypatch):
    """The report's ``latest`` link is replaced through a ``latest.<pid>`` link renamed over it; a run
    killed in between leaves that link.  Only older symbolic links of exactly that pattern go."""
    monkeypatch.setattr(files, 'STARTED', STARTED, raising=False)
    reports = tmp_path / 'reports'
    os.makedirs(str(reports / 'run-0'))

    def link(name, age):
        path = str(reports / name)
        os.symlink('run-0', path)
        when = STARTED - age
        os.utime(path, (when, when), follow_symlinks=False)
        return path

    old = link('latest.4242', 3600)
    kept = [link('latest.4243', -5), link('latest.abc', 3600), link('other.4242', 3600),
            _make(str(reports / 'latest.4244'), 3600)]                  # a file, not a link
    rc, res = run_module(fleet_report, {'dest': str(reports / 'run-1'), 'records': [{'node': 'cn1', 'status': 'noop'}],
                                        'run_id': 'run-1'})
    assert rc == 0, res
    assert res['leftovers_removed'] == [old] and not os.path.lexists(old)
    assert all(os.path.lexists(path) for path in kept)
    assert os.readlink(str(reports / 'latest')) == 'run-1'
    assert [w for w in warnings(res) if w.startswith('removed 1 leftover file(s)') and w.endswith(old)]
