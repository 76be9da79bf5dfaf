# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Ansible side shared by every module of the collection.

* :func:`placement_argument_spec` -- the backend / auth options (documented once in the
  ``placement.upgrade.auth`` doc fragment) merged with a module's own options;
  the secrets in ``auth`` and ``cloud`` are made ``no_log`` one by one (see below);
* :func:`placement_module_kwargs` -- the matching ``mutually_exclusive`` rules;
* :func:`run_module` -- open the backend chosen by the options (``embedded_db`` or a
  real Placement through openstacksdk), run the module's action, and map every
  failure to ``fail_json`` (Placement's status, code and request id for a
  :class:`PlacementError`, the exception type for anything unexpected): a module
  never ends with a traceback.

Secrets.  ``auth`` and ``cloud`` (a dict) mix secrets (``password``, ``token``,
``application_credential_secret``, ...) with plain text that messages quote (the
endpoint URL, the user name, the project).  ``no_log`` on the whole option would make
Ansible mask EVERY value of it in everything the module returns (an endpoint printed as
``********``, a user ``placement`` turning ``placement.undefined_code`` into
``********.undefined_code``); no ``no_log`` at all would show the password in
``invocation.module_args`` and in the invocation the module writes to syslog/journal as
soon as ``AnsibleModule`` is built.  So the spec built for a run declares, for a dict
given in ``auth`` or ``cloud``, each key it holds as a sub-option (``type: raw``, nested
dicts recursively), with ``no_log`` set on exactly the keys that name a secret
(:func:`is_secret_name`).  Ansible's validator then adds those values, and only those,
to ``no_log_values`` before anything is logged or returned.  The task's arguments are
read with ``ansible.module_utils.basic._load_params`` (the function Ansible documents
for modules that need them before ``AnsibleModule``); when none are loaded (ansible-test
introspecting the module, or a test building a spec outside a run) the plain documented
spec is returned.  :func:`run_module` also adds the secrets of the ``OS_*`` environment
and of the cloud configuration openstacksdk resolved (clouds.yaml) to ``no_log_values``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import traceback

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.placement.upgrade.plugins.module_utils._placement import files
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends import factory
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.factory import environment_secrets, is_secret_name, secret_values
from ansible_collections.placement.upgrade.plugins.module_utils._placement.retry import retries_warning
from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import (
    ConfigurationError,
    PlacementError,
)

#: Default for ``conflict_retries``.
DEFAULT_CONFLICT_RETRIES = 5


def _as_dict(value):
    """A dict option's value as Ansible will read it (a dict, or JSON text of one), else None."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value.strip().startswith('{'):
        try:
            parsed = json.loads(value)
        except ValueError:
            return None
        return parsed if isinstance(parsed, dict) else None
    return None


def _sub_options(value):
    """Sub-options declaring every key of ``value``: ``no_log`` on secrets, dicts recursed."""
    options = {}
    for key, sub in value.items():
        if is_secret_name(key):
            options[key] = dict(type='raw', no_log=True)
        elif isinstance(sub, dict) and sub:
            options[key] = dict(type='dict', no_log=False, apply_defaults=False, options=_sub_options(sub))
        elif (isinstance(sub, list) and sub and all(isinstance(item, dict) for item in sub)
              and len(set(frozenset(item) for item in sub)) == 1):
            # a list of dicts with the same keys (a list with mixed keys stays raw: the
            # validator would add the missing keys as None)
            merged = {}
            for item in sub:
                merged.update(item)
            options[key] = dict(type='list', elements='dict', no_log=False, options=_sub_options(merged))
        else:
            options[key] = dict(type='raw', no_log=False)
    return options


def _secret_aware(spec, value):
    """``spec`` (auth or cloud), with sub-options for the dict this run gives, if any."""
    spec = dict(spec)
    value = _as_dict(value) if spec['type'] == 'dict' else (value if isinstance(value, dict) else None)
    if value:
        spec.update(type='dict', apply_defaults=False, options=_sub_options(value))
    return spec


def _task_arguments():
    """The task's module arguments when Ansible has loaded them for this process, else None."""
    try:
        from ansible.module_utils import basic
    except ImportError:  # pragma: no cover - module_utils are only run by Ansible
        return None
    if getattr(basic, '_ANSIBLE_ARGS', None) is None:
        return None
    try:
        args = basic._load_params()  # pylint: disable=protected-access
    except (Exception, SystemExit):  # pylint: disable=broad-except
        return None  # AnsibleModule reports unreadable arguments itself
    return args if isinstance(args, dict) else None


def auth_argument_spec(args=None):
    """The backend / auth options, named as openstack.cloud names them (plus embedded_db).

    ``args``: the task's arguments (default: those Ansible loaded for this run, if any).
    A dict in ``auth`` or ``cloud`` gets its keys declared, ``no_log`` on the secrets.
    """
    if args is None:
        args = _task_arguments() or {}
    return dict(
        embedded_db=dict(type='path'),
        cloud=_secret_aware(dict(type='raw', no_log=False), args.get('cloud')),
        auth=_secret_aware(dict(type='dict', no_log=False), args.get('auth')),
        auth_type=dict(type='str'),
        region_name=dict(type='str'),
        validate_certs=dict(type='bool', aliases=['verify']),
        ca_cert=dict(type='path', aliases=['cacert']),
        client_cert=dict(type='path', aliases=['cert']),
        client_key=dict(type='path', no_log=False, aliases=['key']),
        interface=dict(type='str', choices=['admin', 'internal', 'public'],
                       aliases=['endpoint_type']),
        api_timeout=dict(type='int'),
        sdk_log_path=dict(type='path'),
        sdk_log_level=dict(type='str', default='INFO', choices=['INFO', 'DEBUG']),
        conflict_retries=dict(type='int', default=DEFAULT_CONFLICT_RETRIES),
    )


def placement_argument_spec(**options):
    """The shared options plus the module's own ``options`` (a module option wins)."""
    return placement_argument_spec_for(None, **options)


def placement_argument_spec_for(args, **options):
    """:func:`placement_argument_spec` for the task arguments ``args`` (None: those Ansible
    loaded for this process); an action running the module in process passes them."""
    spec = auth_argument_spec(args)
    spec.update(options)
    return spec


AUTH_MUTUALLY_EXCLUSIVE = [
    ('embedded_db', 'cloud'),
    ('embedded_db', 'auth'),
]


def placement_module_kwargs(mutually_exclusive=None, **kwargs):
    """AnsibleModule keyword arguments with the shared rules added."""
    kwargs['mutually_exclusive'] = list(AUTH_MUTUALLY_EXCLUSIVE) + list(mutually_exclusive or [])
    kwargs.setdefault('supports_check_mode', True)
    return kwargs


class ModuleSpec(object):
    """A module as data, as openstack.cloud's modules declare ``argument_spec``, ``module_kwargs``
    and ``run``: the module's own ``options`` (an argument spec), the ``rules`` between them
    (``mutually_exclusive``, ``required_one_of``, ``required_if``, ``required_by``,
    ``required_together``, ``supports_check_mode``: True unless given), with ``auth`` (the default)
    the backend / auth options of the ``placement.upgrade.auth`` fragment and their rules, and its one
    call: ``action(module, backend, log)`` through :func:`run_module` (``creates_store``,
    ``open_backend`` and ``placement`` are run_module's), or ``execute(module)`` for a module that
    does its work itself.  Every module of the collection has one, ``SPEC``; ``main()`` is
    ``SPEC.main()``, and an action plugin running the module in process (plugin_utils/in_process.py)
    builds its stand-in from the same ``SPEC`` and runs ``SPEC.execute``."""

    def __init__(self, options, action=None, execute=None, auth=True, creates_store=True, open_backend=True,
                 placement=True, **rules):
        if (action is None) == (execute is None):
            raise TypeError('ModuleSpec takes an action or an execute, one of them')
        self.options = dict(options)
        self.auth = auth
        self.rules = rules
        self._action = action
        self._execute = execute
        self._run = dict(creates_store=creates_store, open_backend=open_backend, placement=placement)

    def argument_spec(self, args=None):
        """The argument spec for the task arguments ``args`` (None: those Ansible loaded for this
        process): the secrets of a dict in ``auth`` or ``cloud`` are declared ``no_log``."""
        if not self.auth:
            return dict(self.options)
        return placement_argument_spec_for(args, **self.options)

    def module_kwargs(self):
        """AnsibleModule's keyword arguments besides the spec."""
        if self.auth:
            return placement_module_kwargs(**self.rules)
        kwargs = dict(self.rules)
        kwargs.setdefault('supports_check_mode', True)
        return kwargs

    def execute(self, module):
        """The module's work on ``module`` (an AnsibleModule, or the in-process stand-in): exits or fails it."""
        if self._execute is not None:
            self._execute(module)
        else:
            run_module(module, self._action, **self._run)

    def main(self):
        """The module's ``main()``: its AnsibleModule (:func:`new_module`) built and worked on."""
        self.execute(new_module(argument_spec=self.argument_spec(), **self.module_kwargs()))


def protect_secrets(module, backend=None):
    """Add every secret the module may know to ``module.no_log_values`` (belt and braces).

    The ``auth``/``cloud`` secrets are already there (the spec's ``no_log`` sub-options);
    this adds them again (whatever ansible-core did), the ``OS_*`` environment's and those
    of the cloud configuration openstacksdk resolved for ``backend`` (clouds.yaml).
    """
    values = secret_values(module.params.get('auth'))
    values.update(secret_values(module.params.get('cloud')))
    values.update(environment_secrets())
    if backend is not None:
        values.update(getattr(backend, 'secret_values', set)())
    module.no_log_values.update(values)


def backend_options(params):
    """The subset of module params the backend factory reads."""
    keys = ('embedded_db',) + factory.AUTH_OPTIONS + factory.LOG_OPTIONS
    return dict((key, params.get(key)) for key in keys)


def conflict_attempts(params):
    """``conflict_retries`` (re-reads after a conflict) -> attempts for retry.with_conflict_retry."""
    retries = params.get('conflict_retries')
    if retries is None:
        retries = DEFAULT_CONFLICT_RETRIES
    if retries < 0:
        raise ConfigurationError('conflict_retries must be 0 or more, got %d' % retries)
    return retries + 1


def _ints_as_raw(spec):
    """A copy of an argument spec whose integer options (at any depth) are untyped."""
    out = {}
    for name, option in spec.items():
        option = dict(option)
        if option.get('type') == 'int':
            option['type'] = 'raw'
        if option.get('options'):
            option['options'] = _ints_as_raw(option['options'])
        out[name] = option
    return out


def report_leftovers(module, result):
    """Say what the task removed of earlier interrupted writes (:func:`.files.remove_leftovers`): a
    warning naming the files, and ``leftovers_removed`` (their paths) in ``result``."""
    removed = files.take_removed()
    if removed:
        module.warn('removed %d leftover file(s) of an interrupted earlier write (older than this task, of the '
                    'temporary names this task writes): %s' % (len(removed), ', '.join(removed)))
        result['leftovers_removed'] = removed
    return result


class _Module(AnsibleModule):
    """``AnsibleModule`` whose result also says what the task removed of earlier interrupted writes."""

    def exit_json(self, **kwargs):
        super(_Module, self).exit_json(**report_leftovers(self, kwargs))

    def fail_json(self, msg, **kwargs):
        super(_Module, self).fail_json(msg, **report_leftovers(self, kwargs))


def new_module(argument_spec, **kwargs):
    """``AnsibleModule(argument_spec, **kwargs)``, failing cleanly where ansible-core would not.

    ansible-core 2.19's integer check lets an infinite value (``inf``, ``"inf"``) given to an
    integer option (``conflict_retries``, ``api_timeout``, ``total``, ...) overflow instead of
    refusing it: the options are then read untyped, only to fail with a message.
    """
    try:
        return _Module(argument_spec=argument_spec, **kwargs)
    except OverflowError as exc:
        overflow = str(exc)
    # (outside the except block: ansible-core would attach the traceback to the failure)
    module = _Module(argument_spec=_ints_as_raw(argument_spec), **kwargs)
    names = sorted(name for name in _int_options(argument_spec) if _infinite(module.params.get(name)))
    module.fail_json(msg='%s was given an infinite number (%s); give a whole number'
                     % (', '.join(names) or 'an integer option', overflow))
    return module  # pragma: no cover - fail_json exits


def _int_options(spec):
    return [name for name, option in spec.items() if option.get('type') == 'int']


def _infinite(value):
    try:
        number = float(value)
    except (TypeError, ValueError):
        return False
    return number in (float('inf'), float('-inf'))


def unexpected_error(exc):
    """The one-line message of an exception no code of ours expected: its type, its text and
    where it was raised (file, line, function) for a bug report, never a traceback."""
    where = ''
    frames = traceback.extract_tb(exc.__traceback__) if getattr(exc, '__traceback__', None) else []
    if frames:
        last = frames[-1]
        where = ' (raised at %s:%d in %s)' % (last.filename.rsplit('/', 1)[-1], last.lineno, last.name)
    return 'Unexpected error (%s): %s%s' % (type(exc).__name__, exc, where)


def format_error(exc):
    """One line for an operator: status, title, Placement's code, detail and request id."""
    if isinstance(exc, ConfigurationError) or not exc.status:
        return exc.detail
    return str(exc)


def error_result(exc):
    """The extra keys a failed task returns for a PlacementError (``changed`` when the failed pass
    left something written: ``exc.changed``, set by node/settle.py's failure; ``journal``: what the
    failed pass wrote, node/reshaper.py)."""
    result = dict(msg=format_error(exc), error=exc.to_dict())
    if getattr(exc, 'changed', False) is True:
        result['changed'] = True
    if isinstance(getattr(exc, 'journal', None), dict):
        result['journal'] = exc.journal
    return result


def run_module(module, action, creates_store=True, open_backend=True, placement=True):
    """Open the backend, run ``action(module, backend, log)``, exit or fail the module.

    ``action`` returns the result dict (``changed`` and the module's keys; ``diff``
    is dropped unless the task runs in diff mode).  ``log`` is a callable taking one
    message (re-reads after a generation conflict, resources created on the way):
    the messages are returned in the ``log`` list of the result.  When a write had
    to be retried after a generation conflict (``retries`` > 0 in the result), one
    warning says so.  ``creates_store=False`` (modules that only read, or act on a
    tree that must already exist) makes a missing ``embedded_db`` file an error
    instead of a new, empty embedded placement.  ``open_backend=False`` (modules that
    open the backend themselves, or go on without Placement) passes None as the backend:
    the action gets the same error mapping.  ``placement=False`` (a module that talks to nova
    alone through the backend's session) opens a REST backend without looking Placement up.
    """
    messages = []

    def log(message):
        messages.append(message)

    protect_secrets(module)
    try:
        if open_backend:
            backend = factory.get_backend(backend_options(module.params), create=creates_store, log=log,
                                          placement=placement)
            protect_secrets(module, backend)
            try:
                result = action(module, backend, log)
            finally:
                backend.close()
        else:
            result = action(module, None, log)
    except PlacementError as exc:
        failed = error_result(exc)
        failed['log'] = messages
        module.fail_json(**failed)
    except Exception as exc:  # pylint: disable=broad-except
        module.fail_json(msg=unexpected_error(exc), log=messages)
    result = dict(result)
    result.setdefault('changed', False)
    if result.get('retries'):
        module.warn(retries_warning(result['retries'], result.get('resent', 0)))
    result['log'] = messages
    if not getattr(module, '_diff', False):
        result.pop('diff', None)
    module.exit_json(**result)
