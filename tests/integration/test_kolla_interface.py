# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The endpoint interface comes from clouds.yaml unless the task names one.

kolla-ansible writes ``interface: internal`` into the ``kolla-admin-internal`` cloud of the
clouds.yaml it generates (and ``OS_INTERFACE=internal`` into admin-openrc.sh): on a kolla cloud
the controller often reaches only the internal endpoints.  (kolla's whole file, every cloud of
it, rendered from kolla's own templates: test_kolla_clouds_yaml.py.)  A module default of
``public`` would override that and send every call to an endpoint that does not answer.
Against a real Keystone whose catalog has, in its own region, a dead public endpoint and a live internal one for Placement.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib

import pytest
import yaml

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.rest import RestBackend
from ansible_collections.placement.upgrade.plugins.modules import resource_provider_info

from keystone_server import closed_port_url, shared_stack
from module_runner import run_module_main

pytestmark = [pytest.mark.real, pytest.mark.slow]

REGION = 'KollaInternalOnly'
OS_VARS = ('OS_CLOUD', 'OS_AUTH_URL', 'OS_CLIENT_CONFIG_FILE', 'OS_AUTH_TYPE', 'OS_TOKEN', 'OS_ENDPOINT',
           'OS_INTERFACE', 'OS_REGION_NAME')


@contextlib.contextmanager
def placement_internal_only(region):
    """The shared Keystone stack with Placement registered in ``region``: public and admin dead,
    internal the real Placement; yields (stack, the dead URL)."""
    stack = shared_stack()
    sock, dead = closed_port_url()
    dead = dead.rsplit('/v3', 1)[0]
    stack.keystone.add_region_endpoints('placement', region, {
        'public': dead, 'admin': dead, 'internal': stack.placement.url})
    try:
        yield stack, dead
    finally:
        sock.close()


@pytest.fixture(scope='module')
def kolla_catalog():
    with placement_internal_only(REGION) as catalog:
        yield catalog


@pytest.fixture
def kolla_clouds_yaml(kolla_catalog, monkeypatch, tmp_path):
    """A clouds.yaml with kolla-ansible's internal cloud (``kolla-admin-internal``, ``interface: internal``),
    the only one openstacksdk reads (``OS_CLIENT_CONFIG_FILE``, as AWX's credential sets it)."""
    stack, _dead = kolla_catalog
    from openstack.config import loader as sdk_loader
    for name in ('CONFIG_FILES', 'SECURE_FILES', 'VENDOR_FILES'):
        monkeypatch.setattr(sdk_loader, name, [])
    for name in OS_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv('HOME', str(tmp_path / 'home'))
    monkeypatch.setattr(RestBackend, 'backoff', 0.01)
    doc = {'clouds': {'kolla-admin-internal': {
        'auth_type': 'password', 'auth': stack.auth_dict('placement'),
        'region_name': REGION, 'interface': 'internal', 'identity_api_version': 3}}}
    path = tmp_path / 'clouds.yaml'
    path.write_text(yaml.safe_dump(doc))
    monkeypatch.setenv('OS_CLIENT_CONFIG_FILE', str(path))
    return stack


def test_clouds_yaml_interface_internal_is_used_when_the_task_names_none(kolla_clouds_yaml, capsys):
    rc, result = run_module_main(resource_provider_info.main, {'cloud': 'kolla-admin-internal'}, capsys)
    assert rc == 0, result
    assert isinstance(result['providers'], list)
    assert result['invocation']['module_args']['interface'] is None


def test_os_interface_internal_is_used_when_the_task_names_none(kolla_clouds_yaml, monkeypatch, capsys):
    """admin-openrc.sh's ``OS_INTERFACE=internal`` with the cloud's own interface removed."""
    stack = kolla_clouds_yaml
    monkeypatch.delenv('OS_CLIENT_CONFIG_FILE')
    for name, value in (('OS_AUTH_URL', stack.auth_url), ('OS_USERNAME', 'placement'),
                        ('OS_PASSWORD', stack.passwords['placement']), ('OS_PROJECT_NAME', 'service'),
                        ('OS_USER_DOMAIN_NAME', 'Default'), ('OS_PROJECT_DOMAIN_NAME', 'Default'),
                        ('OS_REGION_NAME', REGION), ('OS_INTERFACE', 'internal'),
                        ('OS_IDENTITY_API_VERSION', '3')):
        monkeypatch.setenv(name, value)
    rc, result = run_module_main(resource_provider_info.main, {}, capsys)
    assert rc == 0, result
    assert isinstance(result['providers'], list)


def test_an_interface_the_task_names_still_wins(kolla_clouds_yaml, capsys):
    """``interface: public`` given: the dead public endpoint is used, as asked."""
    rc, result = run_module_main(resource_provider_info.main, {'cloud': 'kolla-admin-internal', 'interface': 'public'},
                                 capsys)
    assert rc == 1, result
    assert 'Cannot find the Placement service' in result['msg'], result['msg']
    assert result['invocation']['module_args']['interface'] == 'public'
