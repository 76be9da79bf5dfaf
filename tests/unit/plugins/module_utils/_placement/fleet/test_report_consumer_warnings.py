# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 40 section 3: a consumer warning never contradicts the same report's deferral about the same
consumer.  An evacuation's instance holds allocations on its source (which cannot see the other
tree: the consumer is read there only partially) and on its destination (deferred: two trees).
The source's pass says "a migration in flight or an orphan ... --delete removes it"; the report
must not offer a delete for a consumer it defers as a move in flight."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import report
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import inflight

INST = '6f1c1b2e-0d4e-4a4b-9a2e-5b3c2d1e0f11'
SRC, DST = 'a0000000-0000-4000-8000-00000000000a', 'b0000000-0000-4000-8000-00000000000b'


def _state(root, allocations, partial):
    body = {'allocations': allocations, 'consumer_generation': 1, 'project_id': 'p', 'user_id': 'u'}
    if partial:
        body['partial'] = True
    return {'providers': {root: {'name': root, 'inventories': {}, 'parent_provider_uuid': None}},
            'allocations': {INST: body}}


def _records():
    # the source: the instance is no domain there, holds nothing the reshape moves -> a remark
    _r, src_remarks, _n = inflight.find(_state(SRC, {SRC: {'resources': {'VCPU': 2}}}, True), 'src', [SRC],
                                        touched=('VGPU',), instances=[], root_uuid=SRC)
    # the destination: the instance holds VGPU here and on the source's tree -> deferred
    reasons, _rm, named = inflight.find(_state(DST, {DST: {'resources': {'VGPU': 1}},
                                                     SRC: {'resources': {'VCPU': 2}}}, False),
                                        'dst', [DST], touched=('VGPU',), instances=[INST], root_uuid=DST)
    assert named == [INST] and src_remarks and '--delete' in src_remarks[0]
    return [{'node': 'src', 'status': 'noop', 'warnings': src_remarks},
            {'node': 'dst', 'status': 'deferred', 'reason': reasons[0]}]


def test_no_delete_offered_for_a_consumer_the_report_defers_as_in_flight():
    data = report.build_report(_records(), hosts=['src', 'dst'])
    src = data['nodes'][[e['node'] for e in data['nodes']].index('src')]
    said = ' '.join(src['warnings'])
    assert INST in said and '--delete' not in said and 'orphan' not in said, said
    assert ('consumer %s holds VCPU 2 on this node; dst is deferred for the same consumer, a move in flight '
            '(its reason is in its section of the report)' % INST) in said, said
    assert 'none is to be deleted' in said and 'it is left as it is' not in said
    text = report.render_markdown(data) + ' '.join(report.summary(data)['nodes'][0]['warnings'])
    assert 'placement audit --resource_provider %s --verbose --delete' % SRC not in text
    # without the deferral, the warning is the pass's, its commands included
    alone = report.build_report(_records()[:1], hosts=['src'])
    assert '--delete' in ' '.join(alone['nodes'][0]['warnings'])
