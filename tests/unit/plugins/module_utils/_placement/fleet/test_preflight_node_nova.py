# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""fleet/preflight.py's check of ONE node's nova-compute credentials (issue 45), judged before that
node's reshape by device_info's action: a refusal fails, nothing to probe warns, and options that
passed earlier in the run (another node's task, another forked worker) are not probed again.

nova's side is stood in here (placement_auth.connect); the probe against a real Keystone and
Placement: tests/integration/test_preflight_nova_credentials.py and test_preflight_nodes_playbook.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement import errors
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends import tokens
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import preflight

INFO = {'user': 'nova', 'project': 'service', 'roles': ['member', 'service'], 'auth_url': 'http://k/v3',
        'endpoint': 'http://placement'}


def conf(password='s3cret', path='/etc/nova/nova.conf', user='nova'):
    options = {'auth_type': 'password', 'auth_url': 'http://k/v3', 'username': user, 'project_name': 'service'}
    return {'files': [path], 'options': options, 'auth_section': None, 'auth': dict(options),
            'secrets': {'password': password}}


class Nova(object):
    """Stands in for nova's connection to Placement: counts probes, answers as told."""

    kind = 'rest'

    def __init__(self, refuse=False):
        self.refuse = refuse
        self.probes = []

    def connect(self, options, log=None):
        self.probes.append(options['secrets']['password'])
        return self, dict(INFO, roles=['member'] if self.refuse else INFO['roles'])

    def reshape(self, body):
        if self.refuse:
            raise errors.Forbidden('Policy does not allow placement:reshaper:reshape to be performed.')
        raise errors.BadRequest('JSON does not validate')

    def close(self):
        pass


class Cache(object):
    def __init__(self):
        self.kept = {}

    def get(self, key):
        return self.kept.get(key)

    def put(self, key, state):
        self.kept[key] = state
        return True


@pytest.fixture
def nova(monkeypatch):
    stand_in = Nova()
    monkeypatch.setattr(preflight.placement_auth, 'connect', stand_in.connect)
    return stand_in


def test_the_same_options_are_probed_once_whatever_their_path(nova):
    cache = Cache()
    first = preflight.check_node_nova('compute-01', conf(), cache=cache)
    assert first['passed'] is True and first['probed_for'] is None
    assert first['detail'].startswith('compute-01: nova-compute may reshape (user nova, project service, '
                                      'Placement at http://placement, from [placement] of /etc/nova/nova.conf)')
    again = preflight.check_node_nova('compute-02', conf(path='/etc/kolla/nova-compute/nova.conf'), cache=cache)
    assert again['passed'] is True and again['probed_for'] == 'compute-01'
    assert again['detail'].endswith('; the same [placement] options as compute-01, probed earlier in this run')
    assert again['detail'].startswith('compute-02: nova-compute may reshape')
    assert (again['user'], again['roles'], again['endpoint']) == ('nova', ['member', 'service'], 'http://placement')
    assert nova.probes == ['s3cret']
    # other options (another password) are probed; nothing secret is kept in the clear
    preflight.check_node_nova('compute-03', conf(password='other'), cache=cache)
    assert nova.probes == ['s3cret', 'other']
    assert 's3cret' not in json.dumps(cache.kept) and 'other' not in json.dumps(cache.kept)


def test_a_refusal_fails_and_is_probed_again(nova):
    nova.refuse = True
    cache = Cache()
    found = preflight.check_node_nova('compute-01', conf(), cache=cache)
    assert found['passed'] is False
    assert found['detail'].startswith("compute-01: nova-compute may not reshape with its own credentials (user nova, "
                                      "project service, Placement at http://placement, from [placement] of "
                                      "/etc/nova/nova.conf; the token's roles: member, no `service` role): ")
    assert cache.kept == {}
    assert preflight.check_node_nova('compute-02', conf(), cache=cache)['passed'] is False
    assert nova.probes == ['s3cret', 's3cret']


def test_nothing_to_probe_is_not_a_failure(nova):
    missing = preflight.check_node_nova('compute-01', {'missing': 'no nova.conf at /etc/nova/nova.conf'}, cache=Cache())
    assert missing['passed'] is None
    assert missing['detail'] == ("nova-compute's own Placement credentials: compute-01: not checked: "
                                 "no nova.conf at /etc/nova/nova.conf")
    no_auth = conf()
    no_auth['options'].pop('auth_type')
    no_auth['auth'].pop('auth_type')
    found = preflight.check_node_nova('compute-02', no_auth, cache=Cache())
    assert found['passed'] is None
    assert found['detail'].startswith("nova-compute's own Placement credentials: compute-02: not checked: "
                                      "[placement] of /etc/nova/nova.conf sets no auth_type")
    assert nova.probes == []


def test_a_pass_is_shared_with_the_other_forked_workers_of_the_run(nova):
    """The run's memory file (made before ansible-playbook forks its workers): a worker's pass is
    found by the next worker, which probes nothing."""
    store = tokens.SharedTokens.create()
    if store is None:
        raise AssertionError('this test needs os.memfd_create and cryptography (the controller has both)')
    pid = os.fork()
    if pid == 0:  # the first node's worker
        try:
            found = preflight.check_node_nova('compute-01', conf(), cache=store)
            os._exit(0 if found['passed'] is True else 3)
        except BaseException:  # pylint: disable=broad-except
            os._exit(4)
    _pid, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    found = preflight.check_node_nova('compute-02', conf(), cache=store)
    assert found['passed'] is True and found['probed_for'] == 'compute-01'
    assert nova.probes == []  # the child's probe was the only one
    os.close(store.fd)
