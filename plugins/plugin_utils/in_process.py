# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run a module of the collection inside its action plugin, on the controller (plugin_utils: controller side).

A module delegated to the controller (the roll's Placement steps) costs a process per task:
Ansible packs the module and every module_util it imports (AnsiballZ), starts a Python and
imports them all again, for a few milliseconds of Placement work.  When the task would run
on this very machine, as this user, in this Python, the action plugin runs the module's own
code here instead (:func:`run`), through :class:`InProcessModule`: the part of
``AnsibleModule`` the collection's modules use, with the same argument validation
(``ArgumentSpecValidator`` over the spec and rules the module file declares as data, its
``SPEC``), the same ``no_log`` masking of the result, check and diff mode, warnings, and
``fail_json`` / ``exit_json``.  The module's ``main()``, ``SPEC.main()``, is the same code
through ``AnsibleModule`` when it runs anywhere else.

:func:`runs_here` decides: the local connection, no become, no task ``environment`` (the module
would see it, this process does not), and the task's Python interpreter is this one (as for
the implicit localhost).  Anything else runs the module as usual.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import importlib
import os
import sys

from ansible import constants as C
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.errors import UnsupportedError
from ansible.plugins.action import ActionBase

from ansible_collections.placement.upgrade.plugins.module_utils.common import report_leftovers

try:  # ansible-core 2.19 and later: templated values carry tags (_AnsibleTaggedStr, _AnsibleTaggedList, ...)
    from ansible.module_utils._internal._datatag import AnsibleTagHelper
except ImportError:  # pragma: no cover - ansible-core 2.18: no data tagging
    AnsibleTagHelper = None

_RULES = ('mutually_exclusive', 'required_together', 'required_one_of', 'required_if', 'required_by')


def untagged(value):
    """``value`` with plain types at every depth, as a module run in its own process gets its
    arguments (JSON): the validator names a value by its type ("<class '..._AnsibleTaggedDict'>
    cannot be converted to a list"), which an operator knows as dict."""
    if AnsibleTagHelper is not None:
        value = AnsibleTagHelper.untag(value)
    if isinstance(value, dict):
        return dict((untagged(key), untagged(item)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return [untagged(item) for item in value]
    return value


class ModuleExit(BaseException):  # like SystemExit: not caught by the modules' own "except Exception"
    """``exit_json`` / ``fail_json`` of an in-process run: carries the module's result."""

    def __init__(self, result):
        super(ModuleExit, self).__init__(result.get('msg', ''))
        self.result = result


class InProcessModule(object):
    """What the collection's modules use of ``AnsibleModule``, for a run inside an action plugin."""

    def __init__(self, name, argument_spec, args, check_mode=False, diff=False, **kwargs):
        self._name = name
        self.check_mode = bool(check_mode)
        self._diff = bool(diff)
        self._warnings = []
        self.no_log_values = set()
        args = untagged(dict(args))
        self.params = dict(args)
        supports_check_mode = kwargs.pop('supports_check_mode', False)
        rules = dict((key, kwargs.pop(key, None)) for key in _RULES)
        if kwargs:
            raise TypeError('unexpected AnsibleModule arguments: %s' % ', '.join(sorted(kwargs)))
        try:
            validation = ArgumentSpecValidator(argument_spec, **rules).validate(dict(args))
        except OverflowError as exc:
            # (ansible-core 2.19 lets an infinite number overflow an integer option): named as
            # module_utils/common.py's new_module names them
            self.fail_json(msg='%s was given an infinite number (%s); give a whole number'
                           % (', '.join(_infinite_ints(argument_spec, args)) or 'an integer option', exc))
        self.no_log_values.update(validation._no_log_values)  # pylint: disable=protected-access
        self.params = validation.validated_parameters
        if validation.error_messages:
            msg = validation.errors.msg
            if isinstance(validation.errors[0], UnsupportedError):
                msg = 'Unsupported parameters for (%s) module: %s' % (name, msg)
            self.fail_json(msg=msg)
        if self.check_mode and not supports_check_mode:
            self.exit_json(skipped=True, msg='module (%s) does not support check mode' % name)

    def warn(self, warning):
        self._warnings.append(str(warning))

    def _result(self, kwargs):
        result = report_leftovers(self, dict(kwargs))
        result.setdefault('invocation', {'module_args': self.params})
        if self._warnings:
            result['warnings'] = list(self._warnings)
        preserved = dict((k, v) for k, v in result.items() if v is None or isinstance(v, bool))
        result = mask_no_log_values(result, self.no_log_values)
        result.update(preserved)
        return result

    def exit_json(self, **kwargs):
        raise ModuleExit(self._result(kwargs))

    def fail_json(self, msg, **kwargs):
        kwargs['failed'] = True
        kwargs['msg'] = msg
        raise ModuleExit(self._result(kwargs))


#: What a value equal to a no_log value becomes (as AnsibleModule's result said it up to ansible-core 2.21).
NO_LOG_PLACEHOLDER = 'VALUE_SPECIFIED_IN_NO_LOG_PARAMETER'


def mask_no_log_values(value, no_log_values):
    """``value`` with every ``no_log`` value masked, as ``remove_values()`` masked a module's result.

    A string (or number) equal to a no_log value becomes :data:`NO_LOG_PLACEHOLDER`, a no_log value
    inside a string becomes ``********`` (a number containing one: the placeholder), containers are
    copied with their values masked (their keys as they are), booleans and ``None`` stay.  ansible-core
    2.22 deprecates ``remove_values()`` (a module's result is masked by the controller from the secrets
    it registers); a run in process has no such step, so it masks here, the same on every release."""
    secrets = sorted((str(s) for s in no_log_values if s), key=len, reverse=True)
    if not secrets:
        return value
    return _mask(value, secrets, frozenset(secrets))


def _mask(value, secrets, secret_set):
    if value is None or value is True or value is False:
        return value
    if isinstance(value, (str, bytes)):
        text = value.decode('utf-8', 'surrogateescape') if isinstance(value, bytes) else str(value)
        if text in secret_set:
            return NO_LOG_PLACEHOLDER
        for secret in secrets:
            text = text.replace(secret, '*' * 8)
        return text.encode('utf-8', 'surrogateescape') if isinstance(value, bytes) else text
    if isinstance(value, dict):
        return dict((key, _mask(item, secrets, secret_set)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return [_mask(item, secrets, secret_set) for item in value]
    if isinstance(value, (set, frozenset)):
        return set(_mask(item, secrets, secret_set) for item in value)
    if isinstance(value, (int, float)):
        text = str(value)
        return NO_LOG_PLACEHOLDER if any(secret in text for secret in secrets) else value
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value
    raise TypeError('Value of unknown type: %s, %s' % (type(value), value))


def _infinite_ints(spec, args):
    """The integer options of ``spec`` given an infinite number in ``args`` (by name or alias), sorted."""
    names = []
    for name, option in spec.items():
        if option.get('type') != 'int':
            continue
        for key in [name] + list(option.get('aliases') or []):
            try:
                number = float(args.get(key))
            except (TypeError, ValueError):
                continue
            if number in (float('inf'), float('-inf')):
                names.append(name)
                break
    return sorted(names)


def run(name, module_file, args, check_mode=False, diff=False):
    """The result of the module ``name`` run here: ``module_file`` is its module file, whose
    ``SPEC`` (a module_utils/common.py ``ModuleSpec``) holds its arguments as data and its work
    (``SPEC.execute(module)``).  Never raises: an unexpected error is a failed result."""
    try:
        spec = module_file.SPEC
        module = InProcessModule(name, spec.argument_spec(args), args, check_mode=check_mode, diff=diff,
                                 **spec.module_kwargs())
        spec.execute(module)
    except ModuleExit as done:
        return done.result
    except Exception as exc:  # pylint: disable=broad-except
        return {'failed': True, 'msg': 'Unexpected error in %s (%s): %s' % (name, type(exc).__name__, exc)}
    return {'failed': True, 'msg': '%s ended without a result' % name}


def _same_python(interpreter):
    if not interpreter:
        return False  # interpreter discovery would choose it: maybe another Python
    try:
        return os.path.realpath(interpreter) == os.path.realpath(sys.executable)
    except (OSError, TypeError, ValueError):
        return False


def runs_here(transport, become, environment, interpreter):
    """Whether the module would run on this machine, as this user, in this Python, with this environment."""
    environment = [entry for entry in (environment or []) if entry]
    return transport == 'local' and not become and not environment and _same_python(interpreter)


class InProcessAction(ActionBase):
    """Base of the action plugins that run their module in process on the controller (``_run_module``).

    A subclass sets ``MODULE`` (the module's FQCN); its module file (the module's ``SPEC``) is
    imported from plugins/modules/ when first needed (``_module_file()``).
    """

    MODULE = None

    def _module_file(self):
        """The module file of :attr:`MODULE` (this collection's plugins/modules/<name>.py), imported
        when first needed."""
        return importlib.import_module('ansible_collections.placement.upgrade.plugins.modules.%s'
                                       % self.MODULE.rsplit('.', 1)[-1])

    def _interpreter(self, task_vars):
        use_vars = task_vars or {}
        if self._task.delegate_to:
            use_vars = (use_vars.get('ansible_delegated_vars') or {}).get(self._task.delegate_to) or use_vars
        value = use_vars.get('ansible_python_interpreter')
        if value is None:
            # the configured one (interpreter_python, ANSIBLE_PYTHON_INTERPRETER): a path, or auto*
            try:
                value = C.config.get_config_value('INTERPRETER_PYTHON', variables=use_vars)
            except Exception:  # pylint: disable=broad-except
                return None
            if not value or str(value).startswith('auto'):
                return None
        try:
            return self._templar.template(value)
        except Exception:  # pylint: disable=broad-except
            return value

    def in_process(self, task_vars):
        """Whether this task's module would run here, so it can run in this process."""
        transport = str(getattr(self._connection, 'transport', '') or '')
        return runs_here(transport.rsplit('.', 1)[-1], self._play_context.become, self._task.environment,
                         self._interpreter(task_vars))

    def _run_module(self, module_args, task_vars):
        """The module's result for ``module_args``: run here when it would run here, else executed."""
        if not self.in_process(task_vars):
            return self._execute_module(module_name=self.MODULE, module_args=module_args, task_vars=task_vars)
        diff = getattr(self._task, 'diff', None)
        if diff is None:
            diff = self._play_context.diff
        return run(self.MODULE, self._module_file(), module_args, check_mode=self._play_context.check_mode,
                   diff=bool(diff))


class RunModuleAction(InProcessAction):
    """An action plugin that only runs its module (in process when it would run here)."""

    def run(self, tmp=None, task_vars=None):
        result = super(RunModuleAction, self).run(tmp, task_vars)
        del tmp
        result.update(self._run_module(dict(self._task.args), task_vars))
        return result
