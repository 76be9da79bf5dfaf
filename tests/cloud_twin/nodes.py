# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cloud twin's node kinds: the hardware of each fake compute node and its nova.conf per release.

A node is a directory (see :func:`create`)::

    <node>/host.json     the fake host: a tools/fakehost.py spec (GPUs, PCI devices, SEV, NUMA) plus
                         ``host_info`` (the fakelibvirt CPU topology) and the guests nova runs on it
                         (kept up to date by the launcher, tests/cloud_twin/compute.py)
    <node>/node.conf     the service part of nova.conf: host, transport_url, [placement], state_path
    <node>/host/         the tree the launcher builds from host.json and the collection's discovery
                         reads: host/sys (sysfs), host/etc/libvirt/qemu/*.xml (nova's own domain XML of
                         the guests), host/etc/nova/nova.conf (the node's device options)
    <node>/domains/      nova's domain XML of every defined guest (copied into host/etc/libvirt/qemu)
    <node>/nova-34/nova.conf  nova 34's device options of the node, written before the roll (the
                         new release's config directory, openstack-ansible's shape): what the roll's
                         discovery reads; the switch (novactl) makes it the node's nova.conf
    <node>/state/        nova's state_path (compute_id: the node's identity across restarts)

The hardware comes from the presets of tools/fakehost.py (the ones the nova oracle and the
upgrade twin use) without their guests: guests are booted through nova-api on the running cloud.
Kinds (``KINDS``):

``vgpu``     two T4 GPUs (fakehost.default_gpu_host), ``[devices]enabled_mdev_types = nvidia-222``
``pci``      two type-PCI devices 10de:25b6 (the A2 of fakehost.default_sriov_host), alias ``a2``;
             ``[pci]report_in_placement`` off on nova 33, on with nova 34 (the upgrade turns it on)
``pcpu``     8 host CPUs, legacy ``vcpu_pin_set = 0-7`` on nova 33, ``[compute]cpu_dedicated_set =
             0-7`` with nova 34 (as the upgrade twin's pcpu kind)
``sev``      AMD SEV (kvm_amd sev = 1, libvirt maxGuests 100; no SEV-ES), guests from an image with
             ``hw_mem_encryption``
``mixed``    the vGPU GPUs and the legacy vcpu_pin_set on one node
``new``      a node already in the new layout: ``cpu_dedicated_set = 2-7`` / ``cpu_shared_set = 0-1``
             on both releases (nothing moves)

Plain Python, no nova import: the tests (project venv) and the launcher (a nova venv) both read it.
"""

import json
import os

import fakehost  # tools/ (on sys.path: tests/conftest.py, compute.py)

RELEASES = ('33', '34')
#: the fakelibvirt topology of every node: 2 NUMA cells x 1 socket x 2 cores x 2 threads = CPUs 0-7
#: (nova's functional libvirt base's default HostInfo), 16 GiB
HOST_INFO = {'cpu_nodes': 2, 'cpu_sockets': 1, 'cpu_cores': 2, 'cpu_threads': 2, 'kB_mem': 16 * 1024 * 1024}
#: the same CPUs and memory as sysfs shows them (fakelibvirt numbers the CPUs cell by cell)
NUMA_CELLS = [{'id': 0, 'cpus': '0-3', 'memory_mb': 8192}, {'id': 1, 'cpus': '4-7', 'memory_mb': 8192}]
A2 = {'vendor_id': '10de', 'product_id': '25b6'}
PCI_ALIAS = json.dumps(dict(A2, name='a2', device_type='type-PCI'))
PCI_SPEC = json.dumps(A2)
#: the image property of a SEV guest, and the flavors each kind's guests use (tests/cloud_twin)
FLAVORS = {
    'vgpu': {'resources:VGPU': '1'},
    'pci': {'pci_passthrough:alias': 'a2:1'},
    'pcpu': {'hw:cpu_policy': 'dedicated'},
    'sev': {'hw:mem_encryption': 'True'},
    'mixed': {'resources:VGPU': '1', 'hw:cpu_policy': 'dedicated'},
    'new': {'hw:cpu_policy': 'dedicated'},
}


def _gpus():
    gpus = fakehost.default_gpu_host()['gpus']
    for gpu in gpus:
        gpu['mdevs'] = []
    return gpus


def hardware(kind, hostname):
    """The fakehost spec of a node of ``kind`` without guests, and its nova.conf of nova 33."""
    spec = {'hostname': hostname, 'host_info': dict(HOST_INFO), 'instances': [], 'numa_cells': [dict(c) for c in NUMA_CELLS],
            'local_gb': {'total': 400, 'used': 0, 'free': 400}}
    if kind == 'vgpu':
        spec['gpus'] = _gpus()
        spec['nova_conf'] = {'devices': {'enabled_mdev_types': fakehost.T4_2Q}}
    elif kind == 'pci':
        spec['pci_devices'] = [dict(A2, address='0000:3b:00.0', class_id='030200', numa_node=0, holder=None),
                               dict(A2, address='0000:3c:00.0', class_id='030200', numa_node=1, holder=None)]
        spec['nova_conf'] = {'pci': {'device_spec': [PCI_SPEC], 'alias': [PCI_ALIAS],
                                     'report_in_placement': False}}
    elif kind == 'pcpu':
        spec['nova_conf'] = {'DEFAULT': {'vcpu_pin_set': '0-7'}}
    elif kind == 'sev':
        spec['sev'] = {'kernel': {'sev': True, 'sev_es': False, 'sev_snp': False},
                       'max_guests': 100, 'max_es_guests': 15}
        spec['nova_conf'] = {'libvirt': {'hw_machine_type': 'x86_64=q35'}}
    elif kind == 'mixed':
        spec['gpus'] = _gpus()
        spec['nova_conf'] = {'devices': {'enabled_mdev_types': fakehost.T4_2Q},
                             'DEFAULT': {'vcpu_pin_set': '0-7'}}
    elif kind == 'new':
        spec['nova_conf'] = {'compute': {'cpu_dedicated_set': '2-7', 'cpu_shared_set': '0-1'}}
    else:
        raise ValueError('unknown node kind %r (one of %s)' % (kind, ', '.join(KINDS)))
    spec['kind'] = kind
    return spec


KINDS = ('vgpu', 'pci', 'pcpu', 'sev', 'mixed', 'new')

#: what the upgrade to nova 34 changes in the node's nova.conf (None: the option goes), as the
#: upgrade twin's NEW_NOVA_CONF (tests/upgrade_twin/test_upgrade_twin.py) for the same kinds
UPGRADE_CONF = {
    'pci': {'pci': {'report_in_placement': True}},
    'pcpu': {'DEFAULT': {'vcpu_pin_set': None}, 'compute': {'cpu_dedicated_set': '0-7'}},
    'mixed': {'DEFAULT': {'vcpu_pin_set': None}, 'compute': {'cpu_dedicated_set': '0-7'}},
}


def upgraded_conf(kind, nova_conf):
    """The node's nova.conf sections after the upgrade to nova 34 (a new dict)."""
    out = {section: dict(options) for section, options in nova_conf.items()}
    for section, options in UPGRADE_CONF.get(kind, {}).items():
        for name, value in options.items():
            if value is None:
                out.get(section, {}).pop(name, None)
            else:
                out.setdefault(section, {})[name] = value
        if section in out and not out[section]:
            del out[section]
    return out


SERVICE_CONF = """[DEFAULT]
host = %(host)s
transport_url = %(transport_url)s
state_path = %(state)s
instances_path = %(state)s/instances
compute_driver = libvirt.LibvirtDriver
use_stderr = false
log_file = %(log)s
debug = %(debug)s
vif_plugging_timeout = 0
# nova 33's graceful stop sleeps manager_shutdown_timeout (default 160 s, capped at
# graceful_shutdown_timeout - 10 = 50 s) before it exits on SIGTERM: the twin stops in ~5 s
manager_shutdown_timeout = 5
graceful_shutdown_timeout = 15
vif_plugging_is_fatal = false
# the twin's guests are booted without networks; nova-compute answers no console
[vnc]
enabled = false
[spice]
enabled = false
[oslo_concurrency]
lock_path = %(state)s/locks
[libvirt]
virt_type = kvm
[placement]
%(placement)s
[service_user]
send_service_user_token = false
[workarounds]
disable_fallback_pcpu_query = false
"""


def placement_auth_lines(placement):
    """[placement] lines: a dict of keystoneauth options (auth_type, auth_url, ...)."""
    return '\n'.join('%s = %s' % (key, value) for key, value in sorted(placement.items()))


def create(directory, kind, hostname, transport_url, placement, debug=False):
    """Make the node directory of a ``kind`` node named ``hostname``; returns its path.

    ``placement``: the [placement] options of nova.conf as a dict (e.g. ``{'auth_type':
    'password', 'auth_url': ..., 'username': 'nova', ...}`` or, on Placement's noauth2,
    ``{'auth_type': 'admin_token', 'endpoint': URL, 'token': 'admin'}``).
    """
    directory = os.path.abspath(directory)
    for sub in ('domains', 'state', 'state/instances', 'state/locks'):
        os.makedirs(os.path.join(directory, sub), exist_ok=True)
    spec = hardware(kind, hostname)
    write_spec(directory, spec)
    write_new_conf(directory, spec)
    with open(os.path.join(directory, 'node.conf'), 'w') as handle:
        handle.write(SERVICE_CONF % {'host': hostname, 'transport_url': transport_url,
                                     'state': os.path.join(directory, 'state'),
                                     'log': os.path.join(directory, 'nova-compute.log'),
                                     'debug': 'true' if debug else 'false',
                                     'placement': placement_auth_lines(placement)})
    return directory


def new_conf_path(directory):
    """nova 34's nova.conf of the node, laid out before the roll (openstack-ansible builds the new
    venv and its config directory first): what the roll's discovery reads."""
    return os.path.join(os.path.abspath(directory), 'nova-34', 'nova.conf')


def write_new_conf(directory, spec):
    path = new_conf_path(directory)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as handle:
        handle.write(fakehost.nova_conf_text(upgraded_conf(spec['kind'], spec.get('nova_conf') or {})))
    return path


def read_spec(directory):
    with open(os.path.join(directory, 'host.json')) as handle:
        return json.load(handle)


def write_spec(directory, spec):
    """host.json, replaced atomically (the launcher rewrites it while the tests read it)."""
    path = os.path.join(directory, 'host.json')
    with open(path + '.tmp', 'w') as handle:
        json.dump(spec, handle, indent=2, sort_keys=True)
    os.replace(path + '.tmp', path)


def switch_conf(directory, release):
    """The node's nova.conf for ``release``: nova 34's adds :data:`UPGRADE_CONF` (the
    operator's upgrade of the node's configuration, done with the switch of venv)."""
    spec = read_spec(directory)
    if release == '34' and not spec.get('upgraded'):
        spec['nova_conf'] = upgraded_conf(spec['kind'], spec.get('nova_conf') or {})
        spec['upgraded'] = True
        write_spec(directory, spec)
        # the node's /etc/nova now is the new release's (the launcher rebuilds the rest of the tree)
        with open(os.path.join(directory, 'host', 'etc', 'nova', 'nova.conf'), 'w') as handle:
            handle.write(fakehost.nova_conf_text(spec['nova_conf']))
    return spec


def discovery_paths(directory):
    """What the rolling role's discovery reads on this node (its rolling_reshape_* variables)."""
    host = os.path.join(os.path.abspath(directory), 'host')
    paths = {'rolling_reshape_sysfs_root': os.path.join(host, 'sys'),
             'rolling_reshape_domain_xml_glob': os.path.join(host, 'etc', 'libvirt', 'qemu', '*.xml'),
             'rolling_reshape_nova_conf': new_conf_path(directory)}
    caps = os.path.join(host, 'etc', 'libvirt', 'domcapabilities.xml')
    if os.path.exists(caps):
        paths['rolling_reshape_domain_capabilities'] = caps
    return paths
