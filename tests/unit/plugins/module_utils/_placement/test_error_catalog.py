# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One error catalog (issue 44): every code an error of the collection carries is an entry of
errors.CATALOG, no code is written out anywhere else in plugins/, every error type's default code
is in it, and docs/operator-guide.md's table is the one .ci/error-catalog.py generates from it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import importlib
import importlib.util
import os
import pkgutil

from ansible_collections.placement.upgrade.plugins.module_utils._placement import errors

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', '..'))
CORE_PACKAGE = 'ansible_collections.placement.upgrade.plugins.module_utils._placement'

#: the one literal that equals a code and is no error code: the snapshot document's ``kind``
NOT_A_CODE = {('plugins/module_utils/_placement/node/snapshot.py', 'KIND')}


def _generator():
    spec = importlib.util.spec_from_file_location('error_catalog', os.path.join(ROOT, '.ci', 'error-catalog.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _core_modules():
    package = importlib.import_module(CORE_PACKAGE)
    for info in pkgutil.walk_packages(package.__path__, CORE_PACKAGE + '.'):
        yield importlib.import_module(info.name)


def _error_types():
    seen = {}
    todo = [errors.PlacementError]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub.__module__.startswith(CORE_PACKAGE) and sub not in seen.values():
                seen[sub.__name__] = sub
                todo.append(sub)
    return seen


def test_the_catalog_is_one_entry_per_code():
    codes = [entry.code for entry in errors.CATALOG]
    assert len(codes) == len(set(codes)) and len(codes) >= 28
    for entry in errors.CATALOG:
        assert entry.code.startswith(('placement.', 'placement_upgrade.')), entry
        assert entry.status and entry.raised_as and entry.meaning, entry


def test_every_error_type_carries_a_code_of_the_catalog():
    list(_core_modules())  # every error type defined
    types = _error_types()
    codes = set(entry.code for entry in errors.CATALOG)
    assert len(types) >= 25, sorted(types)  # the walk found the types of node/, fleet/, backends/ too
    assert dict((name, cls.default_code) for name, cls in types.items() if cls.default_code not in codes) == {}
    # and each entry's first named type is a type whose own code it is
    for entry in errors.CATALOG:
        first = entry.raised_as.replace(';', ',').split(',')[0].split(' (')[0].strip()
        assert first in types or first == 'BadRequest', entry
        if entry.code.startswith('placement_upgrade.') and entry.code != errors.IDENTITY:
            assert types[first].default_code == entry.code, entry


def test_no_code_is_written_out_outside_the_catalog():
    codes = set(entry.code for entry in errors.CATALOG)
    found = []
    for folder, _dirs, files in os.walk(os.path.join(ROOT, 'plugins')):
        for name in files:
            if not name.endswith('.py'):
                continue
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, ROOT).replace(os.sep, '/')
            if rel == 'plugins/module_utils/_placement/errors.py':
                continue
            with open(path) as handle:
                tree = ast.parse(handle.read(), path)
            allowed = set()
            for node in ast.walk(tree):
                if isinstance(node, ast.Assign) and any((rel, getattr(t, 'id', None)) in NOT_A_CODE for t in node.targets):
                    allowed.add(id(node.value))
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in codes \
                        and id(node) not in allowed:
                    found.append('%s:%d %s' % (rel, node.lineno, node.value))
    assert found == []


def test_the_collection_codes_are_all_raised_somewhere():
    """A code of the collection's own that nothing carries is a dead row of the table."""
    list(_core_modules())
    carried = set(cls.default_code for cls in _error_types().values())
    own = [entry.code for entry in errors.CATALOG if entry.code.startswith('placement_upgrade.')]
    assert [code for code in own if code not in carried and code != errors.IDENTITY] == []
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends import rest_errors
    assert rest_errors.IDENTITY_CODE == errors.IDENTITY


def test_the_guide_table_is_generated_from_the_catalog():
    gen = _generator()
    with open(os.path.join(ROOT, 'docs', 'operator-guide.md')) as handle:
        text = handle.read()
    assert gen.render(text, gen.catalog()) == text, 'run make error-catalog'
    for entry in errors.CATALOG:
        assert '| `%s` |' % entry.code in text


def test_the_check_fails_when_the_table_differs(tmp_path, monkeypatch, capsys):
    gen = _generator()
    with open(os.path.join(ROOT, 'docs', 'operator-guide.md')) as handle:
        text = handle.read()
    stale = tmp_path / 'operator-guide.md'
    stale.write_text(text.replace('| `placement_upgrade.plan` |', '| `placement_upgrade.planned` |'))
    monkeypatch.setattr(gen, 'GUIDE', stale)
    monkeypatch.setattr(gen, 'ROOT', tmp_path)
    assert gen.main(['--check']) == 1
    assert 'differs from errors.CATALOG' in capsys.readouterr().err
    assert gen.main([]) == 0 and gen.main(['--check']) == 0
