# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pick a backend from options.

``embedded_db`` (a file path) selects the embedded SQLite placement;
otherwise the openstack.cloud-style options (``cloud``, ``auth``,
``auth_type``, ``region_name``, ``validate_certs``, ``ca_cert``,
``client_cert``, ``client_key``, ``interface``, ``api_timeout``) or the
``OS_CLOUD`` / ``OS_AUTH_URL`` environment select the REST backend.
The backend chosen is the only one imported (:func:`get_backend`); which option values
are secrets is :mod:`.secrets`' rule (re-exported here).

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import logging
import os

from ..errors import ConfigurationError
from .secrets import MASK, environment_secrets, is_secret_name, secret_values

AUTH_OPTIONS = ('cloud', 'auth', 'auth_type', 'region_name', 'validate_certs', 'ca_cert',
                'client_cert', 'client_key', 'interface', 'api_timeout')
#: openstack.cloud's options for the SDK's own log
LOG_OPTIONS = ('sdk_log_path', 'sdk_log_level')
#: the loggers the REST backend's libraries write to
SDK_LOGGERS = ('openstack', 'keystoneauth')

# the secret rule lives in secrets.py; its names stay importable from here (common.py, node_preflight)
__all__ = [
    'AUTH_OPTIONS', 'CLOUDS_YAML_PATHS', 'LOG_OPTIONS', 'MASK', 'SDK_LOGGERS', 'clouds_yaml_files',
    'environment_secrets', 'get_backend', 'is_secret_name', 'sdk_logging', 'secret_values', 'wants_rest',
]

#: where openstacksdk (and so openstack.cloud) looks for clouds.yaml when OS_CLIENT_CONFIG_FILE
#: names none (openstack/config/loader.py CONFIG_SEARCH_PATH, in its order)
CLOUDS_YAML_PATHS = ('clouds.yaml', '~/.config/openstack/clouds.yaml', '/etc/openstack/clouds.yaml')


def clouds_yaml_files(environ=None):
    """The clouds.yaml files openstacksdk would read: ``OS_CLIENT_CONFIG_FILE`` (what AWX's
    OpenStack credential sets) and the standard places, those that exist."""
    environ = os.environ if environ is None else environ
    found = []
    named = environ.get('OS_CLIENT_CONFIG_FILE')
    if named and os.path.isfile(os.path.expanduser(named)):
        found.append(os.path.expanduser(named))
    for path in CLOUDS_YAML_PATHS:
        path = os.path.expanduser(path)
        if os.path.isfile(path) and path not in found:
            found.append(path)
    return found


def wants_rest(options, environ=None):
    """Whether the options mean a real Placement: as openstack.cloud decides, a ``cloud`` or
    ``auth`` option, ``OS_CLOUD`` / ``OS_AUTH_URL``, or a clouds.yaml openstacksdk reads
    (``OS_CLIENT_CONFIG_FILE`` or a standard place: with ONE cloud in it, that cloud is used)."""
    environ = os.environ if environ is None else environ
    if options.get('embedded_db'):
        return False
    if options.get('cloud') or options.get('auth'):
        return True
    if environ.get('OS_CLOUD') or environ.get('OS_AUTH_URL'):
        return True
    return bool(clouds_yaml_files(environ))


def get_backend(options, environ=None, create=True, log=None, placement=True):
    """Return an open Backend for ``options`` (a dict; unknown keys are ignored).

    ``log``: optional callable taking one message (the REST backend writes its retries).

    ``placement=False``: the caller talks to nova alone (the compute_service module): a REST
    backend authenticates but does not look Placement up (RestBackend.from_options).

    ``create=False`` refuses to create a new embedded database: callers that only
    read, or that act on providers which must already exist, pass it so a wrong
    ``embedded_db`` path fails clearly instead of answering from an empty placement.
    """
    options = dict(options or {})
    # imported when chosen, not above: a module run compiles only its backend (sqlite/ or rest.py and its rest_transport.py, rest_errors.py)
    if options.get('embedded_db'):
        from .embedded import EmbeddedBackend
        return EmbeddedBackend(options['embedded_db'], create=create)
    if wants_rest(options, environ):
        from .rest import RestBackend
        if options.get('sdk_log_path'):
            sdk_logging(options['sdk_log_path'], options.get('sdk_log_level') or 'INFO',
                        secret_values(options.get('auth')) | secret_values(options.get('cloud'))
                        | environment_secrets(environ))
        return RestBackend.from_options(dict((k, options.get(k)) for k in AUTH_OPTIONS), log=log, placement=placement)
    raise ConfigurationError(
        'No placement to talk to: set embedded_db to the path of an embedded placement '
        'database, or cloud/auth for a real Placement API (or, as for openstack.cloud, OS_CLOUD, '
        'OS_AUTH_URL and the other OS_* variables, or a clouds.yaml named by OS_CLIENT_CONFIG_FILE '
        'or in %s).' % ', '.join(CLOUDS_YAML_PATHS))


class _Redact(logging.Filter):
    """Replaces every secret value in a record's message by ``MASK`` (longest first)."""

    def __init__(self, secrets):
        logging.Filter.__init__(self)
        self.secrets = sorted((s for s in secrets if s), key=len, reverse=True)

    def filter(self, record):
        try:
            text = record.getMessage()
        except Exception:  # pylint: disable=broad-except
            text = str(record.msg)
        for secret in self.secrets:
            text = text.replace(secret, MASK)
        record.msg, record.args = text, None
        return True


def sdk_logging(path, level, secrets):
    """openstack.cloud's ``sdk_log_path`` / ``sdk_log_level``: openstacksdk's and keystoneauth's
    loggers write to ``path`` (created 0600, appended to), every secret masked; ``DEBUG`` logs
    each HTTP request and answer.  One handler per path and process."""
    path = os.path.abspath(os.path.expanduser(path))
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.close(fd)
    except OSError as exc:
        raise ConfigurationError('sdk_log_path %s cannot be written: %s' % (path, exc.strerror or exc))
    handler = None
    for name in SDK_LOGGERS:
        logger = logging.getLogger(name)
        if any(getattr(h, 'placement_upgrade_path', None) == path for h in logger.handlers):
            continue
        if handler is None:
            handler = logging.FileHandler(path)
            handler.placement_upgrade_path = path
            handler.setFormatter(logging.Formatter('%(asctime)s %(levelname)s %(name)s: %(message)s'))
            handler.addFilter(_Redact(secrets))
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG if level == 'DEBUG' else logging.INFO)
