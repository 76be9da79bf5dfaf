# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A device two guests' domains hold: the first (in instance order) keeps it, with a warning naming
both (discover/common.hold, shared by the mdev and the PCI holders)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.placement.upgrade.plugins.module_utils._placement.node.discover import gpus, pci

A = 'aaaaaaaa-0000-0000-0000-000000000001'
B = 'bbbbbbbb-0000-0000-0000-000000000002'
MDEV = 'cccccccc-0000-0000-0000-000000000003'


def _run(hold, infos):
    warnings = []
    for uuid, info in infos:
        hold(uuid, uuid, info, warnings)
    return warnings


def test_an_mdev_two_guests_hold_stays_with_the_first():
    mdev = {'uuid': MDEV, 'type': 'nvidia-35', 'instance_uuid': None}
    report = {'gpus': [{'address': '0000:84:00.0', 'mdevs': [mdev]}]}
    warnings = _run(gpus.GPUs().holder(report), [(A, {'mdevs': [MDEV]}), (B, {'mdevs': [MDEV]})])
    assert mdev['instance_uuid'] == A
    assert warnings == ['mdev %s is held by both instance %s and instance %s; keeping %s' % (MDEV, A, B, A)]


def test_a_pci_device_two_guests_hold_stays_with_the_first():
    vf = {'address': '0000:3b:02.1', 'instance_uuid': None}
    device = {'address': '0000:5e:00.0', 'instance_uuid': None}
    report = {'gpus': [], 'sriov_pfs': [{'address': '0000:3b:00.0', 'instance_uuid': None, 'vfs': [vf]}],
              'pci_devices': [device]}
    both = {'pci_addresses': ['0000:3b:02.1', '0000:5e:00.0']}
    warnings = _run(pci.PCI().holder(report), [(A, both), (B, both)])
    assert (vf['instance_uuid'], device['instance_uuid']) == (A, A)
    assert warnings == ['PCI device %s is held by both instance %s and instance %s; keeping %s' % (address, A, B, A)
                        for address in ('0000:3b:02.1', '0000:5e:00.0')]


def test_the_same_guest_named_twice_is_no_conflict():
    mdev = {'uuid': MDEV, 'type': 'nvidia-35', 'instance_uuid': None}
    report = {'gpus': [{'address': '0000:84:00.0', 'mdevs': [mdev]}]}
    assert _run(gpus.GPUs().holder(report), [(A, {'mdevs': [MDEV]}), (A, {'mdevs': [MDEV]})]) == []
    assert mdev['instance_uuid'] == A
