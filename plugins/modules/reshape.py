#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: reshape
short_description: Reshape a compute node's Placement tree into per-device child providers
version_added: 1.0.0
author: placement.upgrade contributors (@placement-upgrade)
description:
  - Moves inventory such as C(VGPU) from a compute node's root resource provider to one child
    provider per device (the names and classes nova itself uses), together with every
    allocation of that inventory, in ONE atomic C(POST /reshaper) call.
  - The layout comes from the compute node's device report (the C(devices) result of
    M(placement.upgrade.device_info)); each consumer's moved allocation goes to the child of
    the device it uses (an instance with two mdevs on GPU A and one on GPU B gets 2 on A and 1
    on B).
  - Where the layout cannot be discovered (an offline node, a driver that reports nothing, a
    custom resource class), O(moves) gives the reshape as explicit move records instead of
    O(devices) (and O(consumers) says where a consumer's units go when a class is split over
    several targets); the plan, dry run, snapshot, reshape, verification and rollback are the
    same. See C(docs/explicit-moves.md) in the collection.
  - Before the reshape, the node's tree and the full allocations of its consumers are saved
    as a JSON snapshot in O(snapshot_dir); O(state=rolled_back) restores it.
  - After a reshape or a rollback the tree is read again and verified; a failed check fails
    the task. O(state=verified) runs the checks alone.
  - A reshape that does not happen (refused, conflicts until O(conflict_retries) gives up, a
    failed child create or snapshot, or a move in flight seen late) removes the child providers
    it created (compare-and-delete), or names in the message each one it left and why.
  - A C(POST /reshaper) whose answer is lost (dropped connection, 502, timeout) is settled by
    reading the node back; applied is reported as reshaped, not applied is fenced and sent again,
    and when Placement cannot be read the task fails saying the outcome is unknown and what to do.
  - Runs where Placement is reached (use C(delegate_to) the controller); it does not touch
    the compute node itself. Delegated to the controller itself (the local connection, no
    become, no task C(environment), the controller's own Python as interpreter) the action
    plugin runs the module's code inside ansible-playbook's worker instead of starting a module
    process, with the same options, checks, result, check and diff mode.
  - See C(docs/reshape.md) in the collection for the plan, the ownership rules, verification
    and rollback, with a worked example.
options:
  root_provider:
    description:
      - Name or UUID of the compute node's ROOT resource provider (nova names it after the
        hypervisor hostname).
    type: str
    required: true
    aliases: [compute_node]
  devices:
    description:
      - The device report of the node, as returned in RV(placement.upgrade.device_info#module:devices)
        (the whole registered result is accepted too).
      - Required for O(state=reshaped) and O(state=verified), unless O(moves) is given.
      - Mutually exclusive with O(moves).
    type: dict
  moves:
    description:
      - The reshape as explicit move records, instead of the device report O(devices) (mutually
        exclusive with it); for a node whose layout cannot be discovered. O(layout) and
        O(ownership) are not used with it.
      - Each record moves units of one or more resource classes off the node's root provider
        onto a target provider; a class moves off the root whole (the records of a class add up
        to the root's total of it).
      - Each target gets the root's inventory record of the class with C(total) set to the
        units moved to it and C(max_unit) no larger than that.
      - A consumer's units of a class that goes to one target go there; a class split over
        several targets needs O(consumers), or O(ownership_policy=pack); otherwise the task fails
        naming the consumers.
      - Once the reshape is done, the same records describe the node (the root holds none of the
        moved classes, each target holds what the records say), so a rerun changes nothing and
        O(state=verified) checks the tree against them.
    type: list
    elements: dict
    suboptions:
      from_resource_provider:
        description:
          - Name or UUID of the provider the resources move off; the node's root provider
            (O(root_provider)).
        type: str
        required: true
      to_resource_provider:
        description:
          - Name or UUID of the provider the resources move to, in the node's tree (not the root).
          - A name no provider has is created as a child of the root (with a deterministic UUID);
            a provider of another tree, or a UUID no provider has, is refused.
        type: str
        required: true
      moved_resources:
        description:
          - "Units moved, per resource class: C({VGPU: 4}). A class is a standard one or
            C(CUSTOM_*) (created when missing)."
        type: dict
        required: true
      traits:
        description:
          - Traits the target gets (added to those it has; C(CUSTOM_*) ones are created when
            missing).
        type: list
        elements: str
  consumers:
    description:
      - "With O(moves): where each consumer's units go when a class is split over several
        targets, as C({consumer uuid: {target name or uuid: {RESOURCE_CLASS: units}}})."
      - The units of a class must add up to what the consumer holds of it on the root, the
        targets must be targets of that class in O(moves), and the targets' capacity holds them.
      - A consumer left out is packed with O(ownership_policy=pack), and named in the failure
        with V(strict).
    type: dict
  layout:
    description:
      - Per device kind (C(gpu), C(pci), C(sriov), C(numa)) overrides of the default layout.
      - Every kind takes C(enabled), C(resource_class), C(traits), C(name_template),
        C(reserved), C(allocation_ratio). C(gpu) also takes C(mdev_types) (like nova's
        C([devices]/enabled_mdev_types)); C(sriov) takes C(class_style)
        (C(pci) for C(CUSTOM_PCI_<VENDOR>_<VF PRODUCT>), C(sriov_net_vf) for C(SRIOV_NET_VF));
        C(numa) takes C(resource_classes) and is disabled by default.
      - Name templates may use C({root}), C({address}), C({ADDRESS}), C({address_underscored}),
        C({libvirt_name}), C({vendor_id}), C({product_id}), C({numa_node}) (C({id}) for NUMA).
      - C(reserved) and C(allocation_ratio) left unset keep the value an existing child already
        has in Placement (Placement's default for a new child).
      - When the device report carries the node's nova.conf, nova 34's own layout applies and
        C(numa) is refused. C(pcpu) takes C(pinned) and C(unpinned), lists of consumer UUIDs,
        for the VCPU to PCPU reshape (C([compute]cpu_dedicated_set)) where the domain XML does
        not tell whether a consumer is a pinned guest.
    type: dict
    default: {}
  ownership_policy:
    description:
      - V(strict) fails the task, changing nothing, when a consumer's moved allocation cannot
        be matched to devices it owns (no guest/mdev known for it, or owned units that do not
        add up), or, with O(moves), to the targets of a split class (not in O(consumers)); the
        message names the consumers.
      - V(pack) places what ownership cannot, first-fit over the children sorted by name,
        respecting capacity, C(min_unit), C(max_unit) and C(step_size).
    type: str
    choices: [strict, pack]
    default: strict
  ownership:
    description:
      - "Explicit ownership, merged over what the device report says, device by device, as
        C({consumer uuid: {device address: units}}), or C({device: {RESOURCE_CLASS: units}})
        for several classes (NUMA cells are named C(NUMA0), C(NUMA1), ...)."
    type: dict
    default: {}
  allow_foreign_allocations:
    description:
      - A consumer of this node that also holds allocations on another compute node's tree (a
        provider outside the tree without the C(MISC_SHARES_VIA_AGGREGATE) trait, that is a
        migration in flight) makes the node C(deferred); nothing changes and the task does not
        fail.
      - V(true) reshapes anyway, carrying those allocations along unchanged.
    type: bool
    default: false
  fail_on_deferred:
    description:
      - Fail the task when the node is deferred (RV(status=deferred), a move in flight), instead
        of returning it as not changed. Nothing is changed either way; the failure's result still
        holds the plan and RV(deferred_reason). O(record) stores no record then (the caller records
        the failure).
      - Only used with O(state=reshaped).
    type: bool
    default: false
  nova_migrations:
    description:
      - Whether nova's C(GET /os-migrations) (compute microversion 2.59) is read for the
        migrations in flight on the node. A migration in flight defers the node (nothing
        changes, RV(status=deferred)) when its record's C(uuid) holds allocations on the tree or
        the record names the node as its source or destination; RV(deferred_reason) names the
        migration and its instance.
      - V(auto) asks nova when the backend has a compute endpoint (the service catalog of the
        cloud/auth options lists nova; never with O(embedded_db)). V(always) fails the task when
        there is none. V(never) does not ask (the allocations alone then tell a move in flight).
      - Listing every project's migrations with their hosts needs nova's C(admin) role under its
        default policy (C(os_compute_api:os-migrations:index:all_projects) and
        C(os_compute_api:os-migrations:index:host)); a refusal fails the task with V(always) and is
        a warning with V(auto) (RV(migrations.error); the moves in flight are then found from
        Placement and the host's guest domains only).
      - Not used when O(migrations) is given. Only used with O(state=reshaped), also in check mode
        (nova is only read).
    type: str
    choices: [auto, always, never]
    default: auto
  compute_host:
    description:
      - nova's service host of the node (its C(Host) in C(openstack compute service list)), sent as
        the C(host) filter of C(GET /os-migrations); nova matches it against a migration's source
        and destination compute. Records naming the root provider as C(source_node) or
        C(dest_node) are kept too.
      - Defaults to the name of the root provider (the hypervisor hostname, the service host on
        most libvirt deployments); set it when they differ.
    type: str
  compute_service_disabled:
    description:
      - Whether the node's nova-compute service is disabled in nova when the reshape is written (the
        rolling role disables it first, with nova's steps on). The root provider then gets
        C(COMPUTE_STATUS_DISABLED) with the other traits nova 34 marks a compute node with, when the
        pass writes anything.
      - nova-compute reports that trait on the root of a disabled service (its resource tracker, at
        every report and at start-up). A root read after the disable may lack it (nova 33's periodic
        report can write the root's traits without it right after the disable added it). With this
        option the new nova-compute's first start finds nothing to add.
      - Only used with O(state=reshaped). A rollback puts the snapshot's root traits back.
    type: bool
    default: false
  migrations:
    description:
      - Migration records given explicitly instead of asking nova (O(nova_migrations) is then not
        used), in the C(os-migrations) shape of compute microversion 2.59 (C(uuid),
        C(instance_uuid), C(status), C(migration_type), C(source_node), C(dest_node),
        C(source_compute), C(dest_compute)), for example the RV(migrations) of an earlier task, or
        for planning offline.
      - Records that are over (status C(confirmed), C(reverted), C(error), C(failed),
        C(completed), C(cancelled), C(done)) or that name neither the node nor O(compute_host)
        are left out.
    type: list
    elements: dict
  state:
    description:
      - V(reshaped) plans and applies the reshape (a node that already has the layout is left
        alone, C(changed=false)).
      - V(rolled_back) restores the snapshot (O(snapshot), or the latest one of the node in
        O(snapshot_dir)) with one reverse reshape.
      - Before anything is written, the rollback checks the snapshot. Its content must match the
        sha256 digest written with it (a snapshot written before snapshots carried one is used,
        see RV(snapshot_verified)). Independent of the digest, it must agree with the plan
        recorded in it and with the node; the root is in its state, every provider is of the
        root's tree, each consumer the reshape wrote holds what that plan made of its totals
        (a reshape only moves allocations, but for a GPU of a custom mdev class, PCI allocation
        healing and VCPU to PCPU), and each inventory is the one the reshape replaced. A
        snapshot that fails is refused, naming the file and what differs (the consumer, the class
        and both amounts), and nothing is written.
      - V(verified) only runs the verification checks.
    type: str
    choices: [reshaped, rolled_back, verified]
    default: reshaped
  snapshot_dir:
    description:
      - Directory of the snapshots (created with mode C(0700) if missing; files are C(0600)).
      - Required to apply a reshape (not in check mode) and, unless O(snapshot) is given, to
        roll back. With O(state=verified), the latest snapshot there (if any) is the baseline
        of the consumer-totals check.
    type: path
  snapshot:
    description:
      - A specific snapshot file to roll back to (or to verify against), instead of the
        latest one (C(<root name>.latest.json) in O(snapshot_dir)).
    type: path
  remove_children:
    description:
      - With O(state=rolled_back), delete the layout's child providers that are empty in the
        snapshot (those the reshape created) instead of leaving them with no inventory.
    type: bool
    default: false
  run_id:
    description:
      - Identifier of the roll this reshape belongs to, stored as C(run_id) in the snapshot
        written before the reshape.
      - M(placement.upgrade.fleet_report) (its O(placement.upgrade.fleet_report#module:snapshot_dir)
        option) finds through it the nodes a run reshaped whose outcome the roll never recorded
        (a roll aborted in the middle of a batch).
      - Only used with O(state=reshaped).
      - It names the run's folder (C(<report dir>/<run id>)), so one with C(/) or C(\), C(.) or C(..), a
        control character or white space around it is refused before anything is read or written.
    type: str
    default: ''
  record:
    description:
      - Also store the node's record for the report of the run, as
        M(placement.upgrade.fleet_report) with
        O(placement.upgrade.fleet_report#module:summarize=false) would, without a task of its own
        (C(<dest>/nodes/<node>.json)), with the tree after the reshape (read through the backend
        already open) and the tree before it (the snapshot). The report is then rendered from the
        stored records (M(placement.upgrade.fleet_report) with the same
        O(placement.upgrade.fleet_report#module:dest)).
      - The record is the run's output, not managed state, so it is stored in check mode too (a
        plan's report is built from it). A failed reshape stores nothing (the rolling role records
        the failure in its rescue).
      - Only used with O(state=reshaped).
    type: dict
    suboptions:
      dest:
        description:
          - The run's report directory (the same O(placement.upgrade.fleet_report#module:dest)).
          - It must not hold the records of another run (O(run_id)).
        type: path
        required: true
      node:
        description:
          - The node's name in the report (the rolling role gives the inventory hostname).
        type: str
        required: true
      started:
        description:
          - When the node's pass began, in seconds since the epoch (the report shows each node's
            duration). Default is when this task began.
        type: float
attributes:
  check_mode:
    details:
      - Returns the full plan and the diff of the tree, with the UUIDs the new children will
        get (they are deterministic), and changes nothing (no snapshot is written).
  diff_mode:
    details:
      - Before/after of every provider and every consumer the reshape touches.
extends_documentation_fragment:
  - placement.upgrade.auth
  - placement.upgrade.attributes
  - placement.upgrade.attributes.PLACEMENT
  - placement.upgrade.attributes.WRITES
notes:
  - C(POST /reshaper) needs the C(service) role under Placement's default policy; a 403
    fails the task with a message saying so.
  - A generation conflict (another writer between the read and the reshape) re-reads, re-plans
    and retries, at most O(conflict_retries) times; RV(retries) says how many it took.
seealso:
  - module: placement.upgrade.device_info
  - module: placement.upgrade.resource_provider_info
'''

EXAMPLES = r'''
- name: Discover the devices of the compute node
  placement.upgrade.device_info:
  register: node_devices

- name: Show what the reshape would do
  placement.upgrade.reshape:
    cloud: overcloud
    root_provider: "{{ inventory_hostname }}"
    devices: "{{ node_devices.devices }}"
  check_mode: true
  diff: true
  delegate_to: localhost

- name: Reshape the node (VGPU to one child per physical GPU)
  placement.upgrade.reshape:
    cloud: overcloud
    root_provider: "{{ inventory_hostname }}"
    devices: "{{ node_devices.devices }}"
    snapshot_dir: /var/lib/placement-upgrade/snapshots
    run_id: 20260101T120000Z
  delegate_to: localhost
  register: reshape

- name: Reshape only when nova can be asked for the migrations in flight
  placement.upgrade.reshape:
    cloud: overcloud
    root_provider: "{{ inventory_hostname }}"
    devices: "{{ node_devices.devices }}"
    snapshot_dir: /var/lib/placement-upgrade/snapshots
    nova_migrations: always
    compute_host: "{{ inventory_hostname_short }}"
  delegate_to: localhost

- name: Nodes with a migration in flight come back later
  ansible.builtin.debug:
    msg: "{{ inventory_hostname }} deferred: {{ reshape.deferred_reason }}"
  when: reshape.status == 'deferred'

- name: SR-IOV as SRIOV_NET_VF, a custom VGPU class per mdev type, NUMA children
  placement.upgrade.reshape:
    cloud: overcloud
    root_provider: compute-07
    devices: "{{ node_devices.devices }}"
    layout:
      gpu: {resource_class: CUSTOM_VGPU_T4_2Q, mdev_types: [nvidia-222]}
      sriov: {class_style: sriov_net_vf}
      numa: {enabled: true}
    ownership_policy: pack
    snapshot_dir: /var/lib/placement-upgrade/snapshots
  delegate_to: localhost

- name: Reshape a node whose layout cannot be discovered, from explicit move records
  placement.upgrade.reshape:
    cloud: overcloud
    root_provider: compute-09
    moves:
      - from_resource_provider: compute-09
        to_resource_provider: compute-09_gpu0
        moved_resources: {VGPU: 4}
        traits: [OWNER_NOVA]
      - from_resource_provider: compute-09
        to_resource_provider: compute-09_gpu1
        moved_resources: {VGPU: 4}
        traits: [OWNER_NOVA]
    consumers:
      0b9b2d4e-6f59-4cbb-9f3c-3e1c3f0c2a11: {compute-09_gpu0: {VGPU: 1}, compute-09_gpu1: {VGPU: 1}}
      7c1e4a52-2d8f-4a7e-b8a3-5f2d9e6c4b20: {compute-09_gpu1: {VGPU: 2}}
    snapshot_dir: /var/lib/placement-upgrade/snapshots
  delegate_to: localhost

- name: Roll the node back to its last snapshot and delete the children
  placement.upgrade.reshape:
    cloud: overcloud
    root_provider: compute-07
    state: rolled_back
    snapshot_dir: /var/lib/placement-upgrade/snapshots
    remove_children: true
  delegate_to: localhost

- name: Check a node (fails when a check fails)
  placement.upgrade.reshape:
    cloud: overcloud
    root_provider: compute-07
    devices: "{{ node_devices.devices }}"
    state: verified
  delegate_to: localhost
'''

RETURN = r'''
status:
  description:
    - V(reshaped) (would be, in check mode), V(noop) (the node already has the layout, or
      already matches the snapshot), V(deferred) (migration in flight, nothing changed, not a
      failure), V(rolled_back) or V(verified).
    - With O(state=reshaped), V(failed) when Placement answered the C(POST /reshaper) and then
      did not hold what it accepted (the task fails; RV(damaged), RV(corrections)), or when the
      node's newest snapshot is of such a pass (or of one stopped after its C(POST /reshaper)) and
      the node does not match it (nothing is written); V(verified) when the node has the layout and
      matches that snapshot (the snapshot then records it as verified).
  returned: always
  type: str
  sample: reshaped
plan:
  description:
    - The plan, plain data. For a reshape it holds C(status) (C(planned), C(noop), C(deferred)),
      C(root), C(moved_classes), C(children) (name, uuid, kind, device, inventories, traits,
      exists), C(create_children), C(set_traits), C(providers) (the final inventory of every
      provider of the tree), C(inventory_changes), C(allocations) (the full final allocations
      of every consumer it moves), C(assignments) (per consumer and class, where the units go
      and why), C(moved), C(deferred_reason), C(warnings) (the remarks), C(orphans) and C(diff);
      with O(moves), also C(moves) (the records as checked, each with C(from), C(to), C(resources) and C(traits)).
    - C(orphans) lists the consumers on the node that nova knows neither as an instance nor as a
      migration in flight (asked when nova answered for the node's migrations), each with its
      allocations and the C(nova-manage placement audit ... --delete) command that deletes them;
      one holding a class the reshape moves defers the node.
    - For a rollback it holds C(inventories), C(allocations), C(restored), C(gone),
      C(remove_children) and C(diff).
  returned: always
  type: dict
diff:
  description: Before and after of every provider (by name) and consumer the task changes.
  returned: when diff mode is on
  type: dict
  sample:
    before: {providers: {compute-01: {inventories: {VGPU: {total: 16}}}}, consumers: {}}
    after: {providers: {compute-01: {inventories: {}}}, consumers: {}}
retries:
  description:
    - How many times the reshape was re-read and re-planned, after a generation conflict or after
      C(POST /reshaper) failed or got no answer and a re-read showed it was not applied (those
      are counted in RV(resent) too).
  returned: always
  type: int
  sample: 1
resent:
  description:
    - How many of RV(retries) sent C(POST /reshaper) again because it failed (for example with
      C(503)) or got no answer, and a re-read showed it was not applied; the task's warning says
      them apart from generation conflicts.
  returned: always
  type: int
  sample: 0
verification:
  description: Every check run after the reshape/rollback (or on demand), with its outcome.
  returned: always
  type: list
  elements: dict
  contains:
    check:
      description: Name of the check.
      type: str
      sample: allocations_on_owned_devices
    passed:
      description: Whether it passed.
      type: bool
    detail:
      description: What was checked, or what is wrong.
      type: str
verified:
  description: Whether every check passed (V(null) when none ran, e.g. in check mode).
  returned: always
  type: bool
snapshot:
  description: Path of the snapshot written (reshape) or used (rollback, verification).
  returned: always
  type: str
  sample: /var/lib/placement-upgrade/snapshots/compute-01.20260101T101500.123456Z.json
damaged:
  description:
    - Each consumer the pass of the snapshot wrote that does not hold what it held before that pass
      or what the pass planned, with the project, user and consumer type it had (see RV(status)).
  returned: when the task found such consumers
  type: list
  elements: dict
  contains:
    consumer:
      description: The consumer's uuid.
      type: str
    has:
      description: Its allocations in Placement now, per provider uuid (C(resources) per class).
      type: dict
    should:
      description: The allocations it should have (what it held before, or what the pass planned).
      type: dict
    owner_has:
      description: Its C(project_id), C(user_id) and C(consumer_type) in Placement now.
      type: dict
    owner_should:
      description: The C(project_id), C(user_id) and C(consumer_type) it had in the snapshot.
      type: dict
    problems:
      description: What differs, in words.
      type: list
      elements: str
corrections:
  description:
    - One command per RV(damaged) consumer that gives it what it should have
      (M(placement.upgrade.allocation) run by C(ansible localhost); on the embedded store it names the
      file, on a real Placement it needs the cloud in the environment, C(OS_CLOUD)). Run the reshape
      again afterwards, which checks the node against the snapshot until it matches.
  returned: when the task found damaged consumers
  type: list
  elements: str
snapshot_verified:
  description:
    - With O(state=rolled_back), whether the snapshot carried a sha256 digest of its content (which
      then matched, since a snapshot that does not match is refused). V(false) for a snapshot written
      before snapshots carried one; it was still checked against the plan recorded in it and against
      the node, and a remark and the message say it was not verified.
  returned: when O(state=rolled_back)
  type: bool
  sample: true
moved:
  description: How many consumers and allocations the task moved (and, for a reshape, units per class).
  returned: always
  type: dict
  sample: {consumers: 3, allocations: 3, units: {VGPU: 5}}
journal:
  description:
    - What the task wrote, would write (check mode) or restored (a rollback), the writes of its pass,
      from the tree its writes were computed on and the tree read back after them. Every figure of
      the run's report, summary and progress line comes from it.
    - A reshape that fails after it wrote something (children, traits, an applied POST /reshaper whose
      follow-up failed) returns the journal of what it did write, read back after the failure.
  returned: when O(state=reshaped) or O(state=rolled_back) and the task does not fail; also when a
    O(state=reshaped) task fails after writing
  type: dict
  contains:
    mode:
      description: The words it is told in, V(would) (check mode), V(did) (a reshape) or V(restored) (a rollback).
      type: str
      sample: did
    providers:
      description: Names of the child providers C(created), C(removed), and C(left) behind empty by a rollback
        without O(remove_children).
      type: dict
      sample: {created: [compute-01_pci_0000_84_00_0], removed: [], left: []}
    inventories:
      description: Each inventory changed, per provider and resource class, with its total C(before) and C(after)
        (V(null) where there was none).
      type: list
      elements: dict
      sample: [{provider: compute-01, resource_class: VCPU, before: 64, after: 32}]
    allocations:
      description:
        - Each consumer's change per resource class, C(kind) V(moved) (the same amount on other providers),
          V(created) (more, PCI healing), V(removed) (less) or V(converted) (see C(conversions)), with the
          amounts it gave up (C(from)) and took (C(to)) per provider, and its total C(before) and C(after).
      type: list
      elements: dict
    conversions:
      description: Consumers that gave up one class for another on the same provider (VCPU to PCPU).
      type: list
      elements: dict
      sample: [{consumer: 2a9b4b6e-0a8c-4a27-9d5e-5f1f4c1f3b42, from: VCPU, to: PCPU, providers: [compute-01], amount: 4}]
    traits:
      description: The traits C(added) and C(removed) per provider.
      type: list
      elements: dict
    figures:
      description: The counts the reports show, C(consumers_moved), C(allocations_moved), C(allocations_created),
        C(allocations_removed), C(allocations_converted), C(providers_created), C(providers_removed),
        C(providers_left), C(inventories_changed), C(traits_changed).
      type: dict
deferred_reason:
  description: Why the node was deferred (the consumers and providers of the migration in flight).
  returned: always
  type: str
reshaper_applied:
  description:
    - Whether a C(POST /reshaper) of this task was applied. V(false) with RV(status=reshaped) means only
      traits or empty children were missing, and they were written (RV(traits_written), RV(children_created));
      nothing was moved and no snapshot was taken.
  returned: always
  type: bool
traits_written:
  description: The trait changes this task PUT on providers that already existed (a child made by an older
    nova without C(OWNER_NOVA), the root given C(COMPUTE_NODE) and C(OWNER_NOVA) as nova 34 marks every compute
    node, the root's C(HW_CPU_X86_AMD_SEV) taken off when SEV moves, ...), one item per provider.
  returned: always
  type: list
  elements: dict
  contains:
    provider:
      description: The provider's name.
      type: str
    uuid:
      description: The provider's uuid.
      type: str
    added:
      description: The traits added.
      type: list
      elements: str
    removed:
      description: The traits removed.
      type: list
      elements: str
  sample: [{provider: compute-01_pci_0000_81_00_0, uuid: 0b6f3c7e-3f0a-4b8e-9d0b-6a1f8e2c9b10,
            added: [OWNER_NOVA], removed: []}]
children_created:
  description: The names of the child providers this task created.
  returned: always
  type: list
  elements: str
would_write:
  description:
    - In check mode, what the reshape would write, C(reshaper) (whether it would send a C(POST /reshaper);
      V(false) when only traits or empty children are missing), C(traits) (as RV(traits_written)) and
      C(children) (the names of the children it would create).
  returned: in check mode, when RV(status=reshaped)
  type: dict
  sample: {reshaper: false, traits: [{provider: compute-01_pci_0000_81_00_0, uuid: 0b6f3c7e-3f0a-4b8e-9d0b-6a1f8e2c9b10,
                                      added: [OWNER_NOVA], removed: []}], children: []}
migrations:
  description:
    - The migrations in flight on the node that the plan was given (V(none) and no records for
      O(state=rolled_back) and O(state=verified)).
  returned: always
  type: dict
  contains:
    source:
      description:
        - V(nova) (read from nova's C(GET /os-migrations)), V(given) (O(migrations)) or V(none)
          (nova was not asked, with O(nova_migrations=never) or with V(auto) and no compute
          endpoint, or nova refused the credentials with V(auto), see RV(migrations.error)).
      type: str
      sample: nova
    error:
      description:
        - With O(nova_migrations=auto), why nova was not read although it has an endpoint (it
          refused the credentials, as os-migrations needs nova's C(admin) role). The moves in
          flight are then found from Placement and the host's guest domains only.
      type: str
      returned: when nova refused the request with O(nova_migrations=auto)
      sample: "nova at http://nova.example.com/v2.1 refused GET /os-migrations (403) .."
    count:
      description: How many records.
      type: int
      sample: 1
    records:
      description:
        - The in-progress records that touch the node, with the keys C(uuid), C(id),
          C(instance_uuid), C(status), C(migration_type), C(source_node), C(dest_node),
          C(source_compute), C(dest_compute), C(dest_host), C(created_at), C(updated_at) as nova
          sent them (a given record is returned as given).
      type: list
      elements: dict
      sample:
        - uuid: 4d6f3c7e-3f0a-4b8e-9d0b-6a1f8e2c9b10
          instance_uuid: 8e5b1c2a-2f4d-4c6e-8a9b-0c1d2e3f4a5b
          status: finished
          migration_type: resize
          source_node: compute-01
          dest_node: compute-02
          source_compute: compute-01
          dest_compute: compute-02
remarks:
  description:
    - Layout and planning remarks (each is also emitted as a task warning). Named C(remarks)
      because a module result key C(warnings) is reserved by Ansible.
  returned: always
  type: list
  elements: str
msg:
  description: One line saying what happened.
  returned: always
  type: str
log:
  description: Conflicts retried and objects created on the way.
  returned: always
  type: list
  elements: str
tree:
  description:
    - The node's tree as the reshape's verification read it back after writing it, root first.
      Every provider with C(uuid), C(name), C(generation), C(parent_provider_uuid), C(root_provider_uuid)
      and C(inventories), as M(placement.upgrade.resource_provider_info) gives them.
    - Comparing a later read with it shows whether anything wrote to the tree since the reshape (the
      P(placement.upgrade.rolling_reshape#role) role does so once nova-compute is back) without
      reading the tree once more right after the reshape.
  returned: when O(state=reshaped), the node was written and verified (not in check mode)
  type: list
  elements: dict
  sample:
    - uuid: 4a8a4f5c-9b35-4c55-8a35-53f35b1d8a0e
      name: compute-01
      generation: 7
      parent_provider_uuid: null
      root_provider_uuid: 4a8a4f5c-9b35-4c55-8a35-53f35b1d8a0e
      inventories: {VCPU: {total: 64, reserved: 0, min_unit: 1, max_unit: 64, step_size: 1, allocation_ratio: 4.0}}
tree_before:
  description:
    - The node's tree as the rollback read it before writing (what Placement held, the reshaped tree),
      in the shape of a snapshot's C(state) (C(providers) by UUID, C(allocations) by consumer).
    - The rollback's report draws it as the tree before (its snapshot is the tree after), so the picture
      shows what the rollback changed.
  returned: when O(state=rolled_back), not in check mode
  type: dict
  sample:
    providers:
      4a8a4f5c-9b35-4c55-8a35-53f35b1d8a0e: {name: compute-01, parent_provider_uuid: null, inventories: {}}
    allocations: {}
stored:
  description: The node record stored for the report of the run (O(record)).
  returned: when O(record) is given and the reshape did not fail
  type: str
  sample: /var/lib/placement-upgrade/reports/20260101T120000Z/nodes/compute-01.json
error:
  description: Placement's error (C(status), C(code), C(title), C(detail), C(request_id)) when the task failed on one.
  returned: failure
  type: dict
leftovers_removed:
  description:
    - The temporary files an interrupted earlier write of the files this task writes (its
      snapshots in O(snapshot_dir), the node's record of O(record)) left in their directory
      (C(.<name>.<random>.tmp), older than the task), removed before this write; a warning names
      them too.
  returned: when any was removed
  type: list
  elements: str
  sample: [/var/lib/placement-upgrade/snapshots/.compute-01.latest.json.k3j4h5g6.tmp]
'''

from ansible_collections.placement.upgrade.plugins.module_utils.common import ModuleSpec, conflict_attempts
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import records
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import run as reshape_run


def _run(module, backend, log):
    """run_module's action: the request built from the options, the core's run (node/run.py)."""
    request = reshape_run.Request(module.params, conflict_attempts(module.params), records,
                                  check_mode=module.check_mode, diff=getattr(module, '_diff', False),
                                  warn=module.warn)
    result = reshape_run.run(backend, request, log)
    if result.pop('failed', False):
        module.fail_json(**result)
    return result


SPEC = ModuleSpec(
    action=_run, creates_store=False,
    options=dict(
        root_provider=dict(type='str', required=True, aliases=['compute_node']),
        devices=dict(type='dict'),
        moves=dict(type='list', elements='dict', options=dict(
            from_resource_provider=dict(type='str', required=True),
            to_resource_provider=dict(type='str', required=True),
            moved_resources=dict(type='dict', required=True),
            traits=dict(type='list', elements='str'),
        )),
        consumers=dict(type='dict'),
        layout=dict(type='dict', default={}),
        ownership_policy=dict(type='str', default='strict', choices=['strict', 'pack']),
        ownership=dict(type='dict', default={}),
        allow_foreign_allocations=dict(type='bool', default=False),
        fail_on_deferred=dict(type='bool', default=False),
        nova_migrations=dict(type='str', default='auto', choices=['auto', 'always', 'never']),
        compute_host=dict(type='str'),
        compute_service_disabled=dict(type='bool', default=False),
        migrations=dict(type='list', elements='dict'),
        state=dict(type='str', default='reshaped', choices=['reshaped', 'rolled_back', 'verified']),
        snapshot_dir=dict(type='path'),
        snapshot=dict(type='path'),
        remove_children=dict(type='bool', default=False),
        run_id=dict(type='str', default=''),
        record=dict(type='dict', options=dict(
            dest=dict(type='path', required=True),
            node=dict(type='str', required=True),
            started=dict(type='float'),
        )),
    ),
    required_if=[('state', 'reshaped', ('devices', 'moves'), True),
                 ('state', 'verified', ('devices', 'moves'), True)],
    mutually_exclusive=[('devices', 'moves')],
    required_by={'consumers': ('moves',)},
)


def main():
    SPEC.main()


if __name__ == '__main__':
    main()
