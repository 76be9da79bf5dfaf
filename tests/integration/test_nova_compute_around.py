# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rolling role around nova-compute, with ansible-playbook on a simulated fleet:

* a nova-compute that comes back and writes to the tree it finds (here: a post hook standing in
  for it, changing the root's inventory) fails the node, naming the provider whose generation
  moved, and stops the roll;
* rolling_reshape_nova_service=always where nova cannot be reached (the embedded store) stops
  the roll at the first node that has something to reshape, with the reason, before anything
  is written.

(nova's own os-services API is driven in tests/nova_oracle/test_nova_services.py.)
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

import simfleet
from test_fleet_playbook import playbook, statuses, summary, trees

pytestmark = pytest.mark.slow

NOVA_WRITES = '''---
- name: nova-compute comes back and finds something to change (a second reshape, say)
  placement.upgrade.inventory:
    resource_provider: "{{ rolling_reshape_provider_name }}"
    resource_class: MEMORY_MB
    total: 1024
  delegate_to: localhost
  when: inventory_hostname == 'compute-01'
'''


def test_a_tree_changed_after_the_reshape_fails_the_node(tmp_path):
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=3)
    hook = tmp_path / 'nova_writes.yml'
    hook.write_text(NOVA_WRITES)
    rc, out = playbook(fleet, 'rolling_reshape.yml', extra={'rolling_reshape_post_tasks': str(hook)})
    assert rc != 0, out
    assert 'The roll stops at compute-01: compute-01: the tree changed after the reshape, while ' \
           'nova-compute came back' in out, out
    assert 'compute-01 generation' in out
    assert statuses(fleet)['compute-01'] == 'failed'
    # the reshape itself stays applied (what nova-compute did is for the operator to look at)
    root = trees(fleet)['compute-01']['providers'][fleet['nodes'][0]['uuid']]
    assert 'VGPU' not in root['inventories'] and root['inventories']['MEMORY_MB']['total'] == 1024


def test_nova_service_always_without_nova_stops_before_any_write(tmp_path):
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=2)
    before = trees(fleet)
    rc, out = playbook(fleet, 'rolling_reshape.yml', extra={'rolling_reshape_nova_service': 'always'})
    assert rc != 0, out
    assert 'nova-compute of compute-01 (nova\'s service host compute-01) cannot be taken out of service: ' \
           'compute_service needs nova\'s compute API' in out, out
    assert trees(fleet) == before
    assert [n['status'] for n in summary(fleet)['nodes'] if n['node'] == 'compute-01'] == ['failed']
