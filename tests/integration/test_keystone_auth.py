# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The modules against a REAL Keystone and a real Placement that validates tokens with it.

tests/keystone_server.py starts both on 127.0.0.1 once per session (per xdist worker):
Keystone 30 (SQLite, fernet tokens), Placement 16 with ``auth_strategy = keystone`` and
its STOCK policy (``POST /reshaper`` needs the ``service`` role), Placement registered in
Keystone's catalog.  User ``placement`` has the roles admin and service, ``operator``
admin only.  Every module runs through ansible-core's AnsibleModule (tests/module_runner.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re
import time
from urllib.error import HTTPError
from urllib.request import Request, urlopen

import pytest
import yaml

from ansible_collections.placement.upgrade.plugins.module_utils._placement import errors
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.base import provider_tree_state
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.rest import IDENTITY_CODE, RestBackend
from ansible_collections.placement.upgrade.plugins.modules import reshape
from ansible_collections.placement.upgrade.plugins.modules import resource_provider_info

from keystone_server import KeystoneStack, closed_port_url, shared_stack
from module_runner import run_module_main
from test_reshaper_support import comparable, flat_gpu_node, gpu_report

pytestmark = [pytest.mark.real, pytest.mark.slow]

MASK = '********'
#: the service-role hint, however it is quoted
ROLE_HINT = re.compile(r'need the [`"]service[`"] role')


@pytest.fixture(scope='session')
def stack():
    return shared_stack()


@pytest.fixture
def fast_retries(monkeypatch):
    monkeypatch.setattr(RestBackend, 'backoff', 0.01)


@pytest.fixture
def admin_backend(stack):
    backend = RestBackend.from_options(stack.password_auth('placement'))
    try:
        yield backend
    finally:
        backend.close()


@pytest.fixture
def node(admin_backend, unique_name, tmp_path):
    name = unique_name('cn')
    report = gpu_report(tmp_path / 'host', name)
    built = flat_gpu_node(admin_backend, name, report)
    built.update(name=name, report=report, snapdir=str(tmp_path / 'snapshots'))
    return built


def _no_secret(result, *secrets):
    text = json.dumps(result)
    for secret in secrets:
        assert secret not in text


def test_password_auth_reshapes_end_to_end(stack, node, admin_backend, capsys):
    args = dict(stack.password_auth('placement'), root_provider=node['name'], devices=node['report'],
                snapshot_dir=node['snapdir'])
    rc, result = run_module_main(reshape.main, args, capsys)
    assert rc == 0, result
    assert result['status'] == 'reshaped' and result['verified'] is True and result['changed'] is True
    assert result['moved']['units'] == {'VGPU': 5}
    children = admin_backend.list_providers(in_tree=node['root'])
    assert len(children) == 3
    # the secret is hidden, nothing else is
    _no_secret(result, stack.passwords['placement'])
    auth = result['invocation']['module_args']['auth']
    assert auth['password'] == 'VALUE_SPECIFIED_IN_NO_LOG_PARAMETER'
    assert auth['username'] == 'placement' and auth['auth_url'] == stack.auth_url
    assert MASK not in json.dumps(result)
    rc, again = run_module_main(reshape.main, args, capsys)
    assert rc == 0 and again['status'] == 'noop' and again['changed'] is False


def test_application_credential_and_token_auth_read(stack, capsys):
    cred_id, cred_secret = stack.keystone.application_credential('placement', stack.passwords['placement'])
    appcred = {'auth_type': 'v3applicationcredential', 'region_name': 'RegionOne',
               'auth': {'auth_url': stack.auth_url, 'application_credential_id': cred_id,
                        'application_credential_secret': cred_secret}}
    token = stack.token('placement')
    token_auth = {'auth_type': 'token', 'region_name': 'RegionOne',
                  'auth': {'auth_url': stack.auth_url, 'token': token, 'project_name': 'service',
                           'project_domain_name': 'Default'}}
    for args, secret in ((appcred, cred_secret), (token_auth, token)):
        rc, result = run_module_main(resource_provider_info.main, dict(args), capsys)
        assert rc == 0, result
        assert isinstance(result['providers'], list)
        _no_secret(result, secret)
        assert cred_id in json.dumps(result['invocation']) or 'token' in result['invocation']['module_args']['auth']


def test_backend_without_service_role_gets_the_hint_once(stack, node, admin_backend):
    """rest.py alone: a 403 on POST /reshaper from the stock policy says what to grant, once."""
    with RestBackend.from_options(stack.password_auth('operator')) as operator:
        operator.list_providers(name=node['name'])       # admin may read (stock policy)
        with pytest.raises(errors.Forbidden) as info:
            operator.reshape({'inventories': {}, 'allocations': {}})
    assert info.value.status == 403
    assert len(ROLE_HINT.findall(info.value.detail)) == 1, info.value.detail
    assert 'placement:reshaper:reshape' in info.value.detail


def test_module_without_service_role_fails_with_the_hint_once(stack, node, admin_backend, capsys):
    before = comparable(provider_tree_state(admin_backend, node['root']))
    args = dict(stack.password_auth('operator'), root_provider=node['name'], devices=node['report'],
                snapshot_dir=node['snapdir'])
    rc, result = run_module_main(reshape.main, args, capsys)
    assert rc == 1 and result['failed'] is True
    assert result['error']['status'] == 403
    assert len(ROLE_HINT.findall(result['msg'])) == 1, result['msg']
    _no_secret(result, stack.passwords['operator'])
    assert comparable(provider_tree_state(admin_backend, node['root'])) == before


def test_wrong_password_names_the_identity_service(stack, capsys):
    wrong = 'wrong-password-5c1e'
    rc, result = run_module_main(resource_provider_info.main,
                                 stack.password_auth('placement', password=wrong), capsys)
    assert rc == 1
    msg = result['msg']
    assert 'The identity service (Keystone) at %s rejected the credentials (401 Unauthorized)' % stack.auth_url in msg
    assert 'Placement was not contacted' in msg and 'password' in msg
    assert result['error']['status'] == 401 and result['error']['code'] == IDENTITY_CODE
    assert MASK not in msg
    _no_secret(result, wrong)
    assert result['invocation']['module_args']['auth']['username'] == 'placement'


def _placement_status(url, token):
    request = Request(url + '/resource_providers', headers={'X-Auth-Token': token, 'Accept': 'application/json'})
    try:
        with urlopen(request, timeout=10) as resp:
            return resp.status
    except HTTPError as exc:
        return exc.code


def test_expired_token_is_named_for_the_service_that_refused_it(stack, capsys):
    token, expires = stack.keystone.short_lived_token('placement', stack.passwords['placement'], seconds=4)
    assert _placement_status(stack.placement.url, token) == 200      # valid until it expires
    time.sleep(max(0.0, expires - time.time()) + 1.5)
    assert _placement_status(stack.placement.url, token) == 401
    direct = {'auth_type': 'admin_token', 'auth': {'token': token, 'endpoint': stack.placement.url}}
    # the token given to Placement as it is: Placement (its auth_token middleware) refuses it
    rc, result = run_module_main(resource_provider_info.main, dict(direct), capsys)
    assert rc == 1 and result['error']['status'] == 401
    assert 'Placement at %s rejected the credentials (401 Unauthorized)' % stack.placement.url in result['msg']
    assert 'expired or revoked' in result['msg']
    _no_secret(result, token)
    # the token exchanged with Keystone (token plugin): Keystone refuses it
    exchange = {'auth_type': 'token', 'auth': {'auth_url': stack.auth_url, 'token': token,
                                               'project_name': 'service', 'project_domain_name': 'Default'}}
    rc, result = run_module_main(resource_provider_info.main, exchange, capsys)
    assert rc == 1 and result['error']['code'] == IDENTITY_CODE
    assert 'The identity service (Keystone) at %s does not accept the token' % stack.auth_url in result['msg']
    assert 'expired or revoked' in result['msg']
    _no_secret(result, token)


def test_revoked_token_is_refused_by_keystone(stack, capsys):
    token = stack.token('placement')
    stack.keystone.revoke_token(token)
    args = {'auth_type': 'token', 'auth': {'auth_url': stack.auth_url, 'token': token,
                                           'project_name': 'service', 'project_domain_name': 'Default'}}
    rc, result = run_module_main(resource_provider_info.main, args, capsys)
    assert rc == 1 and result['error']['status'] == 401
    assert 'does not accept the token' in result['msg'] and stack.auth_url in result['msg']


def test_unreachable_keystone_is_named_not_placement(stack, capsys, fast_retries):
    sock, dead = closed_port_url()
    try:
        rc, result = run_module_main(resource_provider_info.main, stack.password_auth('placement', auth_url=dead),
                                     capsys)
    finally:
        sock.close()
    assert rc == 1 and result['error']['code'] == IDENTITY_CODE
    # no HTTP answer came: no "503 Service Unavailable" (issue 26), the connection was refused
    assert result['msg'].startswith('The identity service (Keystone) at %s could not be reached: the connection '
                                    'was refused' % dead), result['msg']
    assert 'Placement could not be reached' not in result['msg'] and stack.placement.url not in result['msg']
    assert len(result['log']) == 3 and all('authentication with %s' % dead in line for line in result['log'])
    _no_secret(result, stack.passwords['placement'])


@pytest.mark.mariadb
def test_password_auth_reshapes_on_mariadb_placement_behind_workers(unique_name, tmp_path, capsys):
    """Production's shape with Keystone: Placement validating tokens with Keystone, on a private
    MariaDB behind gunicorn with 4 worker processes, reshaped with password auth."""
    with KeystoneStack(db='mariadb', workers=4) as stack:
        assert (stack.placement.db_kind, stack.placement.workers, stack.placement.gunicorn) == ('mariadb', 4, True)
        backend = RestBackend.from_options(stack.password_auth('placement'))
        try:
            name = unique_name('cn')
            report = gpu_report(tmp_path / 'host', name)
            built = flat_gpu_node(backend, name, report)
            args = dict(stack.password_auth('placement'), root_provider=name, devices=report,
                        snapshot_dir=str(tmp_path / 'snapshots'))
            rc, result = run_module_main(reshape.main, args, capsys)
            assert rc == 0, result
            assert result['status'] == 'reshaped' and result['verified'] is True
            assert result['moved']['units'] == {'VGPU': 5}
            assert len(backend.list_providers(in_tree=built['root'])) == 3
            _no_secret(result, stack.passwords['placement'])
            # the operator has no service role: the stock policy refuses POST /reshaper, with the hint
            other = unique_name('cn')
            report2 = gpu_report(tmp_path / 'host2', other)
            flat_gpu_node(backend, other, report2)
            rc, refused = run_module_main(reshape.main, dict(stack.password_auth('operator'), root_provider=other,
                                                             devices=report2, snapshot_dir=str(tmp_path / 's2')), capsys)
            assert rc != 0 and ROLE_HINT.search(refused['msg']), refused
        finally:
            backend.close()
        log = stack.placement.log_path
        assert log and 'status: 500' not in open(log, errors='replace').read()


# -- clouds.yaml and secure.yaml, read as openstacksdk reads them (openstack.config) --------------

CLOUD_VARS = ('OS_CLOUD', 'OS_AUTH_URL', 'OS_CLIENT_CONFIG_FILE', 'OS_CLIENT_SECURE_FILE', 'OS_AUTH_TYPE',
              'OS_TOKEN', 'OS_ENDPOINT', 'OS_PASSWORD', 'OS_USERNAME')


@pytest.fixture
def sdk_files(monkeypatch, tmp_path):
    """openstacksdk's search path as it computes it for a HOME of tmp_path/home (its loader fixes the
    list when first imported: nothing of the machine's is read, and nothing of this test stays)."""
    from openstack.config import loader as sdk_loader
    home = tmp_path / 'home'
    config_home = home / '.config' / 'openstack'
    config_home.mkdir(parents=True)
    for name, stem in (('CONFIG_FILES', 'clouds'), ('SECURE_FILES', 'secure'), ('VENDOR_FILES', 'clouds-public')):
        monkeypatch.setattr(sdk_loader, name, [str(config_home / (stem + suffix))
                                               for suffix in sdk_loader.YAML_SUFFIXES + sdk_loader.JSON_SUFFIXES])
    for name in CLOUD_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv('HOME', str(home))
    return config_home


def _split_cloud(stack, name='split'):
    """(clouds.yaml's cloud without the password, secure.yaml's password of it)."""
    auth = stack.auth_dict('placement')
    password = auth.pop('password')
    clouds = {'clouds': {name: {'auth_type': 'password', 'region_name': 'RegionOne', 'auth': auth}}}
    secure = {'clouds': {name: {'auth': {'password': password}}}}
    return clouds, secure, password


def test_password_only_in_secure_yaml_next_to_a_clouds_yml(stack, sdk_files, capsys):
    """~/.config/openstack/clouds.yml (a name openstacksdk reads) holds the cloud, its secure.yaml the
    password: the module uses that cloud as openstack.cloud does (the collection's own list of
    clouds.yaml paths found no file and said 'No placement to talk to')."""
    clouds, secure, password = _split_cloud(stack)
    (sdk_files / 'clouds.yml').write_text(yaml.safe_dump(clouds))
    (sdk_files / 'secure.yaml').write_text(yaml.safe_dump(secure))
    rc, result = run_module_main(resource_provider_info.main, {}, capsys)
    assert rc == 0, result
    assert isinstance(result['providers'], list)
    _no_secret(result, password)


def test_cloud_only_in_the_secure_yaml_of_os_client_secure_file(stack, sdk_files, tmp_path, monkeypatch, capsys):
    """OS_CLIENT_SECURE_FILE names a secure.yaml holding the one cloud, password included, and no
    clouds.yaml: openstacksdk merges it in, and so is it used (it was 'No placement to talk to')."""
    clouds, secure, password = _split_cloud(stack)
    whole = {'clouds': {'split': dict(clouds['clouds']['split'])}}
    whole['clouds']['split']['auth'] = dict(whole['clouds']['split']['auth'], **secure['clouds']['split']['auth'])
    path = tmp_path / 'secure.yaml'
    path.write_text(yaml.safe_dump(whole))
    monkeypatch.setenv('OS_CLIENT_SECURE_FILE', str(path))
    rc, result = run_module_main(resource_provider_info.main, {}, capsys)
    assert rc == 0, result
    assert isinstance(result['providers'], list)
    _no_secret(result, password)


def test_password_in_secure_yaml_of_a_named_clouds_yaml(stack, sdk_files, tmp_path, monkeypatch, capsys):
    """OS_CLIENT_CONFIG_FILE's clouds.yaml without the password, OS_CLIENT_SECURE_FILE's secure.yaml with
    it, and the cloud named: openstack.connect merges the two (as before; the password is masked)."""
    clouds, secure, password = _split_cloud(stack)
    (tmp_path / 'clouds.yaml').write_text(yaml.safe_dump(clouds))
    (tmp_path / 'secure.yaml').write_text(yaml.safe_dump(secure))
    monkeypatch.setenv('OS_CLIENT_CONFIG_FILE', str(tmp_path / 'clouds.yaml'))
    monkeypatch.setenv('OS_CLIENT_SECURE_FILE', str(tmp_path / 'secure.yaml'))
    rc, result = run_module_main(resource_provider_info.main, {'cloud': 'split'}, capsys)
    rc2, nothing = run_module_main(resource_provider_info.main, {}, capsys)
    assert rc == 0 and rc2 == 0, (result, nothing)
    _no_secret(result, password)
    _no_secret(nothing, password)
