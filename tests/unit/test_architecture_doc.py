# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""docs/architecture.md against the tree, so that it cannot drift: every file it names exists,
and every part of the device report and every reshape kind of the registries has its row in
its table (and no row names one that is not there)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.node.discover import registry as parts
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node.kinds import registry as kinds

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join(ROOT, 'docs', 'architecture.md')
PLACEMENT = os.path.join(ROOT, 'plugins', 'module_utils', '_placement')
# the directories the document's paths are written from (the repository, the core, one node's pass,
# the plugins, the docs, the roles' tasks, the playbooks)
BASES = ('', PLACEMENT, os.path.join(PLACEMENT, 'node'), 'plugins', 'docs', 'playbooks',
         os.path.join('roles', 'rolling_reshape', 'tasks'), os.path.join('roles', 'preflight', 'tasks'))
# the files the fleet report writes (fleet/output.py), named by the document, not in the tree
WRITTEN = ('report.md', 'report.html', 'summary.json')
FILE = r'[A-Za-z0-9_.-]+\.(?:py|md|yml|yaml|sh|ini|txt|json|cfg)'


def _text():
    with open(DOC) as handle:
        return handle.read()


def _exists(path):
    return any(os.path.exists(os.path.join(ROOT, base, path)) for base in BASES)


def _all_file_names():
    names = set()
    for top in ('plugins', 'tools', 'tests', 'docs', 'playbooks', 'roles', '.ci', 'extensions', 'meta'):
        for _dirpath, _dirs, files in os.walk(os.path.join(ROOT, top)):
            names.update(files)
    names.update(os.listdir(ROOT))
    return names


def test_every_path_the_document_names_exists():
    text = _text()
    paths = set(re.findall(r'(?<![\w/.{<-])((?:[A-Za-z0-9_.-]+/)+%s)' % FILE, text))
    assert len(paths) > 40      # the document names its files by path: the check reads them
    assert sorted(p for p in paths if not _exists(p)) == []


def test_every_file_the_document_names_by_its_name_exists():
    names = set(re.findall(r'(?<![\w/.{<-])(%s)\b' % FILE, _text()))
    known = _all_file_names()
    missing = sorted(n for n in names if n not in known and n not in WRITTEN)
    assert missing == []


def _table_rows(heading_start):
    """The first cell and the second cell of each row of the table that follows ``heading_start``."""
    text = _text()
    at = text.index(heading_start)
    rows = []
    started = False
    for line in text[at:].splitlines()[1:]:
        if line.startswith('|'):
            started = True
            cells = [c.strip() for c in line.strip('|').split('|')]
            if cells[0].startswith('---') or cells[0] in ('part', 'kind'):
                continue
            rows.append(cells)
        elif started:
            break
    return rows


def test_every_part_of_the_device_report_has_its_row():
    rows = _table_rows('The parts of the device report (')
    assert [r[0] for r in rows] == ['`%s`' % p.name for p in parts.PARTS]
    for row, part in zip(rows, parts.PARTS):
        assert row[1] == '`node/discover/%s.py`' % part.name
        assert row[2] == ', '.join('`%s`' % k for k in part.report_keys)
        assert _exists(row[1].strip('`'))


def test_every_reshape_kind_has_its_row():
    rows = _table_rows('The kinds (`kinds/registry.py`')
    assert [r[0] for r in rows] == ['`%s`' % k.name for k in kinds.KINDS]
    for row, kind in zip(rows, kinds.KINDS):
        module = type(kind).__module__.split('.plugins.module_utils._placement.', 1)[1]
        assert row[1] == '`%s.py`' % module.replace('.', '/')
        assert row[2] == ', '.join('`%s`' % p for p in re.findall(r'node/discover/\w+\.py', kind.discovery))
        assert row[3] == ('`%s`' % kind.need if kind.need else '')


@pytest.mark.parametrize('hook', ['check_options', 'children', 'describe', 'root_traits_remove', 'writes',
                                  'explained', 'check_root', 'taker', 'prepare_root', 'consumers', 'settle',
                                  'root_cleanup', 'said', 'held_devices', 'defer_hint', 'snapshot_summary',
                                  'planned_changes', 'root_classes_changed', 'root_class'])
def test_every_hook_of_the_kind_contract_has_its_row(hook):
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.node.kinds import common
    assert callable(getattr(common.Kind, hook))
    assert re.search(r'^\| `%s\(' % hook, _text(), re.M), hook


def test_every_method_of_the_kind_contract_is_in_the_hooks_checked():
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.node.kinds import common
    methods = sorted(n for n, v in vars(common.Kind).items() if callable(v) and not n.startswith('_'))
    assert methods == sorted(test_every_hook_of_the_kind_contract_has_its_row.pytestmark[0].args[1])
