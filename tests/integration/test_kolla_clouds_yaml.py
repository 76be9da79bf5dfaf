# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The clouds.yaml kolla-ansible writes, and the cloud to name in it for the roll.

``kolla-ansible post-deploy`` renders ``clouds.yaml.j2`` to ``/etc/kolla/clouds.yaml``
(``node_config``).  kolla's templates, copied verbatim in ``kolla_templates/`` (see its README),
are rendered here as Ansible's template module renders them (Jinja2, ``trim_blocks``), in both
shapes kolla has shipped: 2 clouds (15.0.0 to 17.x: ``kolla-admin``, ``kolla-admin-internal``)
and 4 clouds (18.0.0 on: also ``kolla-admin-system`` and ``kolla-admin-system-internal``).
``kolla-admin`` has keystone's public URL and no ``interface`` (openstacksdk's default,
``public``); ``kolla-admin-internal`` has keystone's internal URL and ``interface: internal``,
the cloud kolla's own modules use (``openstack_auth_cloud``).

Against the real Keystone and Placement on 127.0.0.1 (tests/keystone_server.py), the
credentials kolla renders being those of Keystone's bootstrap ``admin`` (project ``admin``,
role ``admin``), as kolla's are.  The catalog of the region holds Placement's endpoints as a
deployment whose public (external VIP) endpoint the controller running the roll does not reach:
public dead, internal the real Placement.  What is not real: kolla's two URLs point at the one
Keystone (public as ``localhost``, internal as ``127.0.0.1``), plain HTTP (so ``cacert`` is
checked as the session's ``verify``, not in a TLS handshake), and the file is not at
/etc/kolla (the test's own folder, named by ``OS_CLIENT_CONFIG_FILE``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import jinja2
import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.factory import get_backend
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.rest import RestBackend
from ansible_collections.placement.upgrade.plugins.modules import placement_preflight, resource_provider_info

from module_runner import run_module_main
from test_kolla_interface import placement_internal_only

pytestmark = pytest.mark.real

REGION = 'KollaCloudsYaml'
TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'kolla_templates')
SHAPES = {
    '2clouds': ['kolla-admin', 'kolla-admin-internal'],
    '4clouds': ['kolla-admin', 'kolla-admin-internal', 'kolla-admin-system', 'kolla-admin-system-internal'],
}
OS_VARS = ('OS_CLOUD', 'OS_AUTH_URL', 'OS_CLIENT_CONFIG_FILE', 'OS_AUTH_TYPE', 'OS_TOKEN', 'OS_ENDPOINT',
           'OS_INTERFACE', 'OS_REGION_NAME', 'OS_CACERT')


@pytest.fixture(scope='module')
def kolla_catalog():
    with placement_internal_only(REGION) as (stack, _dead):
        yield stack


def render(shape, values):
    with open(os.path.join(TEMPLATES, 'clouds.yaml.j2.' + shape)) as fh:
        source = fh.read()
    # Ansible's template module: trim_blocks on, undefined variables an error
    env = jinja2.Environment(trim_blocks=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    return env.from_string(source).render(**values)


@pytest.fixture(params=sorted(SHAPES))
def kolla_clouds(request, kolla_catalog, monkeypatch, tmp_path):
    """(stack, values, shape): kolla's clouds.yaml rendered, the one file openstacksdk reads."""
    stack = kolla_catalog
    from openstack.config import loader as sdk_loader
    for name in ('CONFIG_FILES', 'SECURE_FILES', 'VENDOR_FILES'):
        monkeypatch.setattr(sdk_loader, name, [])
    for name in OS_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv('HOME', str(tmp_path / 'home'))
    monkeypatch.setattr(RestBackend, 'backoff', 0.01)
    port = stack.keystone.url.rsplit(':', 1)[1]
    cacert = tmp_path / 'certificates' / 'ca' / 'root.crt'
    cacert.parent.mkdir(parents=True)
    cacert.write_text(u'')
    values = {
        'keystone_public_url': 'http://localhost:%s' % port,    # kolla_url(): no /v3
        'keystone_internal_url': 'http://127.0.0.1:%s' % port,
        'keystone_admin_project': 'admin', 'keystone_admin_user': 'admin',
        'keystone_admin_password': stack.keystone.admin_password,
        'openstack_region_name': REGION, 'kolla_admin_openrc_cacert': str(cacert),
    }
    path = tmp_path / 'clouds.yaml'
    path.write_text(render(request.param, values))
    monkeypatch.setenv('OS_CLIENT_CONFIG_FILE', str(path))
    return stack, values, request.param


def test_kolla_writes_these_clouds(kolla_clouds, tmp_path):
    import yaml
    _stack, values, shape = kolla_clouds
    clouds = yaml.safe_load((tmp_path / 'clouds.yaml').read_text())['clouds']
    assert sorted(clouds) == SHAPES[shape]
    internal = clouds['kolla-admin-internal']
    assert internal['interface'] == 'internal'
    assert internal['auth']['auth_url'] == values['keystone_internal_url']
    assert 'interface' not in clouds['kolla-admin']
    assert clouds['kolla-admin']['auth']['auth_url'] == values['keystone_public_url']
    assert all(c['cacert'] == values['kolla_admin_openrc_cacert'] for c in clouds.values())


def test_no_cloud_named_lists_kollas_clouds(kolla_clouds, capsys):
    _stack, _values, shape = kolla_clouds
    rc, result = run_module_main(resource_provider_info.main, {}, capsys)
    assert rc == 1, result
    assert 'holds %d clouds: %s. Name one' % (len(SHAPES[shape]), ', '.join(SHAPES[shape])) in result['msg']


def test_kolla_admin_internal_reaches_placement_by_the_internal_endpoint(kolla_clouds, capsys):
    stack, values, _shape = kolla_clouds
    backend = get_backend({'cloud': 'kolla-admin-internal'})
    try:
        config = backend.connection.config
        assert config.get_interface('placement') == 'internal'
        assert config.config['auth']['auth_url'] == values['keystone_internal_url']
        assert backend.session.verify == values['kolla_admin_openrc_cacert']
        assert backend.endpoint.rstrip('/') == stack.placement.url.rstrip('/')
    finally:
        backend.close()
    rc, result = run_module_main(resource_provider_info.main, {'cloud': 'kolla-admin-internal'}, capsys)
    assert rc == 0, result
    assert isinstance(result['providers'], list)


def test_kolla_admin_is_the_public_endpoint(kolla_clouds, capsys):
    """``kolla-admin`` goes to Placement's public endpoint: dead here, as it is from a controller
    that does not reach the external VIP."""
    rc, result = run_module_main(resource_provider_info.main, {'cloud': 'kolla-admin'}, capsys)
    assert rc == 1, result
    assert 'Cannot find the Placement service' in result['msg'], result['msg']


def test_kollas_admin_may_not_reshape_by_placements_default_policy(kolla_clouds, capsys):
    """kolla's admin has the ``admin`` role, not ``service``: the pre-flight says so before any
    node is touched (the operator gives the account the ``service`` role)."""
    rc, result = run_module_main(placement_preflight.main, {'cloud': 'kolla-admin-internal'}, capsys)
    checks = dict((c['check'], c) for c in result['checks'])
    assert checks['reachable']['passed'], result
    assert not checks['reshape_permission']['passed'], result
    assert checks['reshape_permission']['detail'].startswith(
        '403 Forbidden: POST /reshaper was refused by policy: the credentials need the `service` role')
    assert rc == 1, result


def test_with_the_service_role_kollas_admin_may_reshape(kolla_clouds, capsys):
    """The call ``openstack role add --project admin --user admin service`` makes (Keystone's
    ``PUT /v3/projects/{project}/users/{user}/roles/{role}``; the openstack client is not
    installed here), then the pre-flight passes; the role is taken back afterwards."""
    stack, _values, _shape = kolla_clouds
    keystone = stack.keystone
    grant = '/projects/%s/users/%s/roles/%s' % (
        keystone._find('projects', 'admin'), keystone._find('users', 'admin'), keystone._find('roles', 'service'))
    keystone.api('PUT', grant)
    try:
        rc, result = run_module_main(placement_preflight.main, {'cloud': 'kolla-admin-internal'}, capsys)
    finally:
        keystone.api('DELETE', grant)
    checks = dict((c['check'], c) for c in result['checks'])
    assert checks['reshape_permission']['passed'], result
    assert rc == 0, result
