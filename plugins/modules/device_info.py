#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: device_info
short_description: Discover the GPUs, mdevs, SR-IOV functions, PCI devices and NUMA cells of a compute node
version_added: 1.0.0
author: placement.upgrade contributors (@placement-upgrade)
description:
  - Runs on a compute node and reads sysfs and the libvirt domain definitions to report
    the devices a reshape of OpenStack Placement has to account for, and which instance
    holds which device.
  - Physical GPUs are the mediated device (mdev) parents under C(class/mdev_bus), with their
    supported mdev types and the mdevs that exist; an instance holds an mdev when its domain
    XML has a C(<hostdev type='mdev'>) naming the mdev UUID.
  - SR-IOV physical functions are the PCI devices with C(sriov_totalvfs); a virtual function
    is held by the instance whose domain XML names its PCI address in a C(<hostdev type='pci'>)
    or C(<interface type='hostdev'>).
  - NVIDIA vGPUs of the vendor-specific VFIO framework (drivers R580 and later on Linux 6.8+, Ada,
    Hopper and Blackwell GPUs, no mdev) are such virtual functions, with an C(nvidia/) directory in
    sysfs; the GPU is their physical function. Each VF's C(nvidia/current_vgpu_type) (its vGPU type,
    V(0) when none is set), C(nvidia/creatable_vgpu_types) and driver are reported; the type's name
    is the one a C(creatable_vgpu_types) file of the host gives it. A guest holds such a vGPU by the
    VF's PCI address in its domain XML. nova tracks these VFs through C([pci]device_spec) only, so the
    reshape lays them out as nova's PCI providers.
  - Other PCI devices are reported when they match O(pci_filters) or a C([pci]device_spec) of
    the node's nova.conf.
  - The node's nova.conf (O(nova_conf), plus C(nova.conf.d)) is read for the options nova 34 lays
    out its provider tree with (C([devices]enabled_mdev_types), C([mdev_<type>]) groups,
    C([pci]report_in_placement), C([pci]device_spec), C([pci]alias), C([compute]cpu_dedicated_set),
    reserved host resources, allocation ratios); they are returned in RV(devices.nova_conf), and the
    reshape then lays the node out exactly as nova 34 would.
  - The module only reads; it needs no Placement credentials and never reports a change.
options:
  sysfs_root:
    description:
      - The directory that plays C(/sys). Point it at a copy or a fake tree for testing.
    type: path
    default: /sys
  domain_xml_glob:
    description:
      - Glob of the persistent libvirt domain definitions to read.
      - Set it to an empty string to read no files (for example together with O(use_virsh=true)).
    type: str
    default: /etc/libvirt/qemu/*.xml
  use_virsh:
    description:
      - Also read the live definition of every running domain with C(virsh list --uuid) and
        C(virsh dumpxml).
      - The live definition of a running domain wins over its persistent file.
    type: bool
    default: false
  pci_filters:
    description:
      - Vendor and product ids of the other PCI devices to report (devices passed through
        whole). GPUs already reported as mdev parents, SR-IOV physical and virtual functions
        are never reported here.
    type: list
    elements: dict
    default: []
    suboptions:
      vendor_id:
        description:
          - PCI vendor id, four hexadecimal digits, for example V(10de).
        type: str
        required: true
      product_id:
        description:
          - PCI product (device) id, four hexadecimal digits. Omit it to match every device of the vendor.
        type: str
  numa:
    description:
      - Report the NUMA cells (CPUs and memory) from C(devices/system/node).
    type: bool
    default: true
  hostname:
    description:
      - Host name recorded in the report. Defaults to the name of the node.
      - Set it to the hypervisor host name nova uses when that differs.
    type: str
  nova_conf:
    description:
      - Path of the node's nova.conf. The files of C(<nova_conf>.d/*.conf) are read after it, in
        name order, as oslo.config reads a config dir.
      - When no file exists there, RV(devices.nova_conf) is V(null), a warning says so, and the
        reshape falls back to its layout options with nova's defaults.
      - Set it to an empty string to read no nova.conf.
    type: str
    default: /etc/nova/nova.conf
  domain_capabilities:
    description:
      - Path of a saved C(virsh domcapabilities) XML. With the kernel's C(kvm_amd) parameters
        under O(sysfs_root) it tells which memory encryption models (AMD SEV, SEV-ES, SEV-SNP,
        Intel TDX) nova 34 reports, and how many guests each takes; see RV(devices.mem_encryption).
      - When not given and O(use_virsh=true), C(virsh domcapabilities) is run.
      - Without either, no memory encryption providers are planned (a warning says so when the
        kernel enables AMD SEV).
    type: path
  nova_credentials:
    description:
      - Also read nova-compute's own C([placement]) options from O(nova_conf) (plus C(nova.conf.d), and the
        section C(auth_section) names), that is the keystoneauth auth, session and adapter options nova 34
        connects to Placement with, its secret (C(password), C(application_credential_secret), ...) included.
      - The action plugin, on the controller, then probes them as nova-compute would (a token from Keystone,
        the Placement endpoint nova would use, a C(POST /reshaper) that changes nothing) and fails the task
        when nova-compute could not reshape (RV(nova_credentials)). Nodes whose options are the same are
        probed once per run. nova's options and secret never reach the task's result (the action removes
        them before anything prints or registers it).
      - No file, or no C(auth_type), is a warning, not a failure. Never with O(replay_from).
    type: bool
    default: false
  check_mdevs:
    description:
      - Also check that every mdev a guest holds is defined persistently (in O(mdevctl_dir), what
        C(mdevctl list --defined) lists) and that mdevctl is installed, from what discovery read
        (RV(mdev_persistence)). A problem is a warning (also listed in RV(devices.warnings)), or fails the
        task with O(fail_on_transient_mdevs=true). Never with O(replay_from).
    type: bool
    default: false
  mdevctl_dir:
    description: Where mdevctl keeps the persistent mdev definitions (with O(check_mdevs=true)).
    type: path
    default: /etc/mdevctl.d
  mdevctl:
    description:
      - The mdevctl command (with O(check_mdevs=true)), a name looked up in C(PATH) and in C(/usr/local/sbin),
        C(/usr/sbin), C(/sbin), or a path. It is looked up, not run.
    type: str
    default: mdevctl
  fail_on_transient_mdevs:
    description:
      - With O(check_mdevs=true), fail the task (nothing is changed) when a held mdev is not defined
        persistently or mdevctl is missing, instead of warning.
    type: bool
    default: false
  record_to:
    description:
      - Also write the result (RV(devices) and RV(ownership)) as JSON to this file where the module
        runs (mode 0600, written atomically; its directory must exist), for a later run with
        O(replay_from), for example a rehearsal on the controller without the nodes
        (see C(docs/rehearse.md)).
      - The file is written in check mode too (discovery only reads; the recording is the run's
        output, as the fleet report is). The module still never reports a change.
    type: path
  replay_from:
    description:
      - Do not probe the node; return the result recorded in this file instead (a file written
        with O(record_to), or the registered result of a device_info task saved as JSON or
        YAML, or the device report alone).
      - RV(ownership) is computed again from the recorded report.
      - When O(hostname) is given it must be the recorded host name, so that a recording is never
        replayed for another node.
      - Cannot be used with O(record_to) or O(use_virsh); the other probing options are ignored.
    type: path
extends_documentation_fragment:
  - placement.upgrade.attributes
  - placement.upgrade.attributes.HOST
notes:
  - Unheld mdevs, instances naming an mdev that does not exist, devices held by two
    instances and a missing nova.conf are listed in RV(devices.warnings) and each is emitted
    as a task warning; they do not fail the module.
seealso:
  - name: Linux kernel VFIO mediated devices
    description: The sysfs layout of mediated devices this module reads.
    link: https://docs.kernel.org/driver-api/vfio-mediated-device.html
'''

EXAMPLES = r'''
- name: Discover the devices of the compute node
  placement.upgrade.device_info:
  register: node_devices

- name: Also report passthrough A2 GPUs and read the live XML of running guests
  placement.upgrade.device_info:
    use_virsh: true
    pci_filters:
      - vendor_id: "10de"
        product_id: "25b6"
  register: node_devices

- name: Show which GPU each instance's vGPUs live on
  ansible.builtin.debug:
    var: node_devices.ownership

- name: Record what was discovered, for a rehearsal later
  placement.upgrade.device_info:
    record_to: /var/tmp/devices-compute-01.json

- name: Replay a recording instead of probing (on the controller)
  placement.upgrade.device_info:
    replay_from: /srv/rehearsal/devices/compute-01.json
    hostname: compute-01
  delegate_to: localhost
  register: node_devices

- name: Read a fake node built with tools/fakehost.py
  placement.upgrade.device_info:
    sysfs_root: /tmp/fakehost/sys
    domain_xml_glob: /tmp/fakehost/etc/libvirt/qemu/*.xml
    hostname: compute-01
'''

RETURN = r'''
started:
  description:
    - When the task began, in seconds since the epoch, by the controller's clock (the action
      plugin adds it, wherever the module runs). The rolling role times each node's pass from it.
  returned: always
  type: float
  sample: 1767268800.25
devices:
  description:
    - The device report of the node (see docs/architecture.md, "The device report").
  returned: success
  type: dict
  contains:
    hostname:
      description: Host name of the node.
      type: str
      returned: success
      sample: compute-01
    sysfs_root:
      description: The sysfs root that was read.
      type: str
      returned: success
      sample: /sys
    gpus:
      description:
        - Physical GPUs (mdev parents) with C(address), C(vendor_id), C(product_id), C(class_id),
          C(numa_node) (-1 when unknown), C(physfn) (the PF address when the GPU is an SR-IOV VF),
          C(mdev_types) (type -> C(name), C(available_instances), C(device_api), C(description))
          and C(mdevs) (list of C(uuid), C(type), C(instance_uuid)).
      type: list
      elements: dict
      returned: success
      sample:
        - address: "0000:84:00.0"
          vendor_id: "10de"
          product_id: "1eb8"
          class_id: "030200"
          numa_node: 0
          physfn: null
          mdev_types:
            nvidia-222: {name: GRID T4-2Q, available_instances: 6, device_api: vfio-pci, description: ""}
          mdevs:
            - {uuid: 4421fadb-021e-5923-8f7c-406504347198, type: nvidia-222,
               instance_uuid: 7a52a3cd-b39f-5ffc-940a-28d4c1fad8da}
    sriov_pfs:
      description:
        - SR-IOV physical functions with C(address), C(vendor_id), C(product_id), C(class_id),
          C(numa_node), C(total_vfs), C(num_vfs), C(vf_product_id), C(instance_uuid) (when the PF
          itself is passed through), C(vgpu_framework) and C(vfs) (list of C(address), C(instance_uuid)).
        - C(vgpu_framework) is V(nvidia-vfio) for an NVIDIA GPU whose VFs are vGPUs of the
          vendor-specific VFIO framework, else V(null). Each such VF also has C(driver) (the driver it
          is bound to), C(vgpu_type) (C(id) from C(nvidia/current_vgpu_type) and C(name), V(null) when
          no C(creatable_vgpu_types) of the host names that id; V(null) when no type is set) and
          C(creatable_vgpu_types) (list of C(id), C(name), as C(nvidia/creatable_vgpu_types) lists them).
      type: list
      elements: dict
      returned: success
      sample:
        - address: "0000:41:00.0"
          vendor_id: "10de"
          product_id: "27b8"
          class_id: "030200"
          numa_node: 0
          total_vfs: 32
          num_vfs: 8
          vf_product_id: "27b8"
          instance_uuid: null
          vgpu_framework: nvidia-vfio
          vfs:
            - {address: "0000:41:00.4", instance_uuid: 1454d02d-ac58-59e6-aaa4-3134d852eff0, driver: nvidia,
               vgpu_type: {id: 1152, name: NVIDIA L4-6Q}, creatable_vgpu_types: []}
            - {address: "0000:41:00.7", instance_uuid: null, driver: nvidia, vgpu_type: null,
               creatable_vgpu_types: [{id: 1152, name: NVIDIA L4-6Q}]}
    pci_devices:
      description:
        - Other PCI devices matching O(pci_filters) or a nova C([pci]device_spec) with C(address),
          C(vendor_id), C(product_id),
          C(class_id), C(numa_node) and C(instance_uuid).
      type: list
      elements: dict
      returned: success
    numa_cells:
      description: NUMA cells with C(id), C(cpus) (list of CPU numbers) and C(memory_mb).
      type: list
      elements: dict
      returned: success
      sample:
        - {id: 0, cpus: [0, 1, 2, 3], memory_mb: 64266}
    instances:
      description:
        - Libvirt domains by UUID with C(name), C(mdevs) (mdev UUIDs), C(pci_addresses),
          C(mem_encryption), C(vgpus) and C(source) (the file or C(virsh dumpxml) call that described
          the domain).
        - C(vgpus) lists the NVIDIA vGPU VFs (vendor-specific VFIO framework) the domain holds, each with C(address)
          (the VF), C(physfn) (its GPU), C(type_id) and C(type) (the vGPU type's id and name, V(null)
          when unknown or not set).
      type: dict
      returned: success
    nova_conf:
      description:
        - What nova 34 reads from the node's nova.conf for its provider tree, with nova's defaults,
          or V(null) when no nova.conf was found.
        - C(files) (the files read, in order), C(set) (every C([section]option) the files set),
          C(devices.enabled_mdev_types), C(mdev_types) (type -> C(device_addresses), C(mdev_class),
          C(max_instances)), C(pci) (C(report_in_placement), C(device_spec) as parsed objects,
          C(alias)), C(compute) (C(cpu_dedicated_set), C(cpu_shared_set)) and C(default)
          (reserved host resources and allocation ratios).
      type: dict
      returned: success
      sample:
        files: [/etc/nova/nova.conf]
        set: ["[devices]enabled_mdev_types", "[pci]report_in_placement"]
        devices: {enabled_mdev_types: [nvidia-222]}
        mdev_types: {nvidia-222: {device_addresses: [], mdev_class: VGPU, max_instances: null}}
        pci: {report_in_placement: false, device_spec: [], alias: []}
    mem_encryption:
      description:
        - The memory encryption models nova 34 reports for this host, or V(null) when no domain
          capabilities were read. C(source) (the XML read) and C(models) (model id -> C(total)
          guests and C(trait)). Instances carry C(mem_encryption), the model of their
          C(<launchSecurity>) (V(amd-sev), V(amd-sev-es), V(amd-sev-snp), V(intel-tdx)) or V(null).
      type: dict
      returned: success
      sample:
        source: /var/tmp/domcapabilities.xml
        models:
          amd_sev: {total: 15, trait: HW_CPU_X86_AMD_SEV}
          amd_sev_es: {total: 494, trait: HW_CPU_X86_AMD_SEV_ES}
    warnings:
      description:
        - Inconsistencies found (unheld mdevs, instances naming missing mdevs, devices held twice,
          held PCI addresses that are not reported devices, no nova.conf found, an NVIDIA vGPU VF held
          by a guest without a vGPU type, a vGPU type id no C(creatable_vgpu_types) names).
      type: list
      elements: str
      returned: success
ownership:
  description:
    - For every instance, the number of device units it holds per device address; mdevs count
      against their parent GPU, VFs against their PF.
  returned: success
  type: dict
  sample:
    7a52a3cd-b39f-5ffc-940a-28d4c1fad8da:
      "0000:84:00.0": 1
      "0000:85:00.0": 1
nova_credentials:
  description:
    - What the probe of nova-compute's own C([placement]) credentials found (the action plugin's, on the
      controller), with O(nova_credentials=true). C(passed) is V(null) when nothing could be probed (no
      nova.conf, no C(auth_type), and a warning says why).
  returned: when O(nova_credentials=true) and discovery succeeded
  type: dict
  contains:
    passed:
      description: Whether nova-compute may reshape with its own credentials; V(null) when not checked.
      type: bool
      returned: always
    detail:
      description: What was found, in a sentence.
      type: str
      returned: always
    user:
      description: The user (or application credential) the options name.
      type: str
      returned: always
    roles:
      description: The roles of the token Keystone gave.
      type: list
      elements: str
      returned: always
    endpoint:
      description: The Placement endpoint nova-compute would use.
      type: str
      returned: always
    probed_for:
      description: The node whose probe, with the same options earlier in the run, is reused; V(null) when probed for this one.
      type: str
      returned: always
  sample:
    passed: true
    detail: "nova-compute may reshape (user nova, project service, Placement at https://placement.internal,
      from [placement] of /etc/nova/nova.conf)"
    user: nova
    roles: [service, member]
    endpoint: https://placement.internal
    probed_for: null
mdev_persistence:
  description:
    - The persistence of the mdevs the node's guests hold, with O(check_mdevs=true).
  returned: when O(check_mdevs=true) and discovery succeeded
  type: dict
  contains:
    mdev_node:
      description: Whether the node has mdev parents, or guests naming mdevs.
      type: bool
      returned: always
    mdevctl:
      description: The mdevctl found, or V(null).
      type: str
      returned: always
    mdevctl_dir:
      description: Where the definitions were read.
      type: str
      returned: always
    held:
      description: How many mdevs the guests name.
      type: int
      returned: always
    not_persistent:
      description:
        - Each mdev a guest holds that is not defined persistently, with C(uuid), C(parent), C(type),
          C(instance), C(instance_name), C(active) (it exists now) and C(defined_on) (the parents it is
          defined on instead).
      type: list
      elements: dict
      returned: always
    unreadable:
      description: Definition files that could not be read, with why.
      type: list
      elements: str
      returned: always
    problems:
      description: The problems found, in sentences (each also a warning, or the failure's message).
      type: list
      elements: str
      returned: always
leftovers_removed:
  description:
    - The temporary files an interrupted earlier write of O(record_to) left in its directory
      (C(.<name>.<random>.tmp), older than the task), removed before this write; a warning names
      them too.
  returned: when any was removed
  type: list
  elements: str
  sample: [/var/tmp/.devices-compute-01.json.k3j4h5g6.tmp]
'''

from ansible_collections.placement.upgrade.plugins.module_utils.common import ModuleSpec, unexpected_error
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import discovery
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import novaconf
from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import PlacementError
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import recording
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import mdev_persistence
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.secrets import is_secret_name


def _virsh_domains(module):
    """Live domain XML of every running domain as ``(label, text)`` pairs."""
    virsh = module.get_bin_path('virsh', required=True)
    rc, out, err = module.run_command([virsh, 'list', '--uuid'])
    if rc != 0:
        module.fail_json(msg='virsh list --uuid failed (rc %d): %s' % (rc, (err or out).strip()))
    result = []
    for uuid in sorted(line.strip() for line in out.splitlines() if line.strip()):
        rc, xml, err = module.run_command([virsh, 'dumpxml', uuid])
        if rc != 0:
            # A guest that stopped between list and dumpxml is not an error: its
            # persistent definition (if any) is still read from domain_xml_glob.
            if 'failed to get domain' in (err or '').lower() or 'domain not found' in (err or '').lower():
                continue
            module.fail_json(msg='virsh dumpxml %s failed (rc %d): %s' % (uuid, rc, (err or xml).strip()))
        result.append(('virsh dumpxml %s' % uuid, xml))
    return result


def _virsh_domcapabilities(module):
    virsh = module.get_bin_path('virsh', required=True)
    rc, out, err = module.run_command([virsh, 'domcapabilities'])
    if rc != 0:
        module.fail_json(msg='virsh domcapabilities failed (rc %d): %s' % (rc, (err or out).strip()))
    return out


def execute(module):
    """Run the module's work on ``module`` (an AnsibleModule, or the action's in-process stand-in)."""
    params = module.params
    if params['replay_from']:
        _replay(module)
    domain_xmls = _virsh_domains(module) if params['use_virsh'] else None
    domcaps = params['domain_capabilities']
    if not domcaps and params['use_virsh']:
        domcaps = _virsh_domcapabilities(module)
    try:
        report = discovery.discover(
            sysfs_root=params['sysfs_root'],
            domain_xml_glob=params['domain_xml_glob'] or None,
            domain_xmls=domain_xmls,
            pci_filters=params['pci_filters'],
            numa=params['numa'],
            hostname=params['hostname'],
            nova_conf=params['nova_conf'] or None,
            domain_capabilities=domcaps or None,
        )
    except (discovery.DiscoveryError, novaconf.NovaConfError) as exc:
        module.fail_json(msg=str(exc), path=exc.path)
    except PlacementError as exc:
        module.fail_json(msg=exc.detail if not exc.status else str(exc), path=getattr(exc, 'path', None))
    except Exception as exc:  # pylint: disable=broad-except
        # never a traceback: say what broke, and where, for a bug report
        module.fail_json(msg=unexpected_error(exc))
    result = dict(devices=report, ownership=discovery.ownership(report))
    if params['check_mdevs']:
        result['mdev_persistence'] = _mdevs(module, report)
    _warn(module, report)
    if params['record_to']:
        try:
            recording.record(params['record_to'], result)
        except PlacementError as exc:
            module.fail_json(msg=str(exc), path=getattr(exc, 'path', None))
    if params['nova_credentials']:
        # for the action plugin, on the controller, to probe; it removes it from the result
        result['nova_placement'] = _nova_placement(module, params['nova_conf'])
    module.exit_json(changed=False, **result)


def _mdevs(module, report):
    """The persistence of the mdevs of ``report`` (what discovery read, nothing read again): warned
    and added to the report's warnings, or the task's failure with fail_on_transient_mdevs."""
    params = module.params
    node = report.get('hostname') or params['hostname']
    try:
        found = mdev_persistence.check(report, params['mdevctl_dir'], params['mdevctl'])
    except Exception as exc:  # pylint: disable=broad-except
        module.fail_json(msg=unexpected_error(exc))
    found['problems'] = mdev_persistence.problems(node, found)
    if found['problems'] and params['fail_on_transient_mdevs']:
        module.fail_json(msg='mdev_persistence: %s (fail_on_transient_mdevs is true; nothing was changed)'
                         % '; '.join(found['problems']), mdev_persistence=found)
    report['warnings'] = list(report.get('warnings') or []) + found['problems']
    return found


def _nova_placement(module, path):
    """nova-compute's [placement] options of ``path`` (its secret apart), or ``{missing: why}``."""
    if not path:
        return {'missing': 'no nova.conf to read (nova_conf is empty)'}
    try:
        found = novaconf.placement_section(path, is_secret=is_secret_name)
    except PlacementError as exc:
        return {'missing': exc.detail}
    except Exception as exc:  # pylint: disable=broad-except
        module.fail_json(msg=unexpected_error(exc))
    if found is None:
        return {'missing': 'no nova.conf at %s' % path}
    return found


SPEC = ModuleSpec(
    auth=False,
    execute=execute,
    options=dict(
        sysfs_root=dict(type='path', default='/sys'),
        domain_xml_glob=dict(type='str', default=discovery.DEFAULT_DOMAIN_XML_GLOB),
        use_virsh=dict(type='bool', default=False),
        pci_filters=dict(type='list', elements='dict', default=[],
                         options=dict(vendor_id=dict(type='str', required=True),
                                      product_id=dict(type='str'))),
        numa=dict(type='bool', default=True),
        hostname=dict(type='str'),
        nova_conf=dict(type='str', default=discovery.DEFAULT_NOVA_CONF),
        domain_capabilities=dict(type='path'),
        nova_credentials=dict(type='bool', default=False),
        check_mdevs=dict(type='bool', default=False),
        mdevctl_dir=dict(type='path', default=mdev_persistence.DEFAULT_MDEVCTL_DIR),
        mdevctl=dict(type='str', default='mdevctl'),
        fail_on_transient_mdevs=dict(type='bool', default=False),
        record_to=dict(type='path'),
        replay_from=dict(type='path'),
    ),
)


def main():
    SPEC.main()


def _replay(module):
    """Exit with the recorded result of ``replay_from`` (never probes)."""
    params = module.params
    for other in ('record_to', 'use_virsh'):
        if params[other]:
            module.fail_json(msg='replay_from cannot be used with %s' % other)
    try:
        report = recording.replay(params['replay_from'], hostname=params['hostname'])
    except PlacementError as exc:
        module.fail_json(msg=exc.detail if not exc.status else str(exc), path=getattr(exc, 'path', None))
    except Exception as exc:  # pylint: disable=broad-except
        module.fail_json(msg=unexpected_error(exc))
    _warn(module, report)
    module.exit_json(changed=False, devices=report, ownership=discovery.ownership(report))


def _warn(module, report):
    """Each of the report's warnings as a task warning (Ansible prints them; RV(devices.warnings) keeps them)."""
    for warning in report.get('warnings') or []:
        module.warn(str(warning))


if __name__ == '__main__':
    main()
