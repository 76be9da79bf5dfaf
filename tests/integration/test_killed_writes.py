# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A write killed with SIGKILL mid-way leaves its hidden temporary files; the next run's task that
writes the same name removes them and says so (a warning naming them, ``leftovers_removed``).

Two writers are killed for real while their temporary files exist: ``files.atomic_write`` of a node
record (``.<name>.<random>.tmp``) and ``export.write_export`` of a store (``.<store>.<random>.export``
with SQLite's ``-wal`` / ``-shm``); then ONE ansible-playbook run (new processes) writes the record
with placement.upgrade.fleet_report (in process, in its action plugin) and the store with
placement.upgrade.placement_export (a module process).  The exact rules (what is left alone) are in
tests/unit/plugins/modules/test_leftovers.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend

from test_fleet_playbook import BIN, _env

pytestmark = pytest.mark.slow

#: a writer that stops before its rename (fsync / the store's fill never return), to be killed there
WRITER = r'''
import os, sys, time
from ansible_collections.placement.upgrade.plugins.module_utils._placement import files
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import export
kind, path, source = sys.argv[1:4]
if kind == 'record':
    os.fsync = lambda fd: time.sleep(600)
    files.atomic_write(path, '{"node": "cn1", "status": "noop"}\n' * 1000)
else:
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend
    with EmbeddedBackend(source, create=False) as backend:
        data = export.read_export(backend, ['cn1'])
    fill = export.fill_store
    def fill_and_hang(store, data):
        fill(store, data)
        time.sleep(600)
    export.fill_store = fill_and_hang
    export.write_export(data, path)
'''


def _kill_mid_write(kind, path, source=''):
    """Start a writer of ``path``, SIGKILL it once its temporary file exists; the leftovers."""
    directory, name = os.path.split(path)
    proc = subprocess.Popen([sys.executable, '-c', WRITER, kind, path, source])
    try:
        deadline = time.time() + 60
        suffix = '.tmp' if kind == 'record' else '.export-wal'
        while not [n for n in os.listdir(directory) if n.startswith('.%s.' % name) and n.endswith(suffix)]:
            assert proc.poll() is None and time.time() < deadline, 'the writer ended before it was killed'
            time.sleep(0.05)
        time.sleep(0.2)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert not os.path.exists(path)
    return sorted(os.path.join(directory, n) for n in os.listdir(directory) if n.startswith('.%s.' % name))


def test_the_next_run_removes_what_a_killed_write_left_and_says_so(tmp_path):
    source = str(tmp_path / 'placement.db')
    with EmbeddedBackend(source) as store:
        root = store.create_provider('cn1')
        store.set_inventories(root['uuid'], 0, {'VCPU': {'total': 8}})
    dest = tmp_path / 'reports' / 'run-1'
    os.makedirs(str(dest / 'nodes'))
    record_left = _kill_mid_write('record', str(dest / 'nodes' / 'cn1.json'))
    assert len(record_left) == 1 and record_left[0].endswith('.tmp'), record_left
    os.makedirs(str(tmp_path / 'copy'))
    export_left = _kill_mid_write('export', str(tmp_path / 'copy' / 'x.db'), source)
    assert len(export_left) >= 2 and export_left[0].endswith('.export'), export_left
    time.sleep(1.1)     # the next run starts later than the leftovers' last change (mtime granularity)

    play = tmp_path / 'play.yml'
    play.write_text(json.dumps([{
        'hosts': 'localhost', 'gather_facts': False,
        'tasks': [
            {'name': 'Store the record again', 'register': 'record',
             'placement.upgrade.fleet_report': {'dest': str(dest), 'summarize': False, 'run_id': 'run-1',
                                                'records': [{'node': 'cn1', 'status': 'noop'}]}},
            {'name': 'Export again', 'register': 'exported',
             'placement.upgrade.placement_export': {'embedded_db': source, 'compute_nodes': ['cn1'],
                                                    'dest': str(tmp_path / 'copy' / 'x.db')}},
            {'name': 'Show what was removed', 'ansible.builtin.debug': {
                'msg': "REMOVED {{ {'record': record.leftovers_removed, 'export': exported.leftovers_removed} | to_json }}"}},
        ]}]))
    env = _env(str(tmp_path))
    proc = subprocess.run([os.path.join(BIN, 'ansible-playbook'), '-i', 'localhost,', '-c', 'local',
                           '-e', 'ansible_python_interpreter=%s' % sys.executable, str(play)],
                          env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, timeout=300)
    out = proc.stdout
    assert proc.returncode == 0, out
    flat = ' '.join(out.split())
    for left in (record_left, export_left):
        assert ('removed %d leftover file(s) of an interrupted earlier write (older than this task, of the temporary '
                'names this task writes): %s' % (len(left), ', '.join(left))) in flat, out
        assert not any(os.path.exists(path) for path in left)
    line = [text for text in out.splitlines() if '"msg": "REMOVED ' in text][0]
    shown = json.loads(json.loads(line.split('"msg": ', 1)[1])[len('REMOVED '):])
    assert shown == {'record': record_left, 'export': export_left}
    assert os.path.isfile(str(dest / 'nodes' / 'cn1.json')) and os.path.isfile(str(tmp_path / 'copy' / 'x.db'))
    assert sorted(n for n in os.listdir(str(tmp_path / 'copy')) if n.startswith('.')) == []
