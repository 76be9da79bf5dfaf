# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helpers of tests/reliability/test_bad_input.py: run a module in-process on junk, judge the outcome.

* :func:`run_main` runs a module's ``main()`` the way Ansible runs it (module_runner's traps:
  fresh warning lists, not a controller, args through ``patch_module_args``) but captures
  stdout itself, so it works inside hypothesis examples (no function-scoped ``capsys``);
* :func:`junk` is the strategy of bad values; :func:`mutate` replaces (or deletes) one value
  at a random place of a JSON-like document;
* :func:`state_of` is the full dump of the embedded store (``iterdump``) plus the content of
  every file of the sandbox, to compare before and after a failed run;
* :class:`Tally` counts, per target, the examples run, the failures that came with a
  traceback (``Unexpected error``, an ``exception`` key, an exception escaping ``main()``,
  output that is not the module's JSON) and the failed runs that changed something.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import copy
import hashlib
import io
import json
import os
import sqlite3
import traceback

from hypothesis import strategies as st

from ansible.module_utils import _internal as ansible_internal
from ansible.module_utils.common import warnings as ansible_warnings
from ansible.module_utils.testing import patch_module_args


def run_main(main, args):
    """Run ``main()`` with ``args``; return ``(rc, result, escaped)`` (escaped: a traceback text or '')."""
    ansible_warnings._global_warnings.clear()  # pylint: disable=protected-access
    ansible_warnings._global_deprecations.clear()  # pylint: disable=protected-access
    was_controller = ansible_internal.is_controller
    ansible_internal.is_controller = False
    out = io.StringIO()
    rc, escaped = None, ''
    try:
        with patch_module_args(dict(args)):
            with contextlib.redirect_stdout(out):
                try:
                    main()
                    escaped = 'main() returned without exit_json/fail_json'
                except SystemExit as exc:
                    rc = exc.code
                except Exception:  # pylint: disable=broad-except
                    escaped = traceback.format_exc()
    finally:
        ansible_internal.is_controller = was_controller
    text = out.getvalue()
    try:
        result = json.loads(text) if text.strip() else {}
    except ValueError:
        result = {}
        escaped = escaped or 'output is not JSON: %r' % text[:300]
    if 'Traceback (most recent call last)' in text and not escaped:
        escaped = 'a traceback in the output'
    return rc, result, escaped


def traceback_of(rc, result, escaped):
    """Why a run counts as a failure with a traceback ('' when it does not)."""
    if escaped:
        return escaped
    if rc not in (0, 1):
        return 'exit code %r' % (rc,)
    msg = str(result.get('msg') or '')
    if rc == 1 and (msg.startswith('Unexpected error') or result.get('exception')):
        return msg or str(result.get('exception'))[:500]
    return ''


def _floats():
    return st.sampled_from([float('nan'), float('inf'), float('-inf'), -1.0, -0.0001, 0.0, 1e39, 3.5])


def junk(depth=2):
    """Bad values of every shape: wrong types, special floats, odd strings, nested containers."""
    leaves = st.one_of(
        st.none(), st.booleans(),
        st.integers(min_value=-2 ** 40, max_value=2 ** 40),
        st.sampled_from([-1, 0, 2147483648, 2 ** 63]),
        _floats(),
        st.sampled_from(['', ' ', 'nan', 'inf', '-1', '0x10de', '0000:84:00.0', 'VGPU', 'CUSTOM_X', 'yes',
                         '{"a": 1}', '[1, 2]', '../../etc/passwd', 'compute-01', '\x00', 'é' * 3,
                         '11111111-1111-4111-8111-111111111111', 'not-a-uuid', '%s', '{root}']),
        st.text(max_size=12),
    )
    if depth <= 0:
        return leaves
    inner = junk(depth - 1)
    return st.one_of(
        leaves,
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(['address', 'total', 'gpus', 'x', 'uuid', 'name', 'mdevs', '']), inner,
                        max_size=3),
    )


DELETE = object()


def paths_of(doc, prefix=()):
    """Every place in a JSON-like document: ``[(path tuple)]`` (containers and leaves)."""
    out = [prefix]
    if isinstance(doc, dict):
        for key, value in doc.items():
            out.extend(paths_of(value, prefix + (key,)))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            out.extend(paths_of(value, prefix + (index,)))
    return out


def mutate(data, doc, label='mutation'):
    """A deep copy of ``doc`` with one value (hypothesis ``data`` picks where) replaced by junk or deleted."""
    doc = copy.deepcopy(doc)
    places = [p for p in paths_of(doc) if p]
    if not places:
        return data.draw(junk(), label=label)
    path = data.draw(st.sampled_from(places), label=label + ' at')
    value = data.draw(st.one_of(junk(), st.just(DELETE)), label=label + ' value')
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    if value is DELETE:
        if isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent.pop(path[-1])
    else:
        parent[path[-1]] = value
    return doc


def store_dump(path):
    """The full content of an embedded store (SQL dump), or the file's bytes' hash when SQLite cannot read it."""
    if not os.path.exists(path):
        return None
    try:
        conn = sqlite3.connect('file:%s?mode=ro' % path, uri=True)
        try:
            return tuple(conn.iterdump())
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        with open(path, 'rb') as handle:
            return hashlib.sha256(handle.read()).hexdigest()


def files_of(folder, skip=('.db', '.db-wal', '.db-shm')):
    """{relative path: sha256} of every file under ``folder`` (stores left to :func:`store_dump`)."""
    found = {}
    for base, dirs, names in os.walk(folder):
        dirs.sort()
        for name in sorted(names):
            if name.endswith(skip):
                continue
            path = os.path.join(base, name)
            try:
                with open(path, 'rb') as handle:
                    found[os.path.relpath(path, folder)] = hashlib.sha256(handle.read()).hexdigest()
            except (IOError, OSError):
                found[os.path.relpath(path, folder)] = 'unreadable'
    return found


def state_of(db_path, folder):
    return {'store': store_dump(db_path), 'files': files_of(folder)}


class Tally(object):
    """Per target: examples run, failures with a traceback, failed runs that changed something."""

    def __init__(self):
        self.rows = {}

    def row(self, target):
        return self.rows.setdefault(target, {'examples': 0, 'failed_runs': 0, 'tracebacks': 0,
                                             'changes_on_failure': 0, 'samples': []})

    def record(self, target, rc, why_traceback, changed_on_failure, example=''):
        row = self.row(target)
        row['examples'] += 1
        if rc != 0:
            row['failed_runs'] += 1
        if why_traceback:
            row['tracebacks'] += 1
        if changed_on_failure:
            row['changes_on_failure'] += 1
        if (why_traceback or changed_on_failure) and len(row['samples']) < 3:
            row['samples'].append('%s%s%s' % (example[:300], ' -> ', (why_traceback or 'changed on failure')[-800:]))

    def table(self, title):
        lines = [title, '%-34s %8s %8s %10s %10s' % ('target', 'examples', 'failed', 'tracebacks', 'changes')]
        total = {'examples': 0, 'failed_runs': 0, 'tracebacks': 0, 'changes_on_failure': 0}
        for target in sorted(self.rows):
            row = self.rows[target]
            lines.append('%-34s %8d %8d %10d %10d' % (
                target, row['examples'], row['failed_runs'], row['tracebacks'], row['changes_on_failure']))
            for key in total:
                total[key] += row[key]
        lines.append('%-34s %8d %8d %10d %10d' % (
            'TOTAL', total['examples'], total['failed_runs'], total['tracebacks'], total['changes_on_failure']))
        lines.append('(failed: runs that failed cleanly, as they should on bad input; tracebacks: failures '
                     'with a traceback or "Unexpected error"; changes: failed runs that changed the store or '
                     'a file)')
        return '\n'.join(lines)
