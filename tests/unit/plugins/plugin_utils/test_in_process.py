# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugin_utils/in_process.py: a module run inside its action gives what the module gives."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import sys

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import discovery
from ansible_collections.placement.upgrade.plugins.modules import placement_preflight as preflight_module
from ansible_collections.placement.upgrade.plugins.modules import reshape as reshape_module
from ansible_collections.placement.upgrade.plugins.plugin_utils import in_process

import simfleet
from module_runner import run_module_main

VOLATILE = ('invocation', 'log')


@pytest.fixture(scope='module')
def fleet(tmp_path_factory):
    return simfleet.build(str(tmp_path_factory.mktemp('inproc') / 'fleet'), nodes=3)


def _devices(node):
    return discovery.discover(node['sysfs_root'], domain_xml_glob=node['domain_xml_glob'],
                              hostname=node['provider'], nova_conf=node['nova_conf'],
                              domain_capabilities=node.get('domain_capabilities'))


def _stable(result):
    return dict((k, v) for k, v in result.items() if k not in VOLATILE)


@pytest.mark.parametrize('check', [True, False])
def test_same_result_as_the_module(fleet, capsys, tmp_path, check):
    node = fleet['nodes'][0]
    args = {'embedded_db': fleet['embedded_db'], 'root_provider': node['provider'], 'devices': _devices(node),
            'snapshot_dir': str(tmp_path / 'snap'), 'state': 'verified' if not check else 'reshaped'}
    rc, expected = run_module_main(reshape_module.main, dict(args), capsys, check=check, diff=True)
    got = in_process.run('placement.upgrade.reshape', reshape_module, dict(args), check_mode=check, diff=True)
    assert rc == (1 if expected.get('failed') else 0)
    assert _stable(got) == _stable(expected)
    assert got['invocation']['module_args']['root_provider'] == node['provider']


@pytest.mark.parametrize('extra, fails', [
    ({}, False),
    ({'providers': ['compute-02', 'compute-03']}, False),
    ({'commands': [{'command': 'sh -c true'}, {'command': 'no-such-tool-4711 check', 'requires': '/etc/hosts'}]}, False),
    ({'directories': ['/etc/hosts']}, True),
    ({'providers': ['compute-01', 'no-such-node']}, True),
    ({'min_microversion': '9.99'}, True),
    ({'min_microversion': 'one'}, True),
    ({'embedded_db': '/nonexistent/placement.db'}, True),
])
def test_preflight_same_result_as_the_module(fleet, capsys, extra, fails):
    # the pre-flight role's check runs in process on the controller (plugins/action/placement_preflight.py)
    args = dict({'embedded_db': fleet['embedded_db'], 'providers': [fleet['nodes'][0]['provider']]}, **extra)
    rc, expected = run_module_main(preflight_module.main, dict(args), capsys, check=True)
    got = in_process.run('placement.upgrade.placement_preflight', preflight_module, dict(args), check_mode=True)
    assert rc == (1 if fails else 0)
    assert bool(got.get('failed')) is fails
    assert got['msg'] and got['msg'] == expected['msg']
    assert _stable(got) == _stable(expected)


@pytest.mark.parametrize('extra, words', [
    ({'root_provider': 'x', 'devices': {}, 'bogus': 1}, 'Unsupported parameters for (placement.upgrade.reshape) module: bogus'),
    ({}, 'root_provider'),
    ({'cloud': 'x', 'root_provider': 'x', 'devices': {}}, 'mutually exclusive'),
    ({'root_provider': 'x'}, 'missing: devices'),
])
def test_validation_fails_like_the_module(fleet, capsys, extra, words):
    args = dict(extra, embedded_db=fleet['embedded_db'])
    rc, expected = run_module_main(reshape_module.main, dict(args), capsys)
    got = in_process.run('placement.upgrade.reshape', reshape_module, dict(args))
    assert rc == 1 and got['failed'] is True
    assert words in got['msg']
    # the same message as the module (which names itself by the file it runs from)
    assert got['msg'].split(' module: ')[-1] == expected['msg'].split(' module: ')[-1]


def test_secrets_are_masked_in_every_result(tmp_path):
    secret = 'Sekrit-Passw0rd-42'
    args = {'root_provider': 'compute-01', 'devices': {}, 'api_timeout': 2,
            'auth': {'auth_url': 'http://127.0.0.1:9/identity', 'username': 'admin', 'password': secret,
                     'project_name': 'admin', 'user_domain_name': 'Default', 'project_domain_name': 'Default'}}
    got = in_process.run('placement.upgrade.reshape', reshape_module, args)
    assert got['failed'] is True and got['msg']
    assert secret not in json.dumps(got)
    assert got['invocation']['module_args']['auth']['username'] == 'admin'


class _Raising(object):
    """A module file whose work raises, or exits through fail_json inside an ``except Exception``."""

    def __init__(self, how):
        self.how = how

    @staticmethod
    def argument_spec(args=None):
        del args
        return {'name': {'type': 'str'}}

    @staticmethod
    def module_kwargs():
        return {'supports_check_mode': False}

    def execute(self, module):
        if self.how == 'raise':
            raise KeyError('boom')
        try:
            module.fail_json(msg='said no')
        except Exception:  # pylint: disable=broad-except
            pytest.fail('fail_json must not be caught by a module\'s "except Exception"')


def test_unexpected_errors_and_exits():
    got = in_process.run('x.y.z', _Raising('raise'), {'name': 'a'})
    assert got == {'failed': True, 'msg': "Unexpected error in x.y.z (KeyError): 'boom'"}
    got = in_process.run('x.y.z', _Raising('fail'), {'name': 'a'})
    assert got['failed'] is True and got['msg'] == 'said no'
    got = in_process.run('x.y.z', _Raising('fail'), {'name': 'a'}, check_mode=True)
    assert got['skipped'] is True and 'does not support check mode' in got['msg']


def test_runs_here_only_where_the_module_would_run_as_this_process():
    here = sys.executable
    assert in_process.runs_here('local', False, [{}], here) is True
    assert in_process.runs_here('local', False, None, here) is True
    assert in_process.runs_here('ssh', False, [], here) is False
    assert in_process.runs_here('local', True, [], here) is False
    assert in_process.runs_here('local', False, [{'OS_CLOUD': 'prod'}], here) is False
    assert in_process.runs_here('local', False, [], '/usr/bin/some-other-python') is False
    # interpreter discovery would choose it: not known to be this one
    assert in_process.runs_here('local', False, [], None) is False
