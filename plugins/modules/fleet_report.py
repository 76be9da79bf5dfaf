#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: fleet_report
short_description: Write the report of a rolling reshape (Markdown, HTML with provider-tree pictures, JSON)
version_added: 0.1.0
author: placement.upgrade contributors (@placement-upgrade)
description:
  - Stores what the roll recorded for some nodes, then renders the report of the whole run from
    every node stored so far in O(dest), so the report is complete after each batch and stays
    complete when the roll stops at a failing node.
  - For each new record the node's provider tree is read from Placement; the tree before is
    the snapshot the reshape wrote (reshaped nodes), the plan applied to the tree (check mode),
    or the tree as it is (skipped, deferred and failed nodes, which a reshape leaves untouched).
  - Writes C(report.md), C(report.html) (one self-contained page, every provider tree drawn
    before and after as inline SVG with usage bars, and a table of where each consumer's
    allocations moved) and C(summary.json) (fleet totals and each node's outcome) into
    O(dest), plus one C(nodes/<node>.json) per node. Files are replaced atomically.
options:
  dest:
    description:
      - Directory of this run's report. Created (mode C(0750)) when missing.
    type: path
    required: true
  records:
    description:
      - What the roll recorded for nodes since the last call; each is stored as
        C(nodes/<node>.json), replacing an earlier record of the same node.
      - Keys C(node) (inventory hostname), C(provider) (root provider name, default C(node)),
        C(status) (C(failed), or the C(status) of the reshape), C(reason), C(started) and
        C(finished) (epoch seconds), C(reshape) (the registered result of the
        M(placement.upgrade.reshape) task).
    type: list
    elements: dict
    default: []
  hosts:
    description:
      - Every node of the roll, in roll order. A node without a record is reported as not
        reached.
    type: list
    elements: str
    default: []
  mode:
    description:
      - V(plan) for a check-mode run (reports what would change), V(apply) otherwise.
    type: str
    choices: [apply, plan]
    default: apply
  title:
    description:
      - Title of the report.
    type: str
    default: Rolling reshape report
  run_id:
    description:
      - Identifier of the run, shown in the report.
    type: str
    default: ''
  read_trees:
    description:
      - Read each recorded node's provider tree from Placement (needs the backend options).
      - With V(false) the report shows outcomes and counts without tree pictures.
    type: bool
    default: true
  render:
    description:
      - Render the report files after storing O(records).
    type: bool
    default: true
  latest_link:
    description:
      - Point a C(latest) symbolic link in the parent directory of O(dest) at O(dest).
    type: bool
    default: true
extends_documentation_fragment:
  - placement.upgrade.auth
  - placement.upgrade.auth.ATTRIBUTES
  - placement.upgrade.auth.ACTIONGROUP
attributes:
  check_mode:
    support: full
    details: In check mode nothing is written; the summary is computed and returned. The
      P(placement.upgrade.rolling_reshape#role) role runs this task with C(check_mode=false), so a
      check-mode roll still writes its plan report.
  diff_mode:
    support: none
  idempotent:
    support: none
    details: Every call rewrites the report with the time it was generated.
notes:
  - Writing the report is the run's output, not managed state; the roles mark the task
    C(changed_when=false).
seealso:
  - module: placement.upgrade.reshape
'''

EXAMPLES = r'''
- name: Record this batch's nodes and render the report of the run
  placement.upgrade.fleet_report:
    embedded_db: /var/lib/placement-upgrade/placement.db
    dest: /var/lib/placement-upgrade/reports/20260101T120000Z
    records: "{{ ansible_play_batch | map('extract', hostvars, 'rolling_reshape_result') | list }}"
    hosts: "{{ ansible_play_hosts_all }}"
  delegate_to: localhost
  run_once: true
  check_mode: false
  changed_when: false

- name: Re-render a report from the records already stored, without Placement
  placement.upgrade.fleet_report:
    dest: /var/lib/placement-upgrade/reports/20260101T120000Z
    read_trees: false
'''

RETURN = r'''
paths:
  description: The files written (or that would be written in check mode).
  returned: success
  type: dict
  contains:
    markdown:
      description: Path of report.md.
      type: str
      returned: success
    html:
      description: Path of report.html.
      type: str
      returned: success
    summary:
      description: Path of summary.json.
      type: str
      returned: success
  sample: {markdown: /srv/reports/run1/report.md, html: /srv/reports/run1/report.html,
           summary: /srv/reports/run1/summary.json}
summary:
  description: The content of summary.json, totals and each node's outcome.
  returned: success
  type: dict
  sample:
    totals: {nodes: 12, consumers_moved: 21, allocations_moved: 24, providers_created: 16,
             statuses: {reshaped: 8, noop: 2, deferred: 2, failed: 0, unreached: 0}}
summary_line:
  description: One line with the fleet totals.
  returned: success
  type: str
  sample: "12 nodes: 8 reshaped, 2 skipped, 2 deferred, 0 failed; 24 allocations of 21 consumers moved; 18.2 s"
deferred_nodes:
  description: Deferred nodes with the reason.
  returned: success
  type: list
  elements: dict
  sample: [{node: compute-11, reason: "migration in flight: ..."}]
failed_nodes:
  description: Failed nodes with the reason (the node the roll stopped at).
  returned: success
  type: list
  elements: dict
  sample: []
unreached_nodes:
  description: Nodes of O(hosts) without a record (the roll did not reach them).
  returned: success
  type: list
  elements: str
  sample: []
stored:
  description: The node record files written by this call.
  returned: success
  type: list
  elements: str
log:
  description: Warnings met while collecting the records (missing snapshot, provider not found).
  returned: always
  type: list
  elements: str
'''

import os
import traceback

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.placement.upgrade.plugins.module_utils.common import (
    backend_options,
    error_result,
    placement_argument_spec,
    placement_module_kwargs,
)
from ansible_collections.placement.upgrade.plugins.module_utils._placement import factory, report
from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import (
    ConfigurationError,
    PlacementError,
)


def _latest_link(dest):
    parent = os.path.dirname(os.path.abspath(dest))
    link = os.path.join(parent, 'latest')
    target = os.path.basename(os.path.abspath(dest))
    if os.path.islink(link) and os.readlink(link) == target:
        return link
    if os.path.exists(link) and not os.path.islink(link):
        return None
    tmp = '%s.%d' % (link, os.getpid())
    if os.path.lexists(tmp):
        os.unlink(tmp)
    os.symlink(target, tmp)
    os.rename(tmp, link)
    return link


def run(module, log):
    params = module.params
    dest = params['dest']
    mode = params['mode']
    collected = []
    backend = None
    records = [r for r in params['records'] if isinstance(r, dict) and (r.get('node') or r.get('provider'))]
    try:
        if records and params['read_trees']:
            try:
                backend = factory.get_backend(backend_options(params), create=False)
            except ConfigurationError as exc:
                log('not reading provider trees: %s' % exc.detail)
        for record in records:
            rec, warnings = report.collect_record(backend, record, mode=mode)
            for warning in warnings:
                log(warning)
            collected.append(rec)
    finally:
        if backend is not None:
            backend.close()
    stored = []
    if not module.check_mode:
        for rec in collected:
            stored.append(report.save_record(dest, rec))
    existing, problems = report.load_records(dest)
    for problem in problems:
        log('unreadable node record skipped: %s' % problem)
    by_node = dict((r.get('node'), r) for r in existing)
    for rec in collected:
        by_node[rec['node']] = rec
    data = report.build_report(list(by_node.values()), hosts=params['hosts'], title=params['title'],
                               mode=mode, run_id=params['run_id'])
    paths = {
        'markdown': os.path.join(dest, 'report.md'),
        'html': os.path.join(dest, 'report.html'),
        'summary': os.path.join(dest, 'summary.json'),
    }
    changed = bool(stored)
    if params['render'] and not module.check_mode:
        paths = report.write_report(dest, data)
        changed = True
        if params['latest_link']:
            try:
                _latest_link(dest)
            except OSError as exc:
                log('cannot update the latest link next to %s: %s' % (dest, exc))
    line = report.summary_line(data)
    return dict(changed=changed, paths=paths, summary=report.summary(data), summary_line=line,
                deferred_nodes=data['deferred'], failed_nodes=data['failed'], unreached_nodes=data['unreached'],
                stored=stored, msg=line)


def main():
    module = AnsibleModule(
        argument_spec=placement_argument_spec(
            dest=dict(type='path', required=True),
            records=dict(type='list', elements='dict', default=[]),
            hosts=dict(type='list', elements='str', default=[]),
            mode=dict(type='str', choices=['apply', 'plan'], default='apply'),
            title=dict(type='str', default='Rolling reshape report'),
            run_id=dict(type='str', default=''),
            read_trees=dict(type='bool', default=True),
            render=dict(type='bool', default=True),
            latest_link=dict(type='bool', default=True),
        ),
        **placement_module_kwargs()
    )
    messages = []

    def log(message):
        messages.append(message)
        module.warn(message)

    try:
        result = run(module, log)
    except PlacementError as exc:
        failed = error_result(exc)
        failed['log'] = messages
        module.fail_json(**failed)
    except (OSError, IOError) as exc:
        module.fail_json(msg='Cannot write the report in %s: %s' % (module.params['dest'], exc), log=messages)
    except Exception as exc:  # pylint: disable=broad-except
        module.fail_json(msg='Unexpected error (%s): %s' % (type(exc).__name__, exc),
                         exception=traceback.format_exc(), log=messages)
    result['log'] = messages
    module.exit_json(**result)


if __name__ == '__main__':
    main()
