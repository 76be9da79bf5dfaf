# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugin_utils/in_process.py: a module run inside its action gives what the module gives."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json
import sys

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils import common
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import discovery
from ansible_collections.placement.upgrade.plugins.modules import compute_service as compute_service_module
from ansible_collections.placement.upgrade.plugins.modules import placement_preflight as preflight_module
from ansible_collections.placement.upgrade.plugins.modules import reshape as reshape_module
from ansible_collections.placement.upgrade.plugins.modules import resource_provider_info as rp_info_module
from ansible_collections.placement.upgrade.plugins.plugin_utils import in_process

import nova_standin
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
        self.SPEC = common.ModuleSpec({'name': {'type': 'str'}}, execute=self.execute, auth=False,
                                      supports_check_mode=False)

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


# -- compute_service and resource_provider_info (their arguments once captured from main(), now data) --

COMPUTE_SERVICE = 'placement.upgrade.compute_service'
RP_INFO = 'placement.upgrade.resource_provider_info'


@pytest.fixture
def nova():
    server = nova_standin.NovaCycle()
    server.add('cmp-01', running_for=1.0)
    try:
        yield server
    finally:
        server.close()


def _unstamped(value):
    """``value`` without nova's ``updated_at`` (at any depth)."""
    if isinstance(value, dict):
        return dict((k, _unstamped(v)) for k, v in value.items() if k != 'updated_at')
    if isinstance(value, list):
        return [_unstamped(v) for v in value]
    return value


def _reset(nova):
    nova.services['cmp-01'].record.update(status='enabled', disabled_reason=None, forced_down=False)


@pytest.mark.real
@pytest.mark.parametrize('check', [True, False])
@pytest.mark.parametrize('asked, changes', [
    ({}, False),
    ({'state': 'disabled', 'disabled_reason': 'placement.upgrade r1: reshaping'}, True),
    ({'forced_down': True, 'wait_for': 'down', 'wait_interval': 0.1, 'wait_timeout': 5}, True),
    ({'state': 'enabled', 'forced_down': False, 'wait_for': 'up', 'reported_since': 'two minutes ago',
      'wait_interval': 0.1, 'wait_timeout': 5}, True),
])
def test_compute_service_same_result_as_the_module(placement_server, nova, capsys, asked, changes, check):
    # the rolling role's nova steps, delegated to the controller (plugins/action/compute_service.py)
    if asked.get('reported_since') == 'two minutes ago':  # (more than 5 minutes off the UTC clock is refused)
        since = datetime.datetime.utcnow() - datetime.timedelta(minutes=2)
        asked = dict(asked, reported_since=since.strftime('%Y-%m-%d %H:%M:%S'))
    args = dict(placement_server.module_auth(), compute_endpoint=nova.url, host='cmp-01', **asked)
    record = nova.services['cmp-01'].record
    if asked.get('state') == 'enabled':
        record.update(status='disabled', disabled_reason='r1')
    rc, expected = run_module_main(compute_service_module.main, dict(args), capsys, check=check, diff=True)
    sent_by_module = [body for _host, body, _when in nova.puts]
    after_module = dict(record)
    _reset(nova)
    if asked.get('state') == 'enabled':
        record.update(status='disabled', disabled_reason='r1')
    got = in_process.run(COMPUTE_SERVICE, compute_service_module, dict(args),
                         check_mode=check, diff=True)
    assert rc == 0 and 'failed' not in got, got
    sent_in_process = [body for _host, body, _when in nova.puts][len(sent_by_module):]
    assert sent_in_process == sent_by_module and bool(sent_by_module) is (changes and not check)
    assert dict(record) == after_module
    assert got['changed'] is changes
    assert got['diff']['before']['host'] == 'cmp-01'
    # (a PUT writes the record: its updated_at is the write's own time, different in the two runs)
    for key in ('changed', 'service', 'diff', 'log', 'invocation'):
        assert _unstamped(got[key]) == _unstamped(expected[key]), key
    if asked.get('wait_for') and not check:
        assert got['service']['state'] == asked['wait_for']


@pytest.mark.parametrize('args', [
    {'host': ''},
    {'host': 'cmp-01', 'state': 'enabled', 'disabled_reason': 'why'},
    {'host': 'cmp-01', 'wait_for': 'down', 'wait_interval': 0},
    {'host': 'cmp-01', 'wait_for': 'up', 'reported_since': 'yesterday'},
    {'host': 'cmp-01', 'wait_timeout': float('inf')},
    {'host': 'cmp-01', 'state': 'sideways'},
    {'host': 'cmp-01', 'bogus': 1},
    {'state': 'disabled'},
    {'host': 'cmp-01', 'embedded_db': '/nonexistent/placement.db', 'cloud': 'x'},
])
def test_compute_service_validation_fails_like_the_module(nova, capsys, args):
    args = dict(args, compute_endpoint=nova.url)
    rc, expected = run_module_main(compute_service_module.main, dict(args), capsys)
    got = in_process.run(COMPUTE_SERVICE, compute_service_module, dict(args))
    assert rc == 1 and got['failed'] is True and got['msg']
    # the same message as the module (which names itself by the file it runs from)
    assert got['msg'].split(' module: ')[-1] == expected['msg'].split(' module: ')[-1]
    assert nova.gets == 0 and nova.puts == []      # refused before nova was asked


@pytest.mark.parametrize('extra', [
    {},
    {'in_tree': 'compute-02', 'with_allocations': True},
    {'name': 'compute-01'},
    {'uuid': '8d6bb6c4-4d9f-4ba9-9d60-3d1c17a3ad7f'},
    {'name': 'compute-01', 'in_tree': 'compute-01'},
    {'with_allocations': 'sometimes'},
    {'bogus': 1},
    {'embedded_db': '/nonexistent/placement.db'},
])
def test_resource_provider_info_same_result_as_the_module(fleet, capsys, extra):
    args = dict({'embedded_db': fleet['embedded_db']}, **extra)
    rc, expected = run_module_main(rp_info_module.main, dict(args), capsys, check=True)
    got = in_process.run(RP_INFO, rp_info_module, dict(args), check_mode=True)
    assert rc == (1 if expected.get('failed') else 0)
    assert bool(got.get('failed')) is bool(expected.get('failed'))
    if got.get('failed'):
        assert got['msg'] and got['msg'].split(' module: ')[-1] == expected['msg'].split(' module: ')[-1]
    else:
        assert got['providers'] == expected['providers']
        assert got['providers'] or 'uuid' in extra
    assert dict(_stable(got), msg=None) == dict(_stable(expected), msg=None)


def test_resource_provider_info_reads_the_tree(fleet):
    got = in_process.run(RP_INFO, rp_info_module,
                         {'embedded_db': fleet['embedded_db'], 'in_tree': 'compute-01'})
    assert 'failed' not in got, got
    assert got['changed'] is False and got['providers'][0]['name'] == 'compute-01'
    assert all(p['root_provider_uuid'] == got['providers'][0]['uuid'] for p in got['providers'])


@pytest.mark.parametrize('name, module_file, extra', [
    (COMPUTE_SERVICE, compute_service_module, {'host': 'cmp-01', 'state': 'disabled'}),
    (RP_INFO, rp_info_module, {'in_tree': 'compute-01'}),
])
def test_main_only_modules_mask_secrets(name, module_file, extra):
    secret = 'Sekrit-Passw0rd-42'
    args = dict(extra, api_timeout=2, compute_endpoint='http://127.0.0.1:9/v2.1',
                auth={'auth_url': 'http://127.0.0.1:9/identity', 'username': 'admin', 'password': secret,
                      'project_name': 'admin', 'user_domain_name': 'Default', 'project_domain_name': 'Default'})
    if name == RP_INFO:
        del args['compute_endpoint']
    got = in_process.run(name, module_file, args)
    assert got['failed'] is True and got['msg']
    assert secret not in json.dumps(got)
    assert got['invocation']['module_args']['auth']['username'] == 'admin'
    assert got['invocation']['module_args']['auth']['password'] == 'VALUE_SPECIFIED_IN_NO_LOG_PARAMETER'


@pytest.mark.real
def test_a_secret_in_a_successful_result_is_masked_as_by_the_module(placement_server, nova, capsys):
    # the token is a secret (no_log): nova's record saying it back is masked, in process as by the module
    token = placement_server.module_auth()['auth']['token']
    args = dict(placement_server.module_auth(), compute_endpoint=nova.url, host='cmp-01', state='disabled',
                disabled_reason='rolled by %s today' % token)
    rc, expected = run_module_main(compute_service_module.main, dict(args), capsys)
    _reset(nova)
    got = in_process.run(COMPUTE_SERVICE, compute_service_module, dict(args))
    assert rc == 0 and got['changed'] is True, got
    assert nova.services['cmp-01'].record['disabled_reason'] == 'rolled by %s today' % token
    assert got['service']['disabled_reason'] == expected['service']['disabled_reason'] == 'rolled by ******** today'


def test_the_arguments_are_data_built_for_the_task_arguments():
    spec = compute_service_module.SPEC
    built = spec.argument_spec({'auth': {'token': 'x', 'endpoint': 'http://e'}})
    assert built['host'] == {'type': 'str', 'required': True}
    assert built['auth']['options']['token']['no_log'] is True           # built for these arguments
    assert 'options' not in spec.argument_spec({})['auth']
    assert spec.module_kwargs()['supports_check_mode'] is True
    assert ('embedded_db', 'cloud') in spec.module_kwargs()['mutually_exclusive']
    assert ('name', 'uuid', 'in_tree') in rp_info_module.SPEC.module_kwargs()['mutually_exclusive']
    got = in_process.run(COMPUTE_SERVICE, compute_service_module, {'host': ''})
    assert got['msg'] == "host must name nova's service host of the compute service, got an empty string"
    # the module's own check, before any backend: the same message as main() gives
    assert not hasattr(in_process, 'MainFile')


def test_no_log_values_are_masked_in_a_result_as_remove_values_masked_them():
    # what ansible-core's remove_values() gave for the same input (up to 2.21; 2.22 deprecates it)
    result = {'password': 'Sekrit', 'msg': 'login as admin with Sekrit failed', 'port': 4242,
              'number': 42, 'nested': [{'token': 'Sekrit'}, ('Sekrit-and-more', b'b Sekrit')],
              'changed': False, 'none': None, 'Sekrit': 'key kept'}
    got = in_process.mask_no_log_values(result, {'Sekrit', '42', ''})
    assert got == {'password': 'VALUE_SPECIFIED_IN_NO_LOG_PARAMETER', 'msg': 'login as admin with ******** failed',
                   'port': 'VALUE_SPECIFIED_IN_NO_LOG_PARAMETER', 'number': 'VALUE_SPECIFIED_IN_NO_LOG_PARAMETER',
                   'nested': [{'token': 'VALUE_SPECIFIED_IN_NO_LOG_PARAMETER'}, ['********-and-more', b'b ********']],
                   'changed': False, 'none': None, 'Sekrit': 'key kept'}
    assert result['password'] == 'Sekrit'                                # a copy: the result given is unchanged
    assert in_process.mask_no_log_values({'a': 'b'}, set()) == {'a': 'b'}
    # the longer secret first: its own mask, not a mask of its prefix
    assert in_process.mask_no_log_values('pw pw-long', {'pw', 'pw-long'}) == '******** ********'
    # a value of a type no module result holds is refused, as remove_values() refused it
    with pytest.raises(TypeError):
        in_process.mask_no_log_values({'x': object()}, {'Sekrit'})
