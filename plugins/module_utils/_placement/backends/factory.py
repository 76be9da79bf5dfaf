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
    'AUTH_OPTIONS', 'LOG_OPTIONS', 'MASK', 'SDK_LOGGERS', 'SEARCH_PATH_TEXT', 'environment_secrets',
    'get_backend', 'is_secret_name', 'sdk_clouds', 'sdk_logging', 'secret_values', 'wants_rest',
]

#: where openstacksdk looks when OS_CLIENT_CONFIG_FILE names no file, as messages say it
#: (openstack/config/loader.py CONFIG_SEARCH_PATH; each place's clouds.yaml/.yml/.json and secure.yaml)
SEARCH_PATH_TEXT = 'the working directory, ~/.config/openstack or /etc/openstack'


def sdk_clouds():
    """The clouds openstacksdk's own loader (``openstack.config.OpenStackConfig``, what
    ``openstack.connect`` reads) finds in its files: ``OS_CLIENT_CONFIG_FILE`` /
    ``OS_CLIENT_SECURE_FILE`` and its search path, each ``clouds.yaml`` (.yml, .json) merged with
    its ``secure.yaml``; the ``OS_*`` variables' cloud is not counted.  ``None`` when openstacksdk
    is not installed; ``['?']`` when openstacksdk refuses a file (it says why on connecting)."""
    try:
        from openstack.config import loader as sdk_loader
    except ImportError:
        return None
    try:
        config = sdk_loader.OpenStackConfig()
    except Exception:  # pylint: disable=broad-except  # a bad file: openstacksdk says so on connect
        return ['?']
    if not (config.config_filename or config.secure_config_filename):
        return []
    return [name for name in config.get_cloud_names() if name not in ('defaults', config.envvar_key)]


def wants_rest(options, environ=None):
    """Whether the options mean a real Placement: as openstack.cloud decides, a ``cloud`` or
    ``auth`` option, ``OS_CLOUD`` / ``OS_AUTH_URL``, or a cloud in the files openstacksdk reads
    (:func:`sdk_clouds`: with ONE cloud there, that cloud is used)."""
    environ = os.environ if environ is None else environ
    if options.get('embedded_db'):
        return False
    if options.get('cloud') or options.get('auth'):
        return True
    if environ.get('OS_CLOUD') or environ.get('OS_AUTH_URL'):
        return True
    clouds = sdk_clouds()
    if clouds is None:
        # no openstacksdk to read a clouds.yaml: a file named for it still means REST (and the
        # REST backend then says to install openstacksdk)
        return bool(environ.get('OS_CLIENT_CONFIG_FILE'))
    return bool(clouds)


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
    # imported when chosen, not above: a module run compiles only its backend (sqlite/ or rest.py and its rest_transport.py, rest_errors.py, rest_retries.py)
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
        'OS_AUTH_URL and the other OS_* variables, or a clouds.yaml (and its secure.yaml) named by '
        'OS_CLIENT_CONFIG_FILE or in %s).' % SEARCH_PATH_TEXT)


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
