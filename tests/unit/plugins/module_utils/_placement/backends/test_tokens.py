# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""backends/tokens.py: Keystone auth states shared by the processes forked after install(), in memory.

The sharing against a real Keystone and Placement is in tests/integration/test_keystone_auth.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends import tokens


@pytest.fixture
def store(monkeypatch):
    """A fresh shared file, installed as this process' (as preload.warm() installs it)."""
    made = tokens.SharedTokens.create()
    assert made is not None, 'os.memfd_create is missing: the sharing cannot work on this system'
    monkeypatch.setattr(tokens, '_SHARED', [made])
    try:
        yield made
    finally:
        os.close(made.fd)


class Plugin(object):
    """The part of a keystoneauth identity plugin the sharing uses."""

    def __init__(self, cache_id='id-1', state=None):
        self.cache_id, self.state = cache_id, state
        self.installed = []

    def get_cache_id(self):
        return self.cache_id

    def get_auth_state(self):
        return self.state

    def set_auth_state(self, data):
        self.installed.append(data)
        self.state = data


class Session(object):
    def __init__(self, auth):
        self.auth = auth


def state(token):
    return json.dumps({'auth_token': token, 'body': {'token': {'expires_at': '2099-01-01T00:00:00Z'}}})


def test_a_state_put_in_one_process_is_read_in_a_process_forked_after_the_file_was_made(store):
    assert store.get('id-1') is None
    pid = os.fork()
    if pid == 0:    # the child: as a task's worker would
        try:
            os._exit(0 if store.put('id-1', state('t-child')) else 3)
        except BaseException:  # pylint: disable=broad-except
            os._exit(4)
    status = os.waitpid(pid, 0)[1]
    assert os.WEXITSTATUS(status) == 0
    assert store.get('id-1') == state('t-child')
    # and a second child reads what the first one put
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(reader)
        os.write(writer, (store.get('id-1') or '').encode('utf-8'))
        os._exit(0)
    os.close(writer)
    os.waitpid(pid, 0)
    with os.fdopen(reader, 'rb') as handle:
        assert handle.read().decode('utf-8') == state('t-child')


def test_other_credentials_find_nothing_and_none_removes(store):
    store.put('id-1', state('t1'))
    assert store.get('id-2') is None
    store.put('id-2', state('t2'))
    assert (store.get('id-1'), store.get('id-2')) == (state('t1'), state('t2'))
    store.put('id-1', None)
    assert (store.get('id-1'), store.get('id-2')) == (None, state('t2'))


def test_a_file_above_the_limit_keeps_only_the_newest_entry(store, monkeypatch):
    monkeypatch.setattr(tokens, 'MAX_BYTES', 600)     # a sealed 200-byte state is about 370 bytes
    store.put('id-1', 'a' * 200)
    store.put('id-2', 'b' * 200)
    assert (store.get('id-1'), store.get('id-2')) == (None, 'b' * 200)
    # one that is too big alone is not kept, and put says so
    assert store.put('id-3', 'c' * 600) is False
    assert store.get('id-3') is None


def test_the_file_holds_only_ciphertext_and_another_run_cannot_read_it(store):
    store.put('id-1', state('t-secret-token'))
    raw = os.pread(store.fd, os.fstat(store.fd).st_size, 0)
    assert b't-secret-token' not in raw and b'auth_token' not in raw
    # another run's key (another ansible-playbook) reads nothing from it
    other = tokens.SharedTokens.create()
    own_fd = other.fd
    try:
        other.fd = store.fd
        assert other.get('id-1') is None
    finally:
        os.close(own_fd)


def test_a_lock_held_too_long_is_given_up_and_nothing_is_shared(store, monkeypatch):
    import fcntl
    import time
    monkeypatch.setattr(tokens, 'LOCK_WAIT', 0.2)
    store.put('id-1', state('t1'))
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:    # a worker stopped while it holds the lock
        os.close(reader)
        fcntl.lockf(store.fd, fcntl.LOCK_EX)
        os.write(writer, b'x')
        time.sleep(3)
        os._exit(0)
    os.close(writer)
    os.read(reader, 1)
    try:
        started = time.time()
        assert store.get('id-1') is None and store.put('id-1', state('t2')) is False
        assert time.time() - started < 1.5
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(reader)
    # once it is gone (the lock goes with it), the state is there again
    assert store.get('id-1') == state('t1')


def test_a_system_scoped_or_unscoped_session_never_gets_a_project_token():
    """keystoneauth's cache id leaves the system scope and unscoped out (keystoneauth1 5.18.1)."""
    from keystoneauth1.identity import generic, v3
    common = dict(auth_url='http://keystone:5000/v3', username='u', password='p', user_domain_name='Default')
    project = generic.Password(project_name='service', project_domain_name='Default', **common)
    system = generic.Password(system_scope='all', **common)
    plain = generic.Password(**common)
    unscoped = v3.Password(unscoped=True, **common)
    assert system.get_cache_id() == plain.get_cache_id()      # what keystoneauth gives
    keys = [tokens.key_of(p, p.get_cache_id()) for p in (project, system, plain, unscoped, v3.Password(**common))]
    assert len(set(keys)) == len(keys), keys


def test_the_session_starts_from_the_shared_token_and_shares_a_new_one(store):
    first = Plugin()
    tokens_of_first = tokens.SessionTokens.of(Session(first))
    assert tokens_of_first.restore() is False and first.installed == []
    first.state = state('t1')           # what keystoneauth holds once it authenticated
    assert tokens_of_first.keep() is True
    assert store.get(tokens_of_first.key) == state('t1')
    # the next task (same credentials) starts from it; keeping it again writes nothing
    second = Plugin()
    tokens_of_second = tokens.SessionTokens.of(Session(second))
    assert tokens_of_second.key == tokens_of_first.key
    assert tokens_of_second.restore() is True and second.installed == [state('t1')]
    assert tokens_of_second.keep() is False
    # keystoneauth renewed it during the task (expiring, or refused with 401): shared from then on
    second.state = state('t2')
    assert tokens_of_second.keep() is True
    assert store.get(tokens_of_first.key) == state('t2')
    # other credentials (another cache id) start from nothing
    other = Plugin(cache_id='id-2')
    assert tokens.SessionTokens.of(Session(other)).restore() is False and other.installed == []


def test_nothing_is_shared_for_a_plugin_without_a_cache_id_or_without_an_installed_file(store, monkeypatch):
    # admin_token (keystoneauth's token_endpoint.Token) and noauth have no cache id
    assert tokens.SessionTokens.of(Session(Plugin(cache_id=None))) is None
    assert tokens.SessionTokens.of(Session(object())) is None
    assert tokens.SessionTokens.of(Session(None)) is None
    monkeypatch.setattr(tokens, '_SHARED', [])
    assert tokens.SessionTokens.of(Session(Plugin())) is None


def test_a_state_keystoneauth_cannot_read_is_not_installed(store):
    class Refusing(Plugin):
        def set_auth_state(self, data):
            raise ValueError('not a state')
    refusing = tokens.SessionTokens.of(Session(Refusing()))
    store.put(refusing.key, 'garbage')
    assert refusing.restore() is False


@pytest.mark.parametrize('value', ['off', 'OFF', '0', 'false', 'no'])
def test_the_switch_turns_the_sharing_off(monkeypatch, value):
    monkeypatch.setattr(tokens, '_SHARED', [])
    assert tokens.install(environ={tokens.SWITCH: value}) is None
    assert tokens.shared() is None


def test_install_makes_the_file_once(monkeypatch):
    monkeypatch.setattr(tokens, '_SHARED', [])
    made = tokens.install(environ={})
    try:
        assert made is not None and tokens.install(environ={}) is made and tokens.shared() is made
        # closed on exec: no program a task starts inherits it
        import fcntl
        assert fcntl.fcntl(made.fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC
    finally:
        os.close(made.fd)
