# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report names the vGPU type of each NVIDIA VFIO vGPU VF a moved guest holds."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import report

from test_reshaper_support import fakehost, make_provider, put_untyped, report_for


def test_report_names_the_vgpu_type_per_vf_of_each_moved_guest(embedded_backend, tmp_path):
    backend = embedded_backend
    devices = report_for(tmp_path / 'host', fakehost.nvidia_vfio_host(name='cn'), nova=True)
    root = make_provider(backend, 'cn', {'VCPU': {'total': 64}, 'MEMORY_MB': {'total': 131072}})
    for uuid in devices['instances']:
        put_untyped(backend, root, uuid, {root: {'resources': {'VCPU': 2, 'MEMORY_MB': 4096}}})
    done = reshaper.reshape_node(backend, 'cn', devices, snapshot_dir=str(tmp_path / 'snap'))
    assert done['status'] == 'reshaped'
    # the record as the rolling_reshape role keeps it: the device report's instances
    rec, warnings = report.collect_record(backend, {'node': 'cn', 'reshape': done, 'started': 1.0, 'finished': 2.0,
                                                    'instances': devices['instances']})
    assert warnings == []
    g61 = fakehost.instance_uuid('cn', 'instance-00000061')
    g62 = fakehost.instance_uuid('cn', 'instance-00000062')
    g63 = fakehost.instance_uuid('cn', 'instance-00000063')
    assert rec['consumer_names'][g61] == 'instance-00000061, vGPU NVIDIA L4-6Q on VF 0000:41:00.4'
    assert rec['consumer_names'][g62] == 'instance-00000062, vGPU NVIDIA L4-12Q on VF 0000:42:00.4'
    assert rec['consumer_names'][g63] == 'instance-00000063'
    data = report.build_report([rec])
    text = report.render_markdown(data)
    assert ('| %s (instance-00000061, vGPU NVIDIA L4-6Q on VF 0000:41:00.4) | CUSTOM_NVIDIA_L4_6Q | - '
            '| cn_0000:41:00.0: 1 |' % g61) in text
    html = report.render_html(data)
    assert 'instance-00000062, vGPU NVIDIA L4-12Q on VF 0000:42:00.4' in html


def test_consumer_names_of_a_vf_without_a_type_or_name():
    names = report.consumer_names({
        'A': {'name': None, 'vgpus': [{'address': '0000:41:01.1', 'physfn': '0000:41:00.0', 'type_id': None,
                                       'type': None}]},
        'b': {'name': 'g', 'vgpus': [{'address': '0000:41:00.4', 'type_id': 1152, 'type': None}]},
        'c': {'name': 'h', 'vgpus': 'not a list'},
        'd': 'not a mapping'})
    assert names == {'a': 'vGPU no type on VF 0000:41:01.1', 'b': 'g, vGPU type id 1152 on VF 0000:41:00.4',
                     'c': 'h'}
