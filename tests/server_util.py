# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every test server of the suite shares: the one place for these helpers.

Used by tests/db_servers.py (MariaDB, PostgreSQL), tests/placement_server.py (Placement),
tests/keystone_server.py (Keystone + Placement) and tests/cloud_twin/cloud.py (the cloud twin):

* :func:`tail`: the end of a log, for an error message;
* :func:`secret`: a random secret no other text of a run can contain;
* :func:`killpg`: a signal to a process group that may be gone already;
* :func:`write_keystone_keys`: Keystone's fernet and credential key repositories;
* :func:`keystone_conf` and :func:`authtoken_section`: the keystone.conf and the
  ``[keystone_authtoken]`` section (keystonemiddleware) every Keystone-backed server writes.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import os
import secrets as _secrets


def tail(path, size=3000):
    """The last ``size`` bytes of the file at ``path`` as text; '' when it cannot be read."""
    try:
        with open(path, 'rb') as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - size))
            return fh.read().decode('utf-8', 'replace')
    except (OSError, TypeError):
        return ''


def secret(prefix, nbytes=12):
    """A random secret that cannot collide with any other text of a run."""
    return '%s-%s' % (prefix, _secrets.token_hex(nbytes))


def killpg(group, sig):
    """``os.killpg`` that ignores a group already gone (or not ours to signal)."""
    try:
        os.killpg(group, sig)
    except (ProcessLookupError, PermissionError):
        pass


def write_keystone_keys(workdir):
    """Two keys (0 and 1) in ``workdir``/fernet-keys and ``workdir``/credential-keys, mode 0600."""
    for repo in ('fernet-keys', 'credential-keys'):
        path = os.path.join(workdir, repo)
        os.makedirs(path, mode=0o700, exist_ok=True)
        for index in ('0', '1'):
            key = base64.urlsafe_b64encode(os.urandom(32))
            fd = os.open(os.path.join(path, index), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, 'wb') as fh:
                fh.write(key)


_KEYSTONE_CONF = """\
[DEFAULT]
{default}
[database]
connection = {connection}

[token]
provider = fernet
expiration = {expiration}

[fernet_tokens]
key_repository = {workdir}/fernet-keys

[fernet_receipts]
key_repository = {workdir}/fernet-keys

[credential]
key_repository = {workdir}/credential-keys

[identity]
password_hash_algorithm = bcrypt
password_hash_rounds = {rounds}
{extra}"""


def keystone_conf(workdir, connection, rounds, expiration=7200, default=(), extra=''):
    """keystone.conf: fernet tokens and keys under ``workdir``, bcrypt at ``rounds``.

    ``default``: the ``[DEFAULT]`` section's lines; ``extra``: sections appended as they are.
    """
    return _KEYSTONE_CONF.format(default=''.join(line + '\n' for line in default), connection=connection,
                                 expiration=int(expiration), workdir=workdir, rounds=int(rounds),
                                 extra=('\n' + extra) if extra else '')


def authtoken_section(auth_url, username, password, project, domain, region, extra=()):
    """The ``[keystone_authtoken]`` section of an API behind keystonemiddleware's ``auth_token``."""
    lines = ['[keystone_authtoken]', 'www_authenticate_uri = %s' % auth_url, 'auth_url = %s' % auth_url,
             'auth_type = password', 'username = %s' % username, 'password = %s' % password,
             'project_name = %s' % project, 'user_domain_name = %s' % domain,
             'project_domain_name = %s' % domain, 'region_name = %s' % region]
    return '\n'.join(lines + list(extra)) + '\n'
