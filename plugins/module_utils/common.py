# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Ansible side shared by every module of the collection.

* :func:`placement_argument_spec` -- the backend / auth options (documented once in the
  ``placement.upgrade.auth`` doc fragment) merged with a module's own options;
* :func:`placement_module_kwargs` -- the matching ``mutually_exclusive`` rules;
* :func:`run_module` -- open the backend chosen by the options (``embedded_db`` or a
  real Placement through openstacksdk), run the module's action, and map every
  failure to ``fail_json`` (Placement's status, code and request id for a
  :class:`PlacementError`, the exception type for anything unexpected): a module
  never ends with a traceback.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import traceback

from ansible_collections.placement.upgrade.plugins.module_utils._placement import factory
from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import (
    ConfigurationError,
    PlacementError,
)

#: Default for ``conflict_retries``.
DEFAULT_CONFLICT_RETRIES = 5


def auth_argument_spec():
    """The backend / auth options, named as openstack.cloud names them (plus embedded_db)."""
    return dict(
        embedded_db=dict(type='path'),
        cloud=dict(type='raw'),
        auth=dict(type='dict', no_log=True),
        auth_type=dict(type='str'),
        region_name=dict(type='str'),
        validate_certs=dict(type='bool', aliases=['verify']),
        ca_cert=dict(type='path', aliases=['cacert']),
        client_cert=dict(type='path', aliases=['cert']),
        client_key=dict(type='path', no_log=False, aliases=['key']),
        interface=dict(type='str', default='public', choices=['admin', 'internal', 'public'],
                       aliases=['endpoint_type']),
        api_timeout=dict(type='int'),
        conflict_retries=dict(type='int', default=DEFAULT_CONFLICT_RETRIES),
    )


def placement_argument_spec(**options):
    """The shared options plus the module's own ``options`` (a module option wins)."""
    spec = auth_argument_spec()
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


def backend_options(params):
    """The subset of module params the backend factory reads."""
    keys = ('embedded_db',) + factory.AUTH_OPTIONS
    return dict((key, params.get(key)) for key in keys)


def conflict_attempts(params):
    """``conflict_retries`` (re-reads after a conflict) -> attempts for retry.with_conflict_retry."""
    retries = params.get('conflict_retries')
    if retries is None:
        retries = DEFAULT_CONFLICT_RETRIES
    if retries < 0:
        raise ConfigurationError('conflict_retries must be 0 or more, got %d' % retries)
    return retries + 1


def format_error(exc):
    """One line for an operator: status, title, Placement's code, detail and request id."""
    if isinstance(exc, ConfigurationError) or not exc.status:
        return exc.detail
    return str(exc)


def error_result(exc):
    """The extra keys a failed task returns for a PlacementError."""
    return dict(msg=format_error(exc), error=exc.to_dict())


def run_module(module, action, creates_store=True):
    """Open the backend, run ``action(module, backend, log)``, exit or fail the module.

    ``action`` returns the result dict (``changed`` and the module's keys; ``diff``
    is dropped unless the task runs in diff mode).  ``log`` is a callable taking one
    message (re-reads after a generation conflict, resources created on the way):
    the messages are returned in the ``log`` list of the result.  When a write had
    to be retried after a generation conflict (``retries`` > 0 in the result), one
    warning says so.  ``creates_store=False`` (modules that only read, or act on a
    tree that must already exist) makes a missing ``embedded_db`` file an error
    instead of a new, empty embedded placement.
    """
    messages = []

    def log(message):
        messages.append(message)

    try:
        backend = factory.get_backend(backend_options(module.params), create=creates_store)
        try:
            result = action(module, backend, log)
        finally:
            backend.close()
    except PlacementError as exc:
        failed = error_result(exc)
        failed['log'] = messages
        module.fail_json(**failed)
    except Exception as exc:  # pylint: disable=broad-except
        module.fail_json(
            msg='Unexpected error (%s): %s' % (type(exc).__name__, exc),
            exception=traceback.format_exc(),
            log=messages,
        )
    result = dict(result)
    result.setdefault('changed', False)
    if result.get('retries'):
        module.warn('%d generation conflict(s): the write was recomputed from a fresh read and '
                    'retried (see log)' % result['retries'])
    result['log'] = messages
    if not getattr(module, '_diff', False):
        result.pop('diff', None)
    module.exit_json(**result)
