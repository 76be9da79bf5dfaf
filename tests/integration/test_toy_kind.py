# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A kind whose devices are new to the device report is two files: issue 44's proof.

A toy kind (FPGA cards, class CUSTOM_FPGA, which nova does not have) is written as two modules
of a TEMPORARY package (tmp_path, on sys.path for this test only): ``discover_fpga.py``, its part
of the device report (read from a fake sysfs, checked, who holds each card), and ``kind_fpga.py``,
its reshape kind (one child per card).  The test registers them (one line each, in
``node/discover/registry.PARTS`` and ``node/kinds/registry.KINDS``), discovers a host, reshapes
the node and rolls it back, on both backends: the embedded SQLite one and the real Placement.
Nothing else in the collection is told about the kind.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib
import sys
import textwrap
import uuid as _uuid

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.base import provider_tree_state
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import discovery
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import snapshot
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node.discover import registry as parts
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node.kinds import registry as kinds

from test_reshaper_support import comparable, make_provider, put

PKG = 'ansible_collections.placement.upgrade.plugins.module_utils._placement'

DISCOVER_FPGA = '''
"""The toy kind's part of the device report: ``fpgas``, one record per directory of
``<sysfs>/class/toy_fpga/<PCI address>``; a guest holds a card by PCI passthrough."""

import os

from {pkg}.node.discover.common import TEXT_OR_NULL, DevicePart, check_entries


class FPGAs(DevicePart):
    name = 'fpgas'
    report_keys = ('fpgas',)

    def read(self, reading, report):
        base = os.path.join(reading.request.sysfs_root, 'class', 'toy_fpga')
        names = sorted(os.listdir(base)) if os.path.isdir(base) else []
        return {{'fpgas': [{{'address': name, 'instance_uuid': None}} for name in names]}}

    def check(self, devices, field):
        check_entries(devices.get('fpgas'), field + '.fpgas', 'FPGA records',
                      {{'address': 'text!', 'instance_uuid': TEXT_OR_NULL}})

    def addresses(self, devices, field):
        return [('%s.fpgas[%d].address' % (field, i), card['address'])
                for i, card in enumerate(devices.get('fpgas') or [])]

    def holder(self, report, reported=()):
        cards = dict((card['address'], card) for card in report['fpgas'])

        def hold(uuid, label, info, warnings):
            for address in info['pci_addresses']:
                if address in cards:
                    cards[address]['instance_uuid'] = uuid
        return hold

    def owned(self, report):
        return [(card.get('instance_uuid'), card['address']) for card in report.get('fpgas') or []]


PART = FPGAs()
'''

KIND_FPGA = '''
"""The toy kind's reshape rules: CUSTOM_FPGA moves from the root to one child per card."""

from {pkg}.node.kinds.common import Kind


class FPGA(Kind):
    name = 'fpga'
    discovery = 'the toy part discover_fpga.py'
    need = 'fpga'

    def children(self, root_name, devices, opts, nova, numa_source, warnings):
        return [{{'name': '%s_fpga_%s' % (root_name, card['address'].replace(':', '_').replace('.', '_')),
                  'kind': self.name, 'device': card['address'],
                  'inventories': {{'CUSTOM_FPGA': {{'total': 1, 'max_unit': 1}}}},
                  'traits': ['CUSTOM_FPGA_CARD'], 'inherit': [], 'numa_node': -1}}
                 for card in devices.get('fpgas') or []]

    def root_class(self, rc):
        return rc == 'CUSTOM_FPGA'


KIND = FPGA()
'''

CARDS = ('0000:3b:00.0', '0000:3c:00.0')


def _domain(uuid, name, address):
    domain, bus, rest = address.split(':')
    slot, function = rest.split('.')
    return textwrap.dedent('''\
        <domain type="kvm"><name>%s</name><uuid>%s</uuid><vcpu>2</vcpu><devices>
          <hostdev mode="subsystem" type="pci" managed="yes"><source>
            <address domain="0x%s" bus="0x%s" slot="0x%s" function="0x%s"/>
          </source></hostdev>
        </devices></domain>''') % (name, uuid, domain, bus, slot, function)


@pytest.fixture
def toy_kind(tmp_path, monkeypatch):
    """The toy kind's two files in a temporary package, registered for this test only."""
    package = tmp_path / 'toy_kind_pkg'
    package.mkdir()
    (package / '__init__.py').write_text('')
    (package / 'discover_fpga.py').write_text(DISCOVER_FPGA.format(pkg=PKG))
    (package / 'kind_fpga.py').write_text(KIND_FPGA.format(pkg=PKG))
    monkeypatch.syspath_prepend(str(tmp_path))
    part = importlib.import_module('toy_kind_pkg.discover_fpga').PART
    kind = importlib.import_module('toy_kind_pkg.kind_fpga').KIND
    monkeypatch.setattr(parts, 'PARTS', parts.PARTS + (part,))
    monkeypatch.setattr(kinds, 'KINDS', kinds.KINDS + (kind,))
    yield kind
    for name in ('toy_kind_pkg.discover_fpga', 'toy_kind_pkg.kind_fpga', 'toy_kind_pkg'):
        sys.modules.pop(name, None)


@pytest.fixture(params=['embedded', pytest.param('rest', marks=pytest.mark.real)])
def backend(request, tmp_path):
    if request.param == 'embedded':
        return request.getfixturevalue('embedded_backend')
    return request.getfixturevalue('rest_backend')


def test_a_toy_kind_in_two_files_is_discovered_reshaped_and_rolled_back(toy_kind, backend, unique_name, tmp_path):
    name = unique_name('cn')
    sysfs = tmp_path / 'sys'
    for card in CARDS:
        (sysfs / 'class' / 'toy_fpga' / card).mkdir(parents=True)
    guests = [str(_uuid.uuid4()) for _card in CARDS]
    xmls = [_domain(guest, 'instance-%d' % i, card) for i, (guest, card) in enumerate(zip(guests, CARDS))]
    report = discovery.discover(str(sysfs), domain_xml_glob=None, domain_xmls=xmls, numa=False, hostname=name)
    # the toy part of the report, its holders set; the PCI part says nothing of the toy's cards
    assert report['fpgas'] == [{'address': card, 'instance_uuid': guest} for card, guest in zip(CARDS, guests)]
    assert report['warnings'] == []
    assert discovery.ownership(report) == dict((g, {c: 1}) for g, c in zip(guests, CARDS))
    discovery.check_report(report)

    backend.ensure_resource_class('CUSTOM_FPGA')
    root = make_provider(backend, name, {'VCPU': {'total': 16}, 'MEMORY_MB': {'total': 8192},
                                         'CUSTOM_FPGA': {'total': 2, 'max_unit': 2}})
    for guest in guests:
        put(backend, guest, {root: {'resources': {'VCPU': 2, 'MEMORY_MB': 1024, 'CUSTOM_FPGA': 1}}})
    before = comparable(provider_tree_state(backend, root))
    snapdir = str(tmp_path / 'snapshots')

    result = reshaper.reshape_node(backend, name, report, snapshot_dir=snapdir)
    assert result['status'] == 'reshaped' and result['verified'] is True, result
    assert 'CUSTOM_FPGA' not in backend.get_inventories(root)['inventories']
    for guest, card in zip(guests, CARDS):
        child = backend.list_providers(name='%s_fpga_%s' % (name, card.replace(':', '_').replace('.', '_')))[0]
        assert backend.get_provider_traits(child['uuid'])['traits'] == ['CUSTOM_FPGA_CARD']
        allocs = backend.get_allocations(guest)['allocations']
        assert allocs[child['uuid']]['resources'] == {'CUSTOM_FPGA': 1}
        assert allocs[root]['resources'] == {'VCPU': 2, 'MEMORY_MB': 1024}
    again = reshaper.reshape_node(backend, name, report, snapshot_dir=snapdir)
    assert again['status'] == 'noop' and again['changed'] is False

    # the snapshot is the tree before the POST /reshaper: its children created, still empty
    snap_state = comparable(snapshot.load_snapshot(result['snapshot'])['state'])
    back = reshaper.rollback_node(backend, name, snapshot_dir=snapdir)
    assert back['verified'] is True, back['verification']
    assert comparable(provider_tree_state(backend, root)) == snap_state
    gone = reshaper.rollback_node(backend, name, snapshot_dir=snapdir, remove_children=True)
    assert gone['verified'] is True, gone['verification']
    assert comparable(provider_tree_state(backend, root)) == before


def test_without_its_two_registry_lines_the_toy_devices_are_not_in_the_report(tmp_path):
    sysfs = tmp_path / 'sys'
    (sysfs / 'class' / 'toy_fpga' / CARDS[0]).mkdir(parents=True)
    report = discovery.discover(str(sysfs), domain_xml_glob=None, numa=False, hostname='cn1')
    assert 'fpgas' not in report
    assert [k.name for k in kinds.KINDS] == ['vgpu', 'pci', 'numa', 'mem_encryption', 'pcpu']
