# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures for the Placement modules' unit tests: run a module's main() on a tmp embedded_db.

``run_module(module, args, check=False, diff=False)`` runs ``module.main()`` with
``patch_module_args`` (ansible-core 2.19), catches its exit and returns
``(rc, result)`` decoded from what the module printed, exactly as Ansible would
see it.  ``embedded_db`` is added to ``args`` unless the test gives backend
options itself.  ``store`` is an EmbeddedBackend on the same file, for arranging
state and checking what a task did (or did not) write.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible.module_utils.common import warnings as ansible_warnings
from ansible.module_utils.testing import patch_module_args

from ansible_collections.placement.upgrade.plugins.module_utils._placement.embedded import EmbeddedBackend

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
        if check:
            args['_ansible_check_mode'] = True
        if diff:
            args['_ansible_diff'] = True
        # A real module run is a fresh process: start without the warnings of earlier runs.
        ansible_warnings._global_warnings.clear()  # pylint: disable=protected-access
        ansible_warnings._global_deprecations.clear()  # pylint: disable=protected-access
        with patch_module_args(args):
            with pytest.raises(SystemExit) as info:
                module.main()
        out = capsys.readouterr().out
        result = json.loads(out)
        assert 'Traceback' not in out
        return info.value.code, result
    return run
