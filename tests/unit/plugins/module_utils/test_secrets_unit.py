# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secrets in ``auth`` and ``cloud`` never show; nothing else is masked (issue 12, item 1).

The modules run through ansible-core's real ``AnsibleModule`` (argument validation,
``no_log_values``, the invocation it writes to syslog, ``exit_json``/``fail_json``); only
the syslog sink is captured.  The connection failures are real (a 127.0.0.1 port where
nothing listens).  The same checks against a real Keystone and Placement, through
``ansible-playbook -vvv``, are tests/reliability/test_secrets.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import syslog as _syslog
import json
import socket

import pytest

from ansible.module_utils import basic

try:  # ansible-core 2.22+: AnsibleModule.log() goes through this module, which reads its own has_journal
    from ansible.module_utils._internal import _logging as ansible_logging
except ImportError:
    ansible_logging = None

from ansible_collections.placement.upgrade.plugins.module_utils import common
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends import factory
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.rest import IDENTITY_CODE
from ansible_collections.placement.upgrade.plugins.modules import resource_provider_info

from module_runner import controller_view, module_process, patch_module_args, run_module_main

PASSWORD = 'pw-7f3c1d0e9b'
TOKEN = 'tok-2a8e44c1f0'
APP_SECRET = 'appsecret-93bd0c'
DEEP = 'deep-secret-51aa'
MASK = '********'
#: the placeholder of a no_log value in AnsibleModule's invocation log from ansible-core 2.22 (by its
#: position in the argument spec, and mask_secrets()); up to 2.21, remove_values()' MASK
REDACTED = '$REDACTED$'


@pytest.mark.parametrize('name', [
    'password', 'token', 'application_credential_secret', 'passcode', 'client_secret', 'access_token',
    'refresh_token', 'consumer_secret', 'access_secret', 'code', 'totp', 'OS_PASSWORD', 'os-token',
    'private_key', 'api_key', 'Password'])
def test_secret_names(name):
    assert factory.is_secret_name(name)


@pytest.mark.parametrize('name', [
    'auth_url', 'endpoint', 'username', 'user_id', 'project_name', 'project_domain_name',
    'user_domain_name', 'application_credential_id', 'application_credential_name',
    'access_token_endpoint', 'access_token_type', 'region_name', 'auth_type', 'key', 'cert', 'cacert',
    'interface', 'identity_provider', 'protocol', 'OS_AUTH_URL', 'OS_USERNAME', 'passive', 'idp_otp_key',
    'placement_endpoint_override'])
def test_not_secret_names(name):
    assert not factory.is_secret_name(name)


def test_secret_values_at_any_depth():
    cloud = {'auth': {'username': 'placement', 'password': PASSWORD, 'auth_url': 'http://k/v3'},
             'regions': [{'name': 'r1', 'values': {'token': TOKEN}}],
             'password': ['a-list-secret'], 'verify': False, 'api_timeout': 30}
    assert factory.secret_values(cloud) == {PASSWORD, TOKEN, 'a-list-secret'}
    assert factory.secret_values('a cloud name') == set()
    assert factory.secret_values(None) == set()


def test_environment_secrets():
    env = {'OS_PASSWORD': PASSWORD, 'OS_USERNAME': 'placement', 'OS_AUTH_URL': 'http://k/v3',
           'OS_APPLICATION_CREDENTIAL_SECRET': APP_SECRET, 'OS_APPLICATION_CREDENTIAL_ID': 'id1',
           'HOME_PASSWORD': 'not-ours', 'OS_TOKEN': ''}
    assert factory.environment_secrets(env) == {PASSWORD, APP_SECRET}


def test_documented_spec_when_no_task_arguments_are_loaded():
    # what ansible-test's validate-modules sees (it fakes _load_params), and the doc fragment says
    spec = common.auth_argument_spec()
    assert spec['auth'] == {'type': 'dict', 'no_log': False}
    assert spec['cloud'] == {'type': 'raw', 'no_log': False}


def test_spec_declares_the_given_keys_no_log_on_secrets_only():
    args = {'auth': {'auth_url': 'http://k/v3', 'username': 'placement', 'password': PASSWORD},
            'cloud': None}
    spec = common.auth_argument_spec(args)
    assert spec['auth']['options'] == {'auth_url': {'type': 'raw', 'no_log': False},
                                       'username': {'type': 'raw', 'no_log': False},
                                       'password': {'type': 'raw', 'no_log': True}}
    assert spec['auth']['apply_defaults'] is False
    assert spec['cloud'] == {'type': 'raw', 'no_log': False}
    cloud = {'auth_type': 'v3applicationcredential',
             'auth': {'application_credential_id': 'c1', 'application_credential_secret': APP_SECRET},
             'regions': [{'name': 'r', 'values': {'token': DEEP}}]}
    spec = common.auth_argument_spec({'cloud': cloud})
    assert spec['cloud']['type'] == 'dict'
    inner = spec['cloud']['options']['auth']['options']
    assert inner['application_credential_secret']['no_log'] is True
    assert inner['application_credential_id']['no_log'] is False
    regions = spec['cloud']['options']['regions']
    assert regions['type'] == 'list' and regions['elements'] == 'dict'
    assert regions['options']['values']['options']['token']['no_log'] is True
    # auth given as JSON text (a template that rendered to a string) is read as Ansible reads it
    spec = common.auth_argument_spec({'auth': json.dumps({'token': TOKEN, 'endpoint': 'http://p'})})
    assert spec['auth']['options']['token']['no_log'] is True


@pytest.fixture
def syslog_lines(monkeypatch):
    """What AnsibleModule writes to syslog (its invocation log): journald off, syslog captured."""
    lines = []
    # up to 2.21 AnsibleModule.log() reads basic.has_journal; from 2.22 log_to_system() reads its own
    monkeypatch.setattr(basic, 'has_journal', False, raising=False)
    if ansible_logging is not None:
        monkeypatch.setattr(ansible_logging, 'has_journal', False, raising=False)
    # the standard library's syslog module, which AnsibleModule logs through (ansible-core 2.22 no longer
    # exposes it as basic.syslog)
    monkeypatch.setattr(_syslog, 'syslog', lambda *args: lines.append(args[-1]))
    monkeypatch.setattr(_syslog, 'openlog', lambda *args, **kwargs: None)
    return lines


def _build(args):
    with module_process(), patch_module_args(args):
        return basic.AnsibleModule(argument_spec=common.placement_argument_spec(name=dict(type='str')),
                                   **common.placement_module_kwargs())


def test_invocation_logged_to_syslog_hides_secrets_at_any_depth_and_nothing_else(syslog_lines):
    cloud = {'auth_type': 'password', 'region_name': 'RegionOne',
             'auth': {'auth_url': 'http://keystone.test:5000/v3', 'username': 'placement',
                      'password': PASSWORD, 'project_name': 'service',
                      'extra': {'nested': {'client_secret': DEEP}}},
             'regions': [{'name': 'RegionOne', 'values': {'token': TOKEN}}]}
    module = _build({'cloud': cloud, 'name': 'cn1'})
    assert len(syslog_lines) == 1
    logged = syslog_lines[0]
    for secret in (PASSWORD, DEEP, TOKEN):
        assert secret not in logged
    for text in ('http://keystone.test:5000/v3', "'username': 'placement'", "'project_name': 'service'", 'name=cn1'):
        assert text in logged
    # the three secrets and nothing else masked, with the one placeholder the release writes
    assert sorted((logged.count(MASK), logged.count(REDACTED))) == [0, 3], logged
    assert {PASSWORD, DEEP, TOKEN} <= module.no_log_values
    assert 'placement' not in module.no_log_values and 'http://keystone.test:5000/v3' not in module.no_log_values
    # the values the backend gets are untouched
    assert module.params['cloud'] == cloud


def test_auth_dict_invocation_logged_and_validation_failure_hide_the_password(syslog_lines, capsys):
    auth = {'auth_url': 'http://keystone.test:5000/v3', 'username': 'placement', 'password': PASSWORD}
    _build({'auth': auth})
    assert PASSWORD not in syslog_lines[0] and 'placement' in syslog_lines[0]
    # a task refused by validation (fail_json inside AnsibleModule) returns the invocation too
    with pytest.raises(SystemExit):
        _build({'auth': auth, 'embedded_db': '/tmp/x.db'})
    out = capsys.readouterr().out
    raw = json.loads(out)
    if '_ansible_new_secrets' in raw:
        # ansible-core 2.22+: the module returns the secrets it registered and the controller masks
        # the result with them before anything shows it (a secret missing from them would show)
        assert PASSWORD in raw['_ansible_new_secrets']
    else:
        assert PASSWORD not in out          # up to 2.21 the module masks its result itself
    result = controller_view(out)
    assert PASSWORD not in json.dumps(result)
    assert result['invocation']['module_args']['auth']['username'] == 'placement'
    assert result['invocation']['module_args']['auth']['auth_url'] == 'http://keystone.test:5000/v3'
    assert 'mutually exclusive' in result['msg']


def test_protect_secrets_adds_environment_and_params(monkeypatch):
    monkeypatch.setenv('OS_PASSWORD', 'env-' + PASSWORD)
    monkeypatch.setenv('OS_USERNAME', 'placement')
    module = _build({'auth': {'token': TOKEN, 'endpoint': 'http://p:8778'}})
    common.protect_secrets(module)
    assert {TOKEN, 'env-' + PASSWORD} <= module.no_log_values
    assert 'placement' not in module.no_log_values and 'http://p:8778' not in module.no_log_values


@pytest.fixture
def dead_keystone():
    """``http://127.0.0.1:P/v3`` where nothing listens (bound, never listening)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(('127.0.0.1', 0))
    try:
        yield 'http://127.0.0.1:%d/v3' % sock.getsockname()[1]
    finally:
        sock.close()


def test_failed_module_names_keystone_masks_only_the_password(dead_keystone, capsys, monkeypatch, syslog_lines):
    monkeypatch.setattr('ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.rest.RestBackend.backoff', 0)
    cloud = {'auth_type': 'password',
             'auth': {'auth_url': dead_keystone, 'username': 'placement', 'password': PASSWORD,
                      'project_name': 'service', 'user_domain_name': 'Default', 'project_domain_name': 'Default'}}
    rc, result = run_module_main(resource_provider_info.main, {'cloud': cloud, 'name': 'cn1'}, capsys)
    text = json.dumps(result) + ''.join(syslog_lines)
    assert rc == 1 and result['failed'] is True
    assert PASSWORD not in text
    msg = result['msg']
    assert 'The identity service (Keystone) at %s could not be reached' % dead_keystone in msg, msg
    assert 'Placement could not be reached' not in msg and MASK not in msg
    assert result['error']['code'] == IDENTITY_CODE                     # not ********.identity
    assert result['invocation']['module_args']['cloud']['auth']['password'] == 'VALUE_SPECIFIED_IN_NO_LOG_PARAMETER'
    assert result['invocation']['module_args']['cloud']['auth']['username'] == 'placement'
    assert len(result['log']) == 3 and all('retry' in line and dead_keystone in line for line in result['log'])
