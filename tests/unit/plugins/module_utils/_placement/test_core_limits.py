# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The core's size limits (issue 44), read from the source with ``ast``: no file of ``_placement/``
over 700 lines, no function (a method's ``self`` / ``cls`` not counted; ``*args`` and ``**kwargs``
counted as one each) with more than 8 parameters.  A call asked more than that takes a request
object (``request.Request``)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import os

CORE = os.path.normpath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', '..',
                                     'plugins', 'module_utils', '_placement'))

MAX_LINES = 700
MAX_PARAMETERS = 8


def _sources():
    for folder, _dirs, files in os.walk(CORE):
        for name in sorted(files):
            if name.endswith('.py'):
                path = os.path.join(folder, name)
                yield os.path.relpath(path, CORE).replace(os.sep, '/'), path


def parameters(func, in_class):
    """The parameters of a ``def`` as the limit counts them."""
    args = func.args
    names = [a.arg for a in getattr(args, 'posonlyargs', []) + args.args + args.kwonlyargs]
    if in_class and names and names[0] in ('self', 'cls'):
        names = names[1:]
    if args.vararg is not None:
        names.append('*' + args.vararg.arg)
    if args.kwarg is not None:
        names.append('**' + args.kwarg.arg)
    return names


def functions(tree):
    """``[(qualified name, def node, defined in a class)]`` of every function, nested ones included."""
    found = []

    def visit(node, prefix, in_class):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.append((prefix + child.name, child, in_class))
                visit(child, prefix + child.name + '.', False)
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + '.', True)
            else:
                visit(child, prefix, in_class)
    visit(tree, '', False)
    return found


def _over_limits():
    long_files, many_params = {}, {}
    for rel, path in _sources():
        with open(path) as handle:
            text = handle.read()
        lines = len(text.splitlines())
        if lines > MAX_LINES:
            long_files[rel] = lines
        for name, func, in_class in functions(ast.parse(text, path)):
            count = len(parameters(func, in_class))
            if count > MAX_PARAMETERS:
                many_params['%s:%s' % (rel, name)] = count
    return long_files, many_params


def test_the_reader_counts_what_the_limit_means():
    tree = ast.parse('def f(a, b=1, *rest, c, **more):\n    pass\n'
                     'class K(object):\n    def m(self, x):\n        def inner(self, y):\n            pass\n')
    found = dict((name, parameters(func, in_class)) for name, func, in_class in functions(tree))
    assert found == {'f': ['a', 'b', 'c', '*rest', '**more'], 'K.m': ['x'], 'K.m.inner': ['self', 'y']}
    rels = [rel for rel, _path in _sources()]
    assert 'node/reshaper.py' in rels and 'nova/services.py' in rels and len(rels) > 50


def test_no_core_file_over_700_lines():
    long_files, _params = _over_limits()
    assert long_files == {}


def test_no_core_function_with_more_than_8_parameters():
    _files, many_params = _over_limits()
    assert many_params == {}
