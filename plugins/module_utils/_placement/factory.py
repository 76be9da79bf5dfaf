# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pick a backend from options.

``embedded_db`` (a file path) selects the embedded SQLite placement;
otherwise the openstack.cloud-style options (``cloud``, ``auth``,
``auth_type``, ``region_name``, ``validate_certs``, ``ca_cert``,
``client_cert``, ``client_key``, ``interface``, ``api_timeout``) or the
``OS_CLOUD`` / ``OS_AUTH_URL`` environment select the REST backend.
The REST module (and so openstacksdk) is imported only when it is chosen.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from .errors import ConfigurationError

AUTH_OPTIONS = ('cloud', 'auth', 'auth_type', 'region_name', 'validate_certs', 'ca_cert',
                'client_cert', 'client_key', 'interface', 'api_timeout')


def wants_rest(options, environ=None):
    environ = os.environ if environ is None else environ
    if options.get('embedded_db'):
        return False
    if options.get('cloud') or options.get('auth'):
        return True
    return bool(environ.get('OS_CLOUD') or environ.get('OS_AUTH_URL'))


def get_backend(options, environ=None, create=True):
    """Return an open Backend for ``options`` (a dict; unknown keys are ignored).

    ``create=False`` refuses to create a new embedded database: callers that only
    read, or that act on providers which must already exist, pass it so a wrong
    ``embedded_db`` path fails clearly instead of answering from an empty placement.
    """
    options = dict(options or {})
    if options.get('embedded_db'):
        from .embedded import EmbeddedBackend
        return EmbeddedBackend(options['embedded_db'], create=create)
    if wants_rest(options, environ):
        from .rest import RestBackend
        return RestBackend.from_options(dict((k, options.get(k)) for k in AUTH_OPTIONS))
    raise ConfigurationError(
        'No placement to talk to: set embedded_db to the path of an embedded placement '
        'database, or cloud/auth (or OS_CLOUD in the environment) for a real Placement API.')
