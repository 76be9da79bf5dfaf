# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The core's import graph (issue 44): no loop among the modules of ``_placement/`` (module-level
imports, read from the source with ``ast``), and the rollback's rules in one room."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import os

CORE = os.path.normpath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', '..',
                                     'plugins', 'module_utils', '_placement'))


def _modules():
    """``{dotted name under _placement: path}`` of every module (a package's ``__init__`` as the package)."""
    found = {}
    for folder, _dirs, files in os.walk(CORE):
        for name in files:
            if not name.endswith('.py'):
                continue
            rel = os.path.relpath(os.path.join(folder, name), CORE)[:-3].split(os.sep)
            if rel[-1] == '__init__':
                rel = rel[:-1]
            found['.'.join(rel)] = os.path.join(folder, name)
    return found


def _imports(dotted, path, modules):
    """The core modules ``dotted`` imports at module level (not inside a function: a lazy import)."""
    with open(path) as handle:
        tree = ast.parse(handle.read(), path)
    is_package = path.endswith('__init__.py')
    package = dotted.split('.') if is_package else dotted.split('.')[:-1]
    out = set()
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom) or not node.level:
            continue  # absolute imports are of the standard library or of openstacksdk, never of the core
        base = package[:len(package) - (node.level - 1)] if node.level > 1 else list(package)
        base = base + (node.module.split('.') if node.module else [])
        for alias in node.names:
            candidate = '.'.join(base + [alias.name])
            target = candidate if candidate in modules else '.'.join(base)
            if target in modules and target != dotted:
                out.add(target)
    return out


def _graph():
    modules = _modules()
    return dict((name, _imports(name, path, modules)) for name, path in modules.items())


def test_the_graph_is_read():
    graph = _graph()
    # the reader resolves every form the core uses: ``from . import x``, ``from .x import y``, ``from ..x import y``
    assert 'node.rollback' in graph['node.reshaper']
    assert 'node.planner' in graph['node.rollback'] and 'node.snapshot' in graph['node.rollback']
    assert 'tree' in graph['node.rollback'] and 'rules.allocations' in graph['node.rollback']
    assert 'errors' in graph['node.snapshot']


def test_no_import_loop_in_the_core():
    graph = _graph()
    loops = []
    state = {}

    def visit(name, stack):
        state[name] = 'open'
        stack.append(name)
        for target in sorted(graph.get(name, ())):
            if state.get(target) == 'open':
                loops.append(' -> '.join(stack[stack.index(target):] + [target]))
            elif target not in state:
                visit(target, stack)
        stack.pop()
        state[name] = 'done'

    for name in sorted(graph):
        if name not in state:
            visit(name, [])
    assert loops == []


def test_the_rollback_rules_are_defined_in_node_rollback_only():
    rules = set(['plan_rollback', 'rollback_body', 'rollback_problems', 'inventory_drift', 'planned_changes',
                 'verify_rollback', 'refuse_snapshot'])
    where = {}
    for name, path in _modules().items():
        with open(path) as handle:
            tree = ast.parse(handle.read(), path)
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and (node.name in rules or node.name.startswith('_rollback_')):
                where.setdefault(node.name, []).append(name)
    assert sorted(where) == sorted(rules | set(['_rollback_inventories', '_rollback_consumers',
                                                '_rollback_removals', '_rollback_diff']))
    assert set(m for places in where.values() for m in places) == set(['node.rollback'])
