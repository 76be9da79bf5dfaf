# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The run's Keystone tokens shared by its tasks (backends/tokens.py), against a REAL Keystone and a
real Placement validating every token with it (tests/keystone_server.py, ``token_cache_time = -1``:
a revoked token is refused at once).

Each "task" here is what ansible-playbook does for an in-process task: a process forked from the
one that installed the shared file, which opens the REST backend (password auth, Placement from
the catalog), sends a request, closes it and ends.  The token each used is what it reports."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends import tokens
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.rest import RestBackend

from keystone_server import KeystoneStack, shared_stack
from test_fleet_playbook import playbook as fleet_playbook, statuses
import simfleet

pytestmark = [pytest.mark.real, pytest.mark.slow]


@pytest.fixture(scope='module')
def stack():
    return shared_stack()


@pytest.fixture
def shared(monkeypatch):
    """The file preload.warm() installs in ansible-playbook's process, installed in this one."""
    made = tokens.SharedTokens.create()
    assert made is not None
    monkeypatch.setattr(tokens, '_SHARED', [made])
    try:
        yield made
    finally:
        os.close(made.fd)


def task(opts):
    """One in-process task in a forked worker: {'token': the token its requests carried,
    'providers': how many providers it read} or {'error': ...}."""
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(reader)
        try:
            backend = RestBackend.from_options(opts)
            try:
                out = {'providers': len(backend.list_providers()), 'token': backend.session.get_token()}
            finally:
                backend.close()
        except BaseException as exc:  # pylint: disable=broad-except
            out = {'error': repr(exc)}
        os.write(writer, json.dumps(out).encode('utf-8'))
        os._exit(0)
    os.close(writer)
    with os.fdopen(reader, 'rb') as handle:
        data = handle.read()
    os.waitpid(pid, 0)
    out = json.loads(data.decode('utf-8'))
    assert 'error' not in out, out
    return out


def test_the_tasks_of_a_run_share_one_token(stack, shared):
    used = [task(stack.password_auth('placement'))['token'] for dummy in range(3)]
    assert len(set(used)) == 1, used
    # and it is the one the file holds, alone, sealed
    assert [json.loads(shared.get(key))['auth_token'] for key in shared._entries()] == [used[0]]
    assert used[0].encode('ascii') not in os.pread(shared.fd, os.fstat(shared.fd).st_size, 0)


def test_without_the_shared_file_each_task_gets_its_own_token(stack, monkeypatch):
    monkeypatch.setattr(tokens, '_SHARED', [])
    used = [task(stack.password_auth('placement'))['token'] for dummy in range(3)]
    assert len(set(used)) == 3, used


def test_other_credentials_get_their_own_token(stack, shared):
    placement = task(stack.password_auth('placement'))['token']
    operator = task(stack.password_auth('operator'))['token']
    assert placement != operator
    # each is shared with the tasks of its own credentials
    assert task(stack.password_auth('operator'))['token'] == operator
    assert task(stack.password_auth('placement'))['token'] == placement


def test_a_revoked_shared_token_is_replaced_and_the_new_one_shared(stack, shared):
    first = task(stack.password_auth('placement'))['token']
    stack.keystone.revoke_token(first)
    # Placement refuses the shared token (401); keystoneauth gets a new one and sends the request again
    second = task(stack.password_auth('placement'))
    assert second['token'] != first and second['providers'] >= 0
    # the new token is shared from then on
    assert task(stack.password_auth('placement'))['token'] == second['token']


def _issued(log_path):
    """How many tokens Keystone issued so far: its debug log's POST /v3/auth/tokens requests."""
    posts, paths = set(), set()
    with open(log_path, errors='replace') as handle:
        for line in handle:
            found = re.search(r'\[(?:None )?(req-[0-9a-f-]+)', line)
            if not found:
                continue
            if 'REQUEST_METHOD: `POST`' in line:
                posts.add(found.group(1))
            elif 'PATH_INFO: `/v3/auth/tokens`' in line:
                paths.add(found.group(1))
    return len(posts & paths)


def test_a_roll_through_ansible_playbook_asks_keystone_for_one_token(tmp_path, unique_name):
    """ansible-playbook rolls a fleet with password auth, Placement from Keystone's catalog: the
    roll's tasks use one token between them (the pre-flight play, before the roll's batches, gets
    its own); with PLACEMENT_UPGRADE_TOKEN_SHARING=off each in-process task asks for one."""
    with KeystoneStack(debug=True) as stack:
        opts = stack.password_auth('placement')
        backend = RestBackend.from_options(opts)
        try:
            issued = {}
            for mode in ('shared', 'off'):
                fleet = simfleet.build(str(tmp_path / mode), nodes=4, prefix=unique_name(mode) + '-', backend=backend,
                                       inventory_vars={'placement_backend': opts})
                extra_env = {tokens.SWITCH: 'off'} if mode == 'off' else {}
                before = _issued(stack.keystone.log_path)
                rc, out = fleet_playbook(fleet, 'rolling_reshape.yml', forks=1, env=extra_env)
                assert rc == 0, out
                issued[mode] = _issued(stack.keystone.log_path) - before
                assert set(statuses(fleet).values()) <= {'reshaped', 'noop', 'deferred'}, statuses(fleet)
                assert 'reshaped' in statuses(fleet).values()
        finally:
            backend.close()
    print('tokens Keystone issued for a roll of 4 nodes: %(shared)d shared, %(off)d without sharing' % issued)
    # every node's reshape task asked for its own without sharing, none did with it
    assert issued['off'] - issued['shared'] >= 4, issued
    assert issued['shared'] == 2, issued


def test_a_region_added_during_the_run_gets_a_token_with_todays_catalog(stack, shared, unique_name):
    """A token shared before Placement was registered in a new region came with a catalog without
    it: a task in that region gets a token of its own instead (and shares it), rather than failing
    with openstacksdk's "service 'placement' is disabled" (seen: the kolla interface tests met a
    token of an earlier test in a fresh-clone run)."""
    before = task(stack.password_auth('placement'))['token']
    region = unique_name('Added')
    stack.keystone.add_region_endpoints('placement', region, {
        'public': stack.placement.url, 'internal': stack.placement.url, 'admin': stack.placement.url})
    there = dict(stack.password_auth('placement'), region_name=region)
    first = task(there)
    assert first['token'] != before and first['providers'] >= 0
    # the new token (today's catalog) is the one shared from then on, in either region
    assert task(there)['token'] == first['token']
    assert task(stack.password_auth('placement'))['token'] == first['token']
