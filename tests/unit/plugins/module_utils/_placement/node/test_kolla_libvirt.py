# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Containerised libvirt (kolla-ansible), issue 42, 1.

kolla runs libvirt in its ``nova_libvirt`` container and keeps the guests' domain XML in the named
volume ``nova_libvirt_qemu`` (mounted at /etc/libvirt/qemu in the container), stored on the host in
the container engine's volume folder: with the default glob (/etc/libvirt/qemu/*.xml) discovery
found no guest, and every node whose guests hold VGPU was deferred as "move in flight", silently.
Discovery reads the volume's path (``domains.KOLLA_DOMAIN_XML_GLOBS``, docker and podman), and the
plan warns whenever Placement shows guests holding device classes on a node where no domain
definition was found.  (The fake host's tree stands in for the node's / : no container engine here.)"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import shutil

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import discovery
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node.discover import domains
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.base import provider_tree_state

import fakehost
from test_reshaper_support import comparable

KOLLA_VOLUMES = {
    'docker': '/var/lib/docker/volumes/nova_libvirt_qemu/_data',
    'podman': '/var/lib/containers/storage/volumes/nova_libvirt_qemu/_data',
}


def _kolla_host(tmp_path, name='compute-01'):
    """A fake GPU host whose guests' definitions are where kolla keeps them (both engines' folders
    exist, the docker one empty), none in /etc/libvirt/qemu."""
    built = fakehost.build_host(str(tmp_path / 'host'), fakehost.default_gpu_host(name=name), clean=True)
    files = sorted(glob.glob(built['domain_xml_glob']))
    assert files
    for folder in KOLLA_VOLUMES.values():
        os.makedirs(built['root'] + folder)
    for path in files:
        shutil.move(path, built['root'] + KOLLA_VOLUMES['podman'])
    return built, [os.path.basename(p) for p in files]


@pytest.mark.parametrize('engine', ['docker', 'podman'])
def test_the_kolla_globs_name_the_nova_libvirt_qemu_volume_of_each_engine(engine):
    assert domains.KOLLA_DOMAIN_XML_GLOBS[engine] == KOLLA_VOLUMES[engine] + '/*.xml'


def test_discovery_reads_the_guests_where_kolla_keeps_them(tmp_path):
    built, names = _kolla_host(tmp_path)
    default = discovery.discover(built['sysfs_root'], domain_xml_glob=built['domain_xml_glob'], hostname='compute-01')
    assert default['instances'] == {}      # the default glob: no guest, every mdev looks free
    kolla = discovery.discover(built['sysfs_root'], hostname='compute-01',
                               domain_xml_glob=built['root'] + domains.KOLLA_DOMAIN_XML_GLOBS['podman'])
    assert sorted(os.path.basename(i['source']) for i in kolla['instances'].values()) == names
    assert any(m.get('instance_uuid') for g in kolla['gpus'] for m in g['mdevs'])


def _warning(result):
    return [w for w in result['warnings'] if 'no guest domain definition was found' in w]


def test_guests_holding_vgpu_on_a_node_without_domain_definitions_warn(tmp_path, embedded_backend):
    from test_reshaper_support import flat_gpu_node
    built, _names = _kolla_host(tmp_path)
    # Placement as nova left it: the guests hold VGPU on the root; discovery with the default glob
    found = discovery.discover(built['sysfs_root'], hostname='compute-01',
                               domain_xml_glob=built['root'] + domains.KOLLA_DOMAIN_XML_GLOBS['podman'])
    node = flat_gpu_node(embedded_backend, 'compute-01', found)
    blind = discovery.discover(built['sysfs_root'], domain_xml_glob=built['domain_xml_glob'], hostname='compute-01')
    before = comparable(provider_tree_state(embedded_backend, node['root']))
    result = reshaper.reshape_node(embedded_backend, 'compute-01', blind, snapshot_dir=str(tmp_path / 'snap'))
    assert result['status'] == 'deferred' and result['changed'] is False
    assert comparable(provider_tree_state(embedded_backend, node['root'])) == before
    warned = _warning(result)
    assert len(warned) == 1, result['warnings']
    held = len(node['consumers'])
    assert warned[0].startswith('Placement shows %d guest(s) holding VGPU on compute-01' % held), warned[0]
    for engine in ('docker', 'podman'):
        assert domains.KOLLA_DOMAIN_XML_GLOBS[engine] in warned[0]
    assert 'rolling_reshape_domain_xml_glob' in warned[0]
    # with the definitions found, no such warning, and the node is reshaped
    result = reshaper.reshape_node(embedded_backend, 'compute-01', found, snapshot_dir=str(tmp_path / 'snap'))
    assert result['status'] == 'reshaped' and _warning(result) == [], result.get('msg')


def test_a_node_without_guests_holding_devices_does_not_warn(tmp_path, embedded_backend):
    from test_reshaper_support import flat_gpu_node
    built, _names = _kolla_host(tmp_path)
    blind = discovery.discover(built['sysfs_root'], domain_xml_glob=built['domain_xml_glob'], hostname='compute-01')
    node = flat_gpu_node(embedded_backend, 'compute-01', blind)   # no guest: nothing allocated
    assert node['consumers'] == {}
    result = reshaper.reshape_node(embedded_backend, 'compute-01', blind, snapshot_dir=str(tmp_path / 'snap'),
                                   check_mode=True)
    assert result['status'] != 'deferred' and _warning(result) == [], result


def test_the_operator_guides_kolla_recipe_is_these_globs():
    # docs/operator-guide.md's recipe is what discovery is tested with here
    import re
    import yaml
    guide = os.path.join(os.path.dirname(fakehost.__file__), '..', 'docs', 'operator-guide.md')
    with open(guide) as handle:
        block = re.search(r'^```yaml\n(# recipe: kolla-ansible discovery [^\n]*\n.*?)^```', handle.read(),
                          flags=re.M | re.S).group(1)
    assert yaml.safe_load(block)['rolling_reshape_domain_xml_glob'] == domains.KOLLA_DOMAIN_XML_GLOBS['docker']
    commented = yaml.safe_load('\n'.join(line[2:] for line in block.splitlines() if line.startswith('# rolling')))
    assert commented['rolling_reshape_domain_xml_glob'] == domains.KOLLA_DOMAIN_XML_GLOBS['podman']
