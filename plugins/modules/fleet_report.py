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
version_added: 1.0.0
author: placement.upgrade contributors (@placement-upgrade)
description:
  - Stores what the roll recorded for some nodes, then renders the report of the whole run from
    every node stored so far in O(dest), so the report is complete whenever it is rendered and
    stays complete when the roll stops at a failing node. With O(summarize=false) it only stores
    (the rolling role stores each node's record in the node's pass, and renders once at the end).
  - For each new record the node's provider tree is read from Placement; the tree before is
    the snapshot the reshape wrote (reshaped nodes, and failed nodes whose reshape was applied
    before the failure), the plan applied to the tree (check mode), or the tree as it is
    (skipped and deferred nodes, and failed nodes the reshape left untouched).
  - The report is derived from what happened, not from what the play expected. A node whose
    tree this run changed is marked touched (RV(touched_nodes)), whatever failed around it; a
    node of O(hosts) the roll wrote no record of, but that has a snapshot of this run in
    O(snapshot_dir), is reported as reshaped from that snapshot and Placement.
  - Placement being unreachable (or one node's tree failing to read) does not fail the task;
    the records are stored, the report is rendered from them, and it names the nodes whose
    trees were not read and why (RV(unread_nodes)). A record that cannot be read or drawn is
    skipped or shown without trees, with a warning naming it.
  - Writes C(report.md), C(report.html) (one self-contained page, every provider tree drawn
    before and after as inline SVG with usage bars, and a table of where each consumer's
    allocations moved) and C(summary.json) (fleet totals and each node's outcome) into
    O(dest), plus one C(nodes/<node>.json) per node. Files are replaced atomically (written,
    fsync'ed, renamed) with mode C(0600).
  - The report says what it ran against (O(context), the Placement backend and its
    microversion, the collection version) and what to do next (RV(next_steps), with the rerun,
    rollback and fix commands).
  - C(report.html) and C(report.md) are rendered from Jinja2 templates, the collection's own
    (C(templates/fleet_report/) in the collection) or the operator's (O(html_template),
    O(markdown_template)). The action plugin of this module renders them on the controller,
    where ansible-core provides Jinja2, whatever Python the module runs with; the module
    gathers the data (it reads Placement) and stores the node records. When the task runs on
    the controller itself (the local connection, no become, no task C(environment), the
    controller's own Python as interpreter) the module's code runs inside the action plugin,
    without a module process.
options:
  dest:
    description:
      - Directory of this run's report. Created (mode C(0700)) when missing.
      - One directory per run; when it already holds node records of another run (another
        O(run_id)), the task fails instead of mixing two runs in one report.
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
      - A record that is not a mapping naming its node, or whose fields have the wrong types (a
        C(started) that is not a number, C(reshape) that is not a mapping, ...), does not fail the
        task - it is listed in RV(bad_records) naming the node and the field, shown without trees
        (or left out when it names no node), and the other records are reported.
    type: list
    elements: raw
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
      - Identifier of the run, shown in the report and stored in each node record.
      - When set, every node record already in O(dest) must be of this run. When empty, the
        records in O(dest) must agree on one run id, which is then the report's.
      - The same id given to M(placement.upgrade.reshape) (its O(placement.upgrade.reshape#module:run_id))
        is stored in its snapshots, which is how O(snapshot_dir) is searched.
      - It names the run's folder (C(<report dir>/<run id>)), so one with C(/) or C(\), C(.) or C(..), a
        control character or white space around it is refused before anything is read or written.
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
  summarize:
    description:
      - With V(false), only store O(records) (each read with its tree) in O(dest) and return
        RV(stored); no other stored record is read, no report is built or rendered, and the
        summary keys are not returned. The cost then does not grow with the records already
        stored; the rolling role stores each node's record with it, in the node's own pass, and
        renders the report once at the end of the run.
      - Records of another run already in O(dest) are refused as with V(true) (the node's own
        stored record, or one stored record, is read for its run id).
    type: bool
    default: true
  html_template:
    description:
      - A Jinja2 template to render C(report.html) with, instead of the collection's
        C(templates/fleet_report/report.html.j2). A path on the controller; a relative path is
        searched like the O(ansible.builtin.template#module:src) of a template task (the
        C(templates/) folders of the role and the playbook, then the playbook's folder).
      - Rendered with autoescape (every value is HTML-escaped unless marked C(safe)). The template
        gets C(report) (the report data, the keys of RV(summary) plus each node's trees, moves
        and verification) and the helpers the shipped template uses. Its folder is searched
        first, then the collection's, so it can C({% import 'tree.svg.j2' as svg %}) (the
        provider-tree pictures) and C({% include 'report.css' %}).
    type: path
  markdown_template:
    description:
      - A Jinja2 template to render C(report.md) with, instead of the collection's
        C(templates/fleet_report/report.md.j2); found as O(html_template) is.
      - Not autoescaped; the C(md) filter escapes text for Markdown, C(code) makes inline code.
    type: path
  return_report:
    description:
      - Set by the action plugin of this module, not by a task. Return the report data in
        RV(report) and leave C(report.md), C(report.html), C(summary.json) and the C(latest)
        link to the caller (the action plugin renders them on the controller and writes them).
    type: bool
    default: false
  files:
    description:
      - Set by the action plugin of this module, not by a task. The report files the action
        plugin rendered (C(report.md), C(report.html), C(summary.json) by name), written into
        O(dest) (atomically, mode C(0600)) with the C(latest) link of O(latest_link); nothing
        else is done.
    type: dict
  latest_link:
    description:
      - Point a C(latest) symbolic link in the parent directory of O(dest) at O(dest).
    type: bool
    default: true
  snapshot_dir:
    description:
      - Directory of the reshape snapshots (the O(placement.upgrade.reshape#module:snapshot_dir) of
        the roll).
      - For every node of O(hosts) without a record (neither given now nor stored in O(dest)),
        the snapshots of its root provider written by this run (C(run_id) equal to O(run_id))
        are looked up; a node that has one was reshaped by this run although the roll recorded
        nothing (for example, the roll was aborted in its batch). It is reported as reshaped,
        the tree before from the snapshot and the tree after from Placement, with a reason
        saying so, and its derived record is stored.
      - A failed node whose reshape result does not show an applied reshape is compared with
        its snapshot of this run, if any; it is touched when its tree is not the snapshot's.
      - Needs O(run_id). Not used with O(mode=plan).
    type: path
  providers:
    description:
      - Root provider name of a node, by inventory hostname, for the nodes whose root provider
        is not named after the host (used with O(snapshot_dir); a record's C(provider) says it
        for recorded nodes).
    type: dict
    default: {}
  context:
    description:
      - What the run is, shown in the header of the report and in C(summary.json).
      - Only the keys C(awx_job_id), C(awx_job_template), C(playbook), C(check_mode), C(plan),
        C(limit), C(inventory) and C(ansible_playbook) with a plain value are kept; other keys are
        dropped with a warning, so no secret reaches the report.
      - C(inventory) (a path, or a list of inventory sources) is used in the commands of
        RV(next_steps); C(INVENTORY) stands for it when not given.
      - C(playbook) V(placement.upgrade.rehearse) with an embedded store as the backend is a rehearsal
        on a copy of production (C(playbooks/rehearse.yml) gives it); RV(next_steps) and the nodes then
        give no command of the rollback or of the roll, which would act on production, and say so.
      - C(ansible_playbook) is how those commands start, in place of C(ansible-playbook) (shell
        text, for example C(ANSIBLE_CONFIG=/srv/site/ansible.cfg /opt/venv/bin/ansible-playbook)).
      - The module adds what it knows itself, C(backend) (V(embedded) with C(embedded_db), or
        V(rest) with C(cloud) when it is a name and C(endpoint)), C(placement_microversion) (the
        one negotiated when it reads Placement, else the one the node records were stored with; the
        embedded store's is the one it speaks) and C(collection_version). Credentials
        (O(auth), a O(cloud) dict) are never included.
    type: dict
    default: {}
attributes:
  action:
    details: The action plugin runs the module for the data and renders the report on the controller.
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
extends_documentation_fragment:
  - placement.upgrade.auth
  - placement.upgrade.attributes
  - placement.upgrade.attributes.PLACEMENT
  - placement.upgrade.attributes.ACTION
notes:
  - Writing the report is the run's output, not managed state; the roles mark the task
    C(changed_when=false).
  - With O(mode=plan) a failed node is one that would stop a real roll; those nodes are listed
    first and returned in RV(would_stop), so a plan run can fail at its end.
seealso:
  - module: placement.upgrade.reshape
'''

EXAMPLES = r'''
# node_record: a fact each node of the batch set to {node, status, reshape (its reshape task's result)}
- name: Record this batch's nodes and render the report of the run
  placement.upgrade.fleet_report:
    embedded_db: /var/lib/placement-upgrade/placement.db
    dest: /var/lib/placement-upgrade/reports/20260101T120000Z
    records: "{{ ansible_play_batch | map('extract', hostvars, 'node_record') | list }}"
    hosts: "{{ ansible_play_hosts_all }}"
    run_id: 20260101T120000Z
    snapshot_dir: /var/lib/placement-upgrade/snapshots
    context:
      awx_job_id: "{{ awx_job_id | default('') }}"
      awx_job_template: "{{ awx_job_template_name | default('') }}"
      playbook: placement.upgrade.rolling_reshape
      check_mode: "{{ ansible_check_mode }}"
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
  description:
    - The content of summary.json, totals and each node's outcome.
    - Keys C(title), C(mode), C(run_id), C(context) (what the report ran against, see
      O(context)), C(started), C(finished), C(stopped), C(totals), C(deferred), C(failed),
      C(would_stop), C(unreached), C(touched), C(unread), C(next_steps) (as the return values
      of the same names) and C(nodes).
    - Each of C(nodes) has C(node), C(provider), C(status), C(label), C(outcome) (for example
      C(failed after its reshape was applied), followed by its rollback command, or
      C(failed, left untouched)),
      C(touched), C(derived), C(unread), C(reason), C(duration), C(moved), C(snapshot),
      C(rollback) (the rollback command of a node this run reshaped and that has a snapshot),
      C(no_rollback) (why a node this run changed has no rollback command), C(written) (what its
      reshape wrote, C(reshaper) whether its C(POST /reshaper) was applied, C(traits) and C(children)),
      C(warnings) (its discovery's and its reshape's), C(retries), C(created), C(verification_failed),
      C(figures) (the counts of its pass's journal, see RV(placement.upgrade.reshape#module:journal)),
      C(journal_mode) (C(would), C(did) or C(restored); empty for a record without a journal) and
      C(journal) (its journal's sentences, in those words).
    - C(totals.figures) sums the nodes' C(figures) (C(consumers_moved), C(allocations_moved) and
      C(providers_created) are copied from it), and C(totals.words) is the mode whose words the run's
      figures are said in (C(would) for a plan, C(restored) when every journal is a rollback's, else C(did)).
    - A node's C(status) is C(updated) (label C(updated without a reshape)) when its reshape only wrote
      what the layout missed (traits such as C(OWNER_NOVA) on a child made by an older nova, or empty
      children) and sent no C(POST /reshaper); C(totals.statuses) counts it apart from C(reshaped).
  returned: success, unless O(summarize=false)
  type: dict
  sample:
    totals: {nodes: 12, touched: 8, consumers_moved: 21, allocations_moved: 24, providers_created: 16,
             statuses: {reshaped: 8, noop: 2, deferred: 2, failed: 0, unreached: 0}, words: did,
             figures: {consumers_moved: 21, allocations_moved: 24, allocations_created: 3, allocations_removed: 0,
                       allocations_converted: 2, providers_created: 16, providers_removed: 0, providers_left: 0,
                       inventories_changed: 30, traits_changed: 8}}
    context: {playbook: placement.upgrade.rolling_reshape, backend: rest, cloud: overcloud,
              endpoint: "https://placement.example.com/", placement_microversion: "1.39",
              collection_version: 1.0.0}
summary_line:
  description:
    - One line with the fleet totals.
    - "With O(mode=plan) it reads C(<n> nodes (plan): X would reshape, Y already done, Z deferred,
      W would stop the roll; ...)."
    - The figures after the counts of nodes are the journals' (C(summary.totals.figures)), in the words of
      C(summary.totals.words) (C(to move), C(moved), C(moved back), C(left behind)); those that are 0 are left
      out, except the allocations and consumers moved.
  returned: success, unless O(summarize=false)
  type: str
  sample: "12 nodes: 8 reshaped, 2 skipped, 2 deferred, 0 failed; 24 allocations of 21 consumers moved; allocations
    created 3, allocations converted 2, child providers created 16, inventories changed 30, providers whose traits
    changed 8; 18.2 s"
deferred_nodes:
  description: Deferred nodes with the reason.
  returned: success, unless O(summarize=false)
  type: list
  elements: dict
  sample: [{node: compute-11, reason: "migration in flight: ..."}]
failed_nodes:
  description:
    - Failed nodes with the reason (the node the roll stopped at), and C(touched), true when the
      node failed after its reshape was applied.
  returned: success, unless O(summarize=false)
  type: list
  elements: dict
  sample: [{node: compute-07, reason: "post task failed (task: Restart nova-compute)", touched: true}]
would_stop:
  description:
    - With O(mode=plan), the nodes that would stop a real roll (the failed ones), with the
      reason; always empty with O(mode=apply).
  returned: success, unless O(summarize=false)
  type: list
  elements: dict
  sample: [{node: compute-03, reason: "strict ownership: consumer 5f1e... holds VGPU no guest explains"}]
touched_nodes:
  description: The nodes whose provider tree this run changed (reshaped, rolled back, or failed after the reshape).
  returned: success, unless O(summarize=false)
  type: list
  elements: str
  sample: [compute-01, compute-02]
unread_nodes:
  description: The nodes whose provider tree could not be read from Placement, with why.
  returned: success, unless O(summarize=false)
  type: list
  elements: dict
  sample: [{node: compute-04, reason: "cannot use Placement: Placement could not be reached ..."}]
next_steps:
  description:
    - What to do next, one line each, with the command to run (C(INVENTORY) stands for the
      inventory unless O(context) names it).
    - The rerun command for the deferred nodes, the fix-then-rerun command of a node that
      stopped (or would stop) the roll, the rerun command of the nodes not reached, and the
      rollback command of the nodes this run reshaped.
  returned: success, unless O(summarize=false)
  type: list
  elements: str
  sample:
    - "Rerun the deferred node after its reason is cleared: ansible-playbook -i INVENTORY
      placement.upgrade.rolling_reshape --limit compute-11"
    - "To undo this run on the nodes it reshaped (only if needed), roll them back: ansible-playbook
      -i INVENTORY placement.upgrade.rollback -e rollback_nodes=compute-01,compute-02"
unreached_nodes:
  description: Nodes of O(hosts) without a record (the roll did not reach them).
  returned: success, unless O(summarize=false)
  type: list
  elements: str
  sample: []
bad_records:
  description:
    - The node records that are badly shaped or unreadable (given in O(records), or stored in
      C(nodes/) of O(dest)), each with C(node) (null when it names none), C(file) (the stored
      file, or null for a given record) and C(problem) (the field at fault and what it got).
    - They do not fail the task; the rest of the report is written, and RV(summary_line) says how
      many there were.
  returned: success
  type: list
  elements: dict
  sample: [{node: compute-07, file: null, problem: "record.started must be a finite number, got str"}]
report:
  description:
    - The report data the templates are rendered from, only with O(return_report) (the action
      plugin removes it from the task result).
  returned: when O(return_report=true)
  type: dict
stored:
  description: The node record files written by this call.
  returned: success
  type: list
  elements: str
log:
  description:
    - Warnings met while collecting the records (missing snapshot, provider not found,
      Placement not reachable, a record skipped or derived from its snapshot).
  returned: always
  type: list
  elements: str
leftovers_removed:
  description:
    - The temporary files an interrupted earlier write of the files this task writes (the node
      records in C(nodes/), report.md, report.html, summary.json, the C(latest) link) left in their
      directory (C(.<name>.<random>.tmp), C(latest.<pid>), older than the task), removed before this
      write; a warning names them too.
  returned: when any was removed
  type: list
  elements: str
  sample: [/var/lib/placement-upgrade/reports/20260101T120000Z/nodes/.compute-01.json.k3j4h5g6.tmp]
'''

from ansible_collections.placement.upgrade.plugins.module_utils.common import ModuleSpec, backend_options
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import report


def _action(module, _backend, log):
    """run_module's action (the core opens Placement itself, and goes on without it)."""
    def warn(message):
        log(message)
        module.warn(message)

    return report.run(module.params, backend_options(module.params), module.check_mode, warn)


SPEC = ModuleSpec(
    action=_action, open_backend=False,
    options=dict(
        dest=dict(type='path', required=True),
        records=dict(type='list', elements='raw', default=[]),
        hosts=dict(type='list', elements='str', default=[]),
        mode=dict(type='str', choices=['apply', 'plan'], default='apply'),
        title=dict(type='str', default='Rolling reshape report'),
        run_id=dict(type='str', default=''),
        read_trees=dict(type='bool', default=True),
        render=dict(type='bool', default=True),
        summarize=dict(type='bool', default=True),
        latest_link=dict(type='bool', default=True),
        snapshot_dir=dict(type='path'),
        providers=dict(type='dict', default={}),
        context=dict(type='dict', default={}),
        html_template=dict(type='path'),
        markdown_template=dict(type='path'),
        return_report=dict(type='bool', default=False),
        files=dict(type='dict'),
    ),
)


def main():
    SPEC.main()


if __name__ == '__main__':
    main()
