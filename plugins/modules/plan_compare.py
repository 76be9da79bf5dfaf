#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: plan_compare
short_description: Compare a rehearsal of the rolling reshape with the plan against production
version_added: 1.0.0
author: placement.upgrade contributors (@placement-upgrade)
description:
  - "Reads two report folders written by the P(placement.upgrade.rolling_reshape#role) role (the
    C(nodes/) records of a run): the rehearsal (a roll on a copy made with
    M(placement.upgrade.placement_export)) and a plan against production (C(playbooks/plan.yml) or a
    C(--check) run, at the moment of the real roll), and says whether the real roll will do what
    the rehearsal did."
  - "For each node it compares: the outcome (a reshape, nothing, deferred, failed; V(reshaped) in a
    roll and V(planned) in a plan are the same outcome); the tree each started from (providers,
    parents, inventories, traits, every consumer's allocations: what changed in production since
    the export); the child providers created; the moves of each consumer (per resource class, the
    amounts it leaves and gains on each provider); and the tree after (inventories, traits,
    allocations)."
  - Providers are compared by uuid and shown by name; generations and usages are not compared.
  - Runs where the report folders are (the controller); needs no Placement credentials.
options:
  rehearsal:
    description:
      - The rehearsal's report folder, C(<rolling_reshape_report_dir>/<run_id>) or its C(latest) link.
    type: path
    required: true
  plan:
    description:
      - The report folder of the plan against production (check mode), as for O(rehearsal).
    type: path
    required: true
  fail_on_difference:
    description:
      - Fail the task when the plan differs from the rehearsal (the differences are still returned).
      - With V(false) the task succeeds and RV(equal) says it.
    type: bool
    default: true
extends_documentation_fragment:
  - placement.upgrade.attributes
  - placement.upgrade.attributes.HOST
notes:
  - The module only reads the two folders and never reports a change.
seealso:
  - module: placement.upgrade.placement_export
  - module: placement.upgrade.fleet_report
'''

EXAMPLES = r'''
- name: Compare the rehearsal with today's plan against production
  placement.upgrade.plan_compare:
    rehearsal: /srv/rehearsal/reports/latest
    plan: ~/placement-upgrade/reports/latest
  delegate_to: localhost
  run_once: true
'''

RETURN = r'''
equal:
  description: Whether the plan against production is the plan the rehearsal executed, on every node.
  returned: always
  type: bool
  sample: false
compared:
  description: The nodes found in either folder.
  returned: always
  type: list
  elements: str
  sample: [compute-01, compute-02]
differences:
  description:
    - Every difference, as C(node), C(what) (V(node), V(status), V(before), V(created), V(moves),
      V(after)), C(item) (the provider, consumer, child or outcome), C(rehearsal) and C(production)
      (the value on each side, null when absent there).
  returned: always
  type: list
  elements: dict
  sample:
    - node: compute-02
      what: before
      item: consumer 0d1b...
      rehearsal: null
      production: {compute-02: {VCPU: 2, MEMORY_MB: 2048}}
lines:
  description: One line of text per difference.
  returned: always
  type: list
  elements: str
'''

from ansible_collections.placement.upgrade.plugins.module_utils.common import ModuleSpec
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import compare


def _run(module, backend, log):
    del backend, log
    rehearsal, _summary = compare.load_run(module.params['rehearsal'], 'rehearsal')
    plan, _summary = compare.load_run(module.params['plan'], 'plan')
    result = compare.compare_runs(rehearsal, plan)
    out = {'changed': False, 'equal': result['equal'], 'compared': result['compared'],
           'differences': result['differences'], 'lines': compare.lines(result), 'msg': compare.message(result)}
    if not result['equal'] and module.params['fail_on_difference']:
        module.fail_json(**out)
    return out


SPEC = ModuleSpec(
    auth=False,
    action=_run, open_backend=False,
    options=dict(
        rehearsal=dict(type='path', required=True),
        plan=dict(type='path', required=True),
        fail_on_difference=dict(type='bool', default=True),
    ),
)


def main():
    SPEC.main()


if __name__ == '__main__':
    main()
