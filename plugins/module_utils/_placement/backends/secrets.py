# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which option values are secrets: the ``auth`` / ``cloud`` keys and ``OS_*`` variables that hold one.

The lowest floor of the backends: it imports nothing of them, so :mod:`.factory` (option
-> backend, the SDK log's masking), :mod:`.rest` (the secrets of the cloud openstacksdk
resolved) and the Ansible side (``no_log`` values) all read the one rule here.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

#: what a secret is replaced by where it would be written
MASK = '********'

#: a key naming a secret (lower case, ``-`` read as ``_``): keystoneauth's password, token,
#: application_credential_secret, passcode (TOTP), client_secret / access_token /
#: refresh_token (OIDC), consumer_secret / access_secret (OAuth1), an OIDC ``code``, ...
_SECRET_NAME = re.compile(r'pass(?!ive)|secret|token|private_key|api_key|(?:^|_)(?:t?otp|code)$')
#: ... unless it only names or locates one (application_credential_id/_name,
#: access_token_endpoint, access_token_type, ...)
_NOT_SECRET_SUFFIXES = ('_id', '_name', '_type', '_url', '_uri', '_endpoint', '_file', '_path',
                        '_method', '_methods', '_scope', '_format', '_version')


def is_secret_name(name):
    """True when an ``auth`` / ``cloud`` key (at any depth) or an ``OS_*`` variable holds a secret."""
    if not isinstance(name, str):
        return False
    key = name.lower().replace('-', '_')
    if key.startswith('os_'):
        key = key[3:]
    return bool(_SECRET_NAME.search(key)) and not key.endswith(_NOT_SECRET_SUFFIXES)


def secret_values(value, secret=False):
    """Every secret leaf value (as text) in ``value``: dicts and lists walked at any depth."""
    found = set()
    if isinstance(value, dict):
        for key, sub in value.items():
            found.update(secret_values(sub, secret or is_secret_name(key)))
    elif isinstance(value, (list, tuple)):
        for sub in value:
            found.update(secret_values(sub, secret))
    elif secret and value is not None and not isinstance(value, bool):
        text = str(value)
        if text:
            found.add(text)
    return found


def environment_secrets(environ=None):
    """The values of the ``OS_*`` variables that hold a secret (OS_PASSWORD, OS_TOKEN, ...)."""
    environ = os.environ if environ is None else environ
    return set(value for name, value in environ.items()
               if name.upper().startswith('OS_') and value and is_secret_name(name))
