# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run a module's main() in-process the way Ansible runs it in a fresh process.

The one place that knows the in-process traps of ansible-core 2.19:
* module args go through ``ansible.module_utils.testing.patch_module_args``;
* warnings and deprecations live in process-wide lists: start each run with them empty;
* once any controller code (a callback, ``ansible.plugins``) was imported in the test process,
  ``module.warn`` would go to the controller's Display instead of the result: run with
  ``ansible.module_utils._internal.is_controller`` off, as in a real module process;
* the module ends with SystemExit; its JSON result is on stdout, and it must never print a
  traceback.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible.module_utils import _internal as ansible_internal
from ansible.module_utils.common import warnings as ansible_warnings
from ansible.module_utils.testing import patch_module_args


def run_module_main(main, args, capsys, check=False, diff=False):
    """Run ``main()`` with ``args``; return ``(exit code, result dict)``."""
    args = dict(args)
    if check:
        args['_ansible_check_mode'] = True
    if diff:
        args['_ansible_diff'] = True
    ansible_warnings._global_warnings.clear()  # pylint: disable=protected-access
    ansible_warnings._global_deprecations.clear()  # pylint: disable=protected-access
    was_controller = ansible_internal.is_controller
    ansible_internal.is_controller = False
    try:
        with patch_module_args(args):
            with pytest.raises(SystemExit) as info:
                main()
    finally:
        ansible_internal.is_controller = was_controller
    out = capsys.readouterr().out
    assert 'Traceback' not in out
    return info.value.code, json.loads(out)
