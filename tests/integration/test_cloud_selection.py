# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cloud selection as openstack.cloud does it, against the real Placement on 127.0.0.1.

AWX's OpenStack credential sets ONLY ``OS_CLIENT_CONFIG_FILE``, naming a clouds.yaml with one
cloud: openstacksdk (and so openstack.cloud) uses that cloud; so must every module here.  With
several clouds and none named, the message lists them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
import yaml

from ansible_collections.placement.upgrade.plugins.modules import resource_provider_info

from module_runner import run_module_main

pytestmark = pytest.mark.real

OS_VARS = ('OS_CLOUD', 'OS_AUTH_URL', 'OS_CLIENT_CONFIG_FILE', 'OS_AUTH_TYPE', 'OS_TOKEN', 'OS_ENDPOINT')


def clouds_yaml(tmp_path, placement_server, names):
    auth = placement_server.module_auth()
    doc = {'clouds': dict((name, {'auth_type': auth['auth_type'], 'auth': auth['auth']}) for name in names)}
    path = tmp_path / 'clouds.yaml'
    path.write_text(yaml.safe_dump(doc))
    return str(path)


@pytest.fixture
def awx_env(monkeypatch, tmp_path):
    # openstacksdk fixes its clouds.yaml search path (the working directory, ~/.config/openstack,
    # /etc/openstack) when it is first imported.  Import it here, before anything moves, and
    # empty that path for this test only: no clouds.yaml of the machine is read, and a first
    # import made inside tmp_path can no longer leave tmp_path/clouds.yaml on the search path of
    # every later test in this process (it did: a later password login was merged with this
    # test's admin_token cloud).
    from openstack.config import loader as sdk_loader
    for name in ('CONFIG_FILES', 'SECURE_FILES', 'VENDOR_FILES'):
        monkeypatch.setattr(sdk_loader, name, [])
    for name in OS_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv('HOME', str(tmp_path / 'home'))
    return monkeypatch


def test_the_one_cloud_of_os_client_config_file_is_used(awx_env, tmp_path, placement_server, rest_backend,
                                                        unique_name, capsys):
    name = unique_name('awx-cn')
    rest_backend.create_provider(name)
    awx_env.setenv('OS_CLIENT_CONFIG_FILE', clouds_yaml(tmp_path, placement_server, ['awx']))
    rc, result = run_module_main(resource_provider_info.main, {'name': name}, capsys)
    assert rc == 0, result
    assert [p['name'] for p in result['providers']] == [name]


def test_several_clouds_and_none_named_says_which(awx_env, tmp_path, placement_server, capsys):
    awx_env.setenv('OS_CLIENT_CONFIG_FILE', clouds_yaml(tmp_path, placement_server, ['east', 'west']))
    rc, result = run_module_main(resource_provider_info.main, {'name': 'x'}, capsys)
    assert rc == 1
    assert 'holds 2 clouds: east, west. Name one with the cloud option or OS_CLOUD' in result['msg']
    # naming one works, as with openstack.cloud
    rc, result = run_module_main(resource_provider_info.main, {'name': 'x', 'cloud': 'west'}, capsys)
    assert rc == 0, result


def test_nothing_configured_says_every_way(awx_env, capsys):
    rc, result = run_module_main(resource_provider_info.main, {'name': 'x'}, capsys)
    assert rc == 1
    assert 'No placement to talk to' in result['msg'] and 'OS_CLIENT_CONFIG_FILE' in result['msg']
