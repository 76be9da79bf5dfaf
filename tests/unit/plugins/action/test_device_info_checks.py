# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""device_info's action judges nova-compute's own credentials the module read on the node (issue 45):
it probes them from the controller, fails the task when nova-compute could not reshape, warns when
nothing could be probed, and never lets nova's options or secret into the task's result.

The module's answer and nova's side are stood in here; through ansible-playbook against a real
Keystone: tests/integration/test_preflight_nodes_playbook.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.placement.upgrade.plugins.action import device_info
from ansible_collections.placement.upgrade.plugins.module_utils._placement import errors
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import preflight
from ansible_collections.placement.upgrade.plugins.plugin_utils import in_process

SECRET = 'n0va-s3cret'
READ = {'files': ['/etc/nova/nova.conf'], 'auth_section': None, 'secrets': {'password': SECRET},
        'options': {'auth_type': 'password', 'auth_url': 'http://k/v3', 'username': 'nova'},
        'auth': {'auth_type': 'password', 'auth_url': 'http://k/v3', 'username': 'nova'}}


class Nova(object):
    kind = 'rest'

    def __init__(self):
        self.refuse = False
        self.probes = 0

    def connect(self, conf, log=None):
        self.probes += 1
        return self, {'user': 'nova', 'project': 'service', 'roles': ['member'] if self.refuse else ['service'],
                      'auth_url': 'http://k/v3', 'endpoint': 'http://placement'}

    def reshape(self, body):
        if self.refuse:
            raise errors.Forbidden('Policy does not allow placement:reshaper:reshape to be performed.')
        raise errors.BadRequest('JSON does not validate')

    def close(self):
        pass


@pytest.fixture
def nova(monkeypatch):
    stand_in = Nova()
    monkeypatch.setattr(preflight.placement_auth, 'connect', stand_in.connect)
    return stand_in


def run(monkeypatch, answer):
    """The action's result for the module's ``answer`` (what the node returned)."""
    monkeypatch.setattr(in_process.RunModuleAction, 'run', lambda self, tmp=None, task_vars=None: json.loads(
        json.dumps(answer)))
    action = object.__new__(device_info.ActionModule)
    return action.run(task_vars={'inventory_hostname': 'compute-01'})


def test_a_pass_keeps_the_outcome_and_drops_nova_options(monkeypatch, nova):
    result = run(monkeypatch, {'changed': False, 'devices': {'hostname': 'compute-01'}, 'nova_placement': READ})
    assert 'failed' not in result and 'nova_placement' not in result
    assert result['nova_credentials']['passed'] is True
    assert result['nova_credentials']['detail'].startswith('compute-01: nova-compute may reshape (user nova')
    assert SECRET not in json.dumps(result)
    assert nova.probes == 1 and isinstance(result['started'], float)


def test_a_refusal_fails_the_node_before_its_reshape(monkeypatch, nova):
    nova.refuse = True
    result = run(monkeypatch, {'changed': False, 'devices': {'hostname': 'compute-01'}, 'nova_placement': READ})
    assert result['failed'] is True
    assert result['msg'].startswith("nova_credentials: compute-01: nova-compute may not reshape with its own "
                                    "credentials (user nova, project service, Placement at http://placement, from "
                                    "[placement] of /etc/nova/nova.conf; the token's roles: member, no `service` role): ")
    assert result['msg'].endswith('(nothing was changed on compute-01)')
    assert SECRET not in json.dumps(result)


def test_nothing_to_probe_is_a_warning(monkeypatch, nova):
    result = run(monkeypatch, {'changed': False, 'devices': {}, 'nova_placement': {'missing': 'no nova.conf at /x'}})
    assert 'failed' not in result
    assert result['warnings'] == ["nova-compute's own Placement credentials: compute-01: not checked: no nova.conf at /x"]
    assert nova.probes == 0


def test_a_failed_discovery_is_not_probed_and_carries_no_secret(monkeypatch, nova):
    result = run(monkeypatch, {'failed': True, 'msg': 'cannot read /sys/x', 'nova_placement': READ})
    assert result['msg'] == 'cannot read /sys/x' and 'nova_placement' not in result
    assert nova.probes == 0 and SECRET not in json.dumps(result)


def test_a_probe_that_breaks_is_a_message_not_a_traceback(monkeypatch, nova):
    def broken(conf, log=None):
        raise KeyError('auth_url')
    monkeypatch.setattr(preflight.placement_auth, 'connect', broken)
    result = run(monkeypatch, {'changed': False, 'devices': {}, 'nova_placement': READ})
    assert result['failed'] is True and result['msg'].startswith('nova_credentials: compute-01: ')
    assert 'auth_url' in result['msg'] and SECRET not in json.dumps(result)
