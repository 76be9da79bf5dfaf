# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures for the Placement modules' unit tests: run a module's main() on a tmp embedded_db.

``run_module(module, args, check=False, diff=False)`` runs ``module.main()`` with
tests/module_runner.py (the one in-process runner), catches its exit and returns
``(rc, result)`` decoded from what the module printed, exactly as Ansible would
see it.  ``embedded_db`` is added to ``args`` unless the test gives backend
options itself.  ``store`` is an EmbeddedBackend on the same file, for arranging
state and checking what a task did (or did not) write.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend

from module_runner import run_module_main

BACKEND_KEYS = ('embedded_db', 'cloud', 'auth')


@pytest.fixture
def db_path(tmp_path):
    return str(tmp_path / 'placement.db')


@pytest.fixture
def store(db_path):
    backend = EmbeddedBackend(db_path)
    try:
        yield backend
    finally:
        backend.close()


@pytest.fixture
def run_module(capsys, db_path):
    def run(module, args, check=False, diff=False):
        args = dict(args)
        if not any(key in args for key in BACKEND_KEYS):
            args['embedded_db'] = db_path
        return run_module_main(module.main, args, capsys, check=check, diff=diff)
    return run
