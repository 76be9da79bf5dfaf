#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: fleet_slice
short_description: Claim a batch of nodes for one slice of a sliced roll, within the fleet's failure budget
version_added: 1.0.0
author: placement.upgrade contributors (@placement-upgrade)
description:
  - "Several controllers rolling one fleet at once (AWX job slices, C(playbooks/sliced_roll.yml)) agree
    through the run's record folder, C(<rolling_reshape_report_dir>/<run id>), which every slice must see
    (shared storage)."
  - "First the fleet's failure budget: the node records stored there with status V(failed) for O(run_id)
    are counted; when there are more than O(max_fail), nothing is claimed and RV(spent) is V(true) (the
    playbook then stops the slice)."
  - "Then each node of O(nodes) is claimed by creating C(claims/<node>.json) exclusively (C(O_CREAT|O_EXCL)):
    one slice wins a node, whatever the number of slices. A node claimed before, or with a record in the
    folder already (the canary's), is returned in RV(taken) and must be left alone."
  - "Each claim names its job: O(owner) and the ansible-playbook process that claimed (host, boot, pid and
    start time, RV(job)). A node claimed without a record in the folder was taken by a job that did not
    finish it: when that job's process is known to be gone (this host, this boot: a relaunch after a kill),
    the claim is taken over (RV(taken_over)); when it cannot be told (another host, an AWX job's container,
    a claim written before claims named their job), the batch claims nothing and the task fails naming
    each such claim and its file (RV(stale)), instead of leaving the node out of the roll."
  - "The run: with O(publish=true) (the pre-flight job) O(run_id) is written as the sliced roll's run in
    C(sliced-run.json) beside the run's folder (C(<rolling_reshape_report_dir>/sliced-run.json)). A slice
    given another run id fails before it claims anything. Without a published run, the first slice's run
    id is published so."
  - Runs where the record folder is (the controller); needs no Placement credentials.
options:
  dest:
    description:
      - The run's record folder, C(<rolling_reshape_report_dir>/<run id>), on storage every slice sees.
    type: path
    required: true
  nodes:
    description:
      - The nodes of the batch about to start (their inventory names).
    type: list
    elements: str
    required: true
  run_id:
    description:
      - The run id every slice shares (the workflow's pre-flight job makes it); only failed records of
        this run are counted.
      - It names the run's folder (C(<report dir>/<run id>)), so one with C(/) or C(\), C(.) or C(..), a
        control character or white space around it is refused before anything is read or written.
    type: str
    required: true
  owner:
    description:
      - Who claims, written in each claim (for example C(AWX job 1234)); shown to the others in RV(taken).
    type: str
    required: true
  publish:
    description:
      - Publish O(run_id) as the sliced roll's run (the pre-flight job does, before the slices run) and
        claim nothing; O(nodes) is then ignored. In check mode nothing is written (the pre-flight's task,
        in a check-mode job, sets C(check_mode) to V(false) to publish).
    type: bool
    default: false
  max_fail:
    description:
      - The number of failed nodes the whole fleet tolerates, over every slice; with V(0) the first
        failed node anywhere stops every slice at its next batch.
    type: int
    default: 0
extends_documentation_fragment:
  - placement.upgrade.attributes
  - placement.upgrade.attributes.HOST
notes:
  - "Consistency: a failed node's record is stored before its slice stops, and each slice reads the
    count before each of its batches; a slice can therefore start at most one batch after another
    slice's failure (the batch whose count it read before that record was stored). docs/awx.md
    gives the argument."
  - In check mode nothing is written; RV(claimed) lists the nodes that are free.
seealso:
  - module: placement.upgrade.fleet_report
'''

EXAMPLES = r'''
- name: Claim this batch's nodes, unless the fleet's failure budget is spent
  placement.upgrade.fleet_slice:
    dest: "{{ rolling_reshape_report_dir }}/{{ rolling_reshape_run_id }}"
    nodes: "{{ ansible_play_batch }}"
    run_id: "{{ rolling_reshape_run_id }}"
    owner: "AWX job {{ awx_job_id }}"
    max_fail: 0
  delegate_to: localhost
  run_once: true
  register: claim
'''

RETURN = r'''
spent:
  description: More failed nodes than O(max_fail) in the run; nothing was claimed, the slice must stop.
  returned: when O(publish=false)
  type: bool
  sample: false
claimed:
  description: The nodes of O(nodes) this task claimed (in check mode, the nodes that are free).
  returned: always
  type: list
  elements: str
  sample: [compute-03, compute-07]
taken:
  description:
    - The nodes of O(nodes) someone else has, as C(node), C(owner) (the claim's, empty for a recorded node)
      and C(why) (V(claimed), or C(already recorded in run ...)).
  returned: always
  type: list
  elements: dict
  sample: [{node: compute-01, owner: '', why: already recorded in run 20261125T203000Z-1a2b3c}]
failed_nodes:
  description: The nodes recorded as failed in the run so far, over every slice.
  returned: when O(publish=false)
  type: list
  elements: str
  sample: []
max_fail:
  description: The budget the count was weighed against (O(max_fail)).
  returned: when O(publish=false)
  type: int
  sample: 0
problems:
  description: Record files that could not be read (they are not counted).
  returned: when O(publish=false)
  type: list
  elements: str
  sample: []
stale:
  description:
    - The claims of the batch's nodes, without a record, whose job is not known to be running (the task
      then fails and claims nothing), as C(node), C(owner) (with its process), C(claimed) (epoch seconds)
      and C(file) (the claim's file, to remove once that job is known to have ended).
  returned: when O(publish=false)
  type: list
  elements: dict
  sample: []
taken_over:
  description: The nodes whose claim was taken over from a job that is no longer running, as C(node) and C(owner).
  returned: when O(publish=false)
  type: list
  elements: dict
  sample: [{node: compute-05, owner: 'AWX job 7 (ansible-playbook pid 4242 on ctl-1, started 2026-11-28T00:47:00Z)'}]
job:
  description:
    - The job this task claims for, as written in each claim - C(host), and when an ansible-playbook process
      runs this module on that host, its C(pid), C(start_ticks), C(started) (UTC) and C(boot_id).
  returned: when O(publish=false)
  type: dict
  sample: {host: ctl-1, pid: 4242, start_ticks: 123456, started: '2026-11-28T00:47:00Z', boot_id: 0d6b...}
published:
  description: The file the run was published in (O(publish=true)).
  returned: when O(publish=true)
  type: str
  sample: /var/lib/placement-upgrade/reports/sliced-run.json
'''

from ansible_collections.placement.upgrade.plugins.module_utils.common import ModuleSpec
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import slices
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet.records import check_run_id


def _run(module, backend, log):
    del backend
    params = module.params
    if params['max_fail'] < 0:
        module.fail_json(msg='max_fail must be 0 or more, not %d' % params['max_fail'])
    if not params['run_id'].strip():
        module.fail_json(msg='run_id is empty: every slice must be given the run id of the pre-flight job')
    check_run_id(params['run_id'])
    if params['publish']:
        # the pre-flight job: its run id is the sliced roll's, the slices check theirs against it
        if module.check_mode:
            return {'changed': False, 'published': slices.run_file(params['dest']), 'claimed': [], 'taken': [],
                    'msg': 'run %s would be published as the sliced roll\'s run' % params['run_id']}
        _written, doc = slices.publish_run(params['dest'], params['run_id'], params['owner'])
        where = slices.run_file(params['dest'])
        return {'changed': True, 'published': where, 'claimed': [], 'taken': [],
                'msg': 'run %s published as the sliced roll\'s run in %s' % (doc['run_id'], where)}
    out = slices.claim_batch(params['dest'], params['nodes'], params['owner'], params['run_id'],
                             max_fail=params['max_fail'], check_mode=module.check_mode)
    for problem in out['problems']:
        log('unreadable node record not counted: %s' % problem)
    for item in out['taken_over']:
        log('%s: claim taken over from %s, which is no longer running' % (item['node'], item['owner']))
    out['changed'] = bool(out['claimed']) and not module.check_mode
    if out.get('refused') or out['stale']:
        # nothing was claimed: the slice stops here, naming why (never a silent skip)
        failed = dict(out)
        failed.pop('refused', None)
        module.fail_json(**failed)
    out.pop('refused', None)
    return out


SPEC = ModuleSpec(
    auth=False,
    action=_run, open_backend=False,
    options=dict(
        dest=dict(type='path', required=True),
        nodes=dict(type='list', elements='str', required=True),
        run_id=dict(type='str', required=True),
        owner=dict(type='str', required=True),
        max_fail=dict(type='int', default=0),
        publish=dict(type='bool', default=False),
    ),
)


def main():
    SPEC.main()


if __name__ == '__main__':
    main()
