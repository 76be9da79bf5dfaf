# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Keystone tokens shared by the tasks of one ansible-playbook run, in memory only.

Every task of a roll that talks to Placement or nova from the controller (the reshape, nova-compute's
waits and its enable, the tree read) runs in process in a worker that ansible-playbook forks for it
(plugin_utils/in_process.py), with a new keystoneauth session: without this, each one asks Keystone
for a new token.  Keystone checks a password (or an application credential's secret) against its
bcrypt hash for each (keystone's default cost, 12 rounds, is about 0.24 s of its CPU), and five such
tasks run while a node's nova-compute is out of service.

:func:`install`, called once in ansible-playbook's own process (plugin_utils/preload.py, before it
forks any worker), makes an anonymous memory file (``memfd_create``: never on a disk, no name in
any file system, closed on ``exec``) that every worker forked afterwards shares, and a random key
that only that process' memory holds (the workers inherit it by the fork).  A task's REST backend
(backends/rest_transport.py) puts keystoneauth's auth state (the token and the catalog Keystone answered with
it) there, ENCRYPTED with that key (Fernet, from the ``cryptography`` library openstacksdk requires),
under keystoneauth's own cache id of the credentials (a SHA-256 of the auth URL, the user, the
secret and the project or domain scope) with the plugin's kind and its system and unscoped scope
added (keystoneauth's id leaves those out): other credentials never find it.  A program a task runs
as the same user can open the file (``/proc/<pid>/fd``) but reads only ciphertext; the key is in
ansible-playbook's memory, which a process that is not its ancestor cannot read under the kernel's
usual ptrace restriction (Yama ``ptrace_scope`` 1), and which the same user can read without it,
as it can read the password the run was given.

The next task starts from the shared token, unless the catalog it came with has no Placement
endpoint in the task's region and interface (an endpoint or a region added during the run:
backends/rest_transport.py then gets a token of its own, and shares it; nova's tasks take the catalog as it is).  keystoneauth decides whether it can
be used: one that
expires within 120 s is replaced by a new one, and a request Placement or nova refuses with 401
(a token revoked meanwhile) gets a new token and is sent once more; the new token is shared from
then on.  A task waits at most :data:`LOCK_WAIT` seconds for the file's lock (another worker
stopped while holding it) and then goes on without sharing.  The file ends with ansible-playbook.

``PLACEMENT_UPGRADE_TOKEN_SHARING=off`` in ansible-playbook's environment turns it off (each task
then authenticates, as before).  Without ``os.memfd_create`` (Linux 3.17+) or ``cryptography``, or in
a process that did not install it (a module run on its own), nothing is shared.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os
import time

try:
    import fcntl
except ImportError:  # not POSIX: nothing is shared
    fcntl = None

#: ansible-playbook's environment variable that turns the sharing off (``off``, ``0``, ``false``, ``no``).
SWITCH = 'PLACEMENT_UPGRADE_TOKEN_SHARING'

#: Seconds a task waits for the file's lock before it goes on without sharing.
LOCK_WAIT = 1.0

#: Above this, the file holds only the newest entry (an auth state holds the token and the catalog).
MAX_BYTES = 8 * 1024 * 1024

_SHARED = []


def _switched_off(environ=None):
    value = (os.environ if environ is None else environ).get(SWITCH, '')
    return value.strip().lower() in ('off', '0', 'false', 'no')


class SharedTokens(object):
    """keystoneauth auth states by cache id, in a memory file shared with forked processes."""

    def __init__(self, fd, cipher):
        self.fd = fd
        self.cipher = cipher

    @classmethod
    def create(cls):
        """A new, empty memory file and a new key, or None when this system has no memory file or
        no ``cryptography``."""
        make = getattr(os, 'memfd_create', None)
        if make is None or fcntl is None:
            return None
        try:
            from cryptography.fernet import Fernet
        except ImportError:
            return None
        try:
            return cls(make('placement-upgrade-tokens', getattr(os, 'MFD_CLOEXEC', 1)), Fernet(Fernet.generate_key()))
        except OSError:
            return None

    def _lock(self, kind):
        """Take the lock (``fcntl.LOCK_SH`` or ``LOCK_EX``) within :data:`LOCK_WAIT`; False when not."""
        deadline = time.time() + LOCK_WAIT
        while True:
            try:
                fcntl.lockf(self.fd, kind | fcntl.LOCK_NB)
                return True
            except OSError:
                if time.time() >= deadline:
                    return False
                time.sleep(0.01)

    def _entries(self):
        size = os.fstat(self.fd).st_size
        if not size:
            return {}
        try:
            entries = json.loads(os.pread(self.fd, size, 0).decode('utf-8'))
        except ValueError:
            return {}
        return entries if isinstance(entries, dict) else {}

    def get(self, key):
        """The auth state kept under ``key``, or None."""
        try:
            if not self._lock(fcntl.LOCK_SH):
                return None
            try:
                sealed = self._entries().get(key)
            finally:
                fcntl.lockf(self.fd, fcntl.LOCK_UN)
            return self.cipher.decrypt(sealed.encode('ascii')).decode('utf-8') if sealed else None
        except Exception:  # pylint: disable=broad-except
            return None     # not readable, not ours, or not one this key sealed: nothing is shared

    def put(self, key, state):
        """Keep ``state`` under ``key`` (None removes it); False when it could not be kept."""
        try:
            sealed = None if state is None else self.cipher.encrypt(state.encode('utf-8')).decode('ascii')
            if not self._lock(fcntl.LOCK_EX):
                return False
            try:
                entries = self._entries()
                if sealed is None:
                    entries.pop(key, None)
                else:
                    entries[key] = sealed
                data = json.dumps(entries).encode('utf-8')
                if len(data) > MAX_BYTES:
                    entries = {key: sealed} if sealed is not None else {}
                    data = json.dumps(entries).encode('utf-8')
                    if len(data) > MAX_BYTES:
                        data = b'{}'
                os.ftruncate(self.fd, 0)
                os.pwrite(self.fd, data, 0)
                return key in json.loads(data.decode('utf-8'))
            finally:
                fcntl.lockf(self.fd, fcntl.LOCK_UN)
        except Exception:  # pylint: disable=broad-except
            return False


def install(environ=None):
    """Make the shared file, once per process tree (call it in ansible-playbook's own process,
    before it forks); returns it, or None when it is switched off or cannot be made."""
    if not _SHARED:
        _SHARED.append(None if _switched_off(environ) else SharedTokens.create())
    return _SHARED[0]


def shared():
    """The file :func:`install` made in this process or in the one it was forked from, or None."""
    return _SHARED[0] if _SHARED else None


def key_of(plugin, cache_id):
    """The shared entry's name for ``plugin``: keystoneauth's cache id (the auth URL, the user, the
    secret, the project or domain scope) with what it leaves out, the plugin's kind and its system
    and unscoped scope (a system-scoped token is never handed to a project-scoped session)."""
    parts = [cache_id, type(plugin).__module__ + '.' + type(plugin).__name__]
    for name in ('system_scope', '_system_scope', 'unscoped', '_unscoped'):
        parts.append('%s=%r' % (name, getattr(plugin, name, None)))
    return hashlib.sha256('\x00'.join(parts).encode('utf-8')).hexdigest()


class SessionTokens(object):
    """One keystoneauth session's use of the shared tokens: :meth:`restore` before it
    authenticates, :meth:`keep` after (and again when the task ends: a token renewed meanwhile)."""

    def __init__(self, store, plugin, key):
        self.store, self.plugin, self.key = store, plugin, key
        self.restored = None

    @classmethod
    def of(cls, session):
        """For ``session``'s auth plugin, or None (nothing shared here, or a plugin that keeps no
        state keystoneauth can share: admin_token, noauth)."""
        store = shared()
        plugin = getattr(session, 'auth', None)
        if store is None or plugin is None:
            return None
        try:
            cache_id = plugin.get_cache_id()
        except Exception:  # pylint: disable=broad-except
            return None
        if not cache_id or not callable(getattr(plugin, 'set_auth_state', None)):
            return None
        return cls(store, plugin, key_of(plugin, cache_id))

    def restore(self):
        """Start from the shared token, if any; True when one was installed."""
        state = self.store.get(self.key)
        if not state:
            return False
        try:
            self.plugin.set_auth_state(state)
        except Exception:  # pylint: disable=broad-except
            return False    # a state keystoneauth cannot read
        self.restored = state
        return True

    def drop(self):
        """Forget the restored token in this session (keystoneauth gets a new one; :meth:`keep`
        shares it)."""
        try:
            self.plugin.invalidate()
        except Exception:  # pylint: disable=broad-except
            self.plugin.set_auth_state(None)
        self.restored = None

    def keep(self):
        """Share the session's token when it is not the one restored."""
        try:
            state = self.plugin.get_auth_state()
        except Exception:  # pylint: disable=broad-except
            return False
        if not state or state == self.restored:
            return False
        if self.store.put(self.key, state):
            self.restored = state
            return True
        return False
