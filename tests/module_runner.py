# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run a module's main() in-process the way Ansible runs it in a fresh process.

The one place that knows the in-process traps of ansible-core (2.18 to 2.22, the versions
``requires_ansible`` claims; ``.ci/core-matrix.sh`` runs the unit tests on each):
* module args go through ``ansible.module_utils.testing.patch_module_args`` (2.19), or
  ``basic._ANSIBLE_ARGS`` before it (:func:`patch_module_args` here does either);
* warnings and deprecations live in process-wide lists: start each run with them empty;
* once any controller code (a callback, ``ansible.plugins``) was imported in the test process,
  ``module.warn`` would go to the controller's Display instead of the result: run with
  ``ansible.module_utils._internal.is_controller`` off, as in a real module process;
* the module ends with SystemExit; its JSON result is on stdout, and it must never print a
  traceback;
* ansible-core 2.22 no longer masks a module's result in the module: it returns the secrets it
  registered (``_ansible_new_secrets``, those new to the process-wide masker: the runner gives each
  run a masker of its own, as a fresh module process has) and the controller masks what it shows.
  The runner masks the result with them as the module did up to 2.21 (``in_process.mask_no_log_values``, checked
  against ``remove_values()``'s output in test_in_process.py), so a result compares on every release.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import json

import pytest

from ansible.module_utils import basic
from ansible.module_utils.common import parameters as module_parameters
from ansible.module_utils.common import warnings as ansible_warnings
from ansible.module_utils.common.text.converters import to_bytes
from ansible_collections.placement.upgrade.plugins.plugin_utils.in_process import mask_no_log_values

try:  # ansible-core 2.22+: secrets registered in a process-wide masker
    from ansible.module_utils import secrets as ansible_secrets
    from ansible.module_utils._internal._secrets import SecretMasker
except ImportError:
    ansible_secrets = SecretMasker = None

try:  # ansible-core 2.19+
    from ansible.module_utils import _internal as ansible_internal
    from ansible.module_utils.testing import patch_module_args as _patch_module_args
except ImportError:  # ansible-core 2.18
    ansible_internal = None
    _patch_module_args = None


#: ansible-core 2.21+: ``invocation`` only on the controller's request
INJECTS_ON_REQUEST = 'inject_invocation' in getattr(module_parameters, 'PASS_VARS', {})


@contextlib.contextmanager
def patch_module_args(args):
    """The module arguments ``AnsibleModule`` reads, on every supported ansible-core.

    From ansible-core 2.21 a module returns ``invocation`` (its arguments, secrets masked) only
    when the controller asks for it (``INJECT_INVOCATION``, off by default; always on before):
    the tests ask for it as such a controller does, so the masking is checked on every release."""
    if INJECTS_ON_REQUEST and '_ansible_inject_invocation' not in args:
        args = dict(args, _ansible_inject_invocation=True)
    if _patch_module_args is not None:
        with _patch_module_args(args):
            yield
        return
    old = basic._ANSIBLE_ARGS  # pylint: disable=protected-access
    basic._ANSIBLE_ARGS = to_bytes(json.dumps({'ANSIBLE_MODULE_ARGS': args}))  # pylint: disable=protected-access
    try:
        yield
    finally:
        basic._ANSIBLE_ARGS = old  # pylint: disable=protected-access


@contextlib.contextmanager
def module_process():
    """What a fresh module process starts with, for the code run inside: no warnings or deprecations
    yet, ``is_controller`` off and (ansible-core 2.22+) a secret masker of its own, so the secrets the
    module registers are new to it and come back in ``_ansible_new_secrets`` as in a real run (in a
    test process that already registered them, they would not)."""
    ansible_warnings._global_warnings.clear()  # pylint: disable=protected-access
    ansible_warnings._global_deprecations.clear()  # pylint: disable=protected-access
    was_controller = getattr(ansible_internal, 'is_controller', None)
    if ansible_internal is not None:
        ansible_internal.is_controller = False
    masker = getattr(ansible_secrets, '_secret_masker', None)
    if masker is not None:
        ansible_secrets._secret_masker = SecretMasker()  # pylint: disable=protected-access
    try:
        yield
    finally:
        if ansible_internal is not None:
            ansible_internal.is_controller = was_controller
        if masker is not None:
            ansible_secrets._secret_masker = masker  # pylint: disable=protected-access


def controller_view(out):
    """The result a module printed (``out``, its stdout) as the controller shows it.

    Up to ansible-core 2.21 the module masked it itself; from 2.22 the module returns the secrets
    it registered (``_ansible_new_secrets``) and the controller masks with them (see above)."""
    result = json.loads(out)
    secrets = result.pop('_ansible_new_secrets', None)
    if secrets:
        result = mask_no_log_values(result, secrets)
    return result


def run_module_main(main, args, capsys, check=False, diff=False):
    """Run ``main()`` with ``args``; return ``(exit code, result dict)``."""
    args = dict(args)
    if check:
        args['_ansible_check_mode'] = True
    if diff:
        args['_ansible_diff'] = True
    with module_process():
        with patch_module_args(args):
            with pytest.raises(SystemExit) as info:
                main()
    out = capsys.readouterr().out
    assert 'Traceback' not in out
    return info.value.code, controller_view(out)
