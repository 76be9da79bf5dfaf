# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cloud twin's control plane comes up and answers an operator's openstacksdk through Keystone.

``.venv/bin/python -m pytest -s tests/cloud_twin/test_cloud_twin_smoke.py`` prints each service's
start-up seconds (the ``cloud`` fixture, tests/cloud_twin/conftest.py).
"""

import openstack
import openstack.config
import pytest


pytestmark = [pytest.mark.real, pytest.mark.slow]


def _connect(clouds_yaml, name='twin'):
    config = openstack.config.OpenStackConfig(config_files=[clouds_yaml])
    return openstack.connection.Connection(config=config.get_one(name))


def test_control_plane_answers_through_keystone(cloud, clouds_yaml):
    with open(clouds_yaml) as fh:
        text = fh.read()
    assert 'admin_token' not in text and '"auth_type": "password"' in text
    conn = _connect(clouds_yaml)
    # endpoints come from Keystone's catalog (nothing but auth_url in the clouds.yaml)
    assert sorted(e['type'] for e in conn.service_catalog) == ['compute', 'identity', 'placement']
    assert conn.compute.get_endpoint().startswith(cloud.nova_api.url)
    assert conn.placement.get_endpoint().startswith(cloud.placement.url)

    services = dict(((s.binary, s.host), (s.status, s.state)) for s in conn.compute.services())
    assert services == {('nova-conductor', 'controller'): ('enabled', 'up'),
                        ('nova-scheduler', 'controller'): ('enabled', 'up')}

    offset = cloud.placement_log_size()
    flavor = conn.compute.create_flavor(name='smoke-%s' % cloud.run_dir[-6:], ram=512, vcpus=1, disk=1)
    try:
        assert conn.compute.get_flavor(flavor.id).vcpus == 1
    finally:
        conn.compute.delete_flavor(flavor.id)
    assert list(conn.placement.resource_providers()) == []
    # Placement's request log names the Keystone user of each request: the operator's GET just now
    mine = cloud.placement_requests(user='operator', since=offset)
    assert [(r['method'], r['uri'].split('?')[0], r['status']) for r in mine] == [('GET', '/resource_providers', 200)]
    assert cloud.placement_requests(user='nova', since=offset) == []

    # every process of the control plane runs, each its own pid
    pids = cloud.pids()
    assert sorted(pids) == ['epmd', 'keystone', 'mariadb', 'nova-conductor', 'nova-scheduler', 'nova_api',
                            'placement', 'rabbitmq-server']
    assert len(set(pids.values())) == len(pids)
    print('\ncloud twin start-up (s): %s' % ', '.join('%s %.1f' % (k, v) for k, v in cloud.timings.items()))
    print('run folder: %s' % cloud.run_dir)


def test_nova_sees_its_cells(cloud):
    cells = cloud.nova_manage('cell_v2', 'list_cells').stdout
    assert 'cell0' in cells and 'cell1' in cells
    assert cloud.broker.transport_url.split('@')[1] in cells or 'rabbit://' in cells
