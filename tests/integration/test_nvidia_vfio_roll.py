# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/rolling_reshape.yml on an NVIDIA vGPU node of the vendor-specific VFIO framework
(tools/simfleet.py --nvidia-vfio): discovered, reshaped as nova 34 lays its VFs out, and the
fleet report names the vGPU type of each VF a moved guest holds."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

import simfleet
from test_fleet_playbook import playbook, statuses, trees

pytestmark = pytest.mark.slow


def test_the_roll_reshapes_the_node_and_the_report_names_each_vgpu(tmp_path):
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=1, nvidia_vfio=1)
    rc, out = playbook(fleet, 'rolling_reshape.yml')
    assert rc == 0, out
    assert statuses(fleet) == {'compute-01': 'reshaped', 'compute-02': 'reshaped'}
    tree = trees(fleet)['compute-02']
    names = dict((p['name'], p) for p in tree['providers'].values())
    assert names['compute-02_0000:41:00.0']['inventories']['CUSTOM_NVIDIA_L4_6Q']['total'] == 3
    assert names['compute-02_0000:42:00.0']['inventories']['CUSTOM_NVIDIA_L4_12Q']['total'] == 1
    node = fleet['nodes'][1]
    g61, g62 = node['instances']['instance-00000061'], node['instances']['instance-00000062']
    with open(os.path.join(fleet['out_dir'], 'reports', 'latest', 'report.md')) as handle:
        text = handle.read()
    assert ('| %s (instance-00000061, vGPU NVIDIA L4-6Q on VF 0000:41:00.4) | CUSTOM_NVIDIA_L4_6Q | - '
            '| compute-02_0000:41:00.0: 1 |' % g61) in text
    assert ('| %s (instance-00000062, vGPU NVIDIA L4-12Q on VF 0000:42:00.4) | CUSTOM_NVIDIA_L4_12Q | - '
            '| compute-02_0000:42:00.0: 1 |' % g62) in text
    with open(os.path.join(fleet['out_dir'], 'reports', 'latest', 'report.html')) as handle:
        assert 'instance-00000061, vGPU NVIDIA L4-6Q on VF 0000:41:00.4' in handle.read()
