# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Discovery of the memory encryption kind (nova/virt/libvirt/host.py get_mem_encryption_inventories).

What nova 34 reads to report ``MEM_ENCRYPTION_CONTEXT``: the kernel's kvm_amd parameters
(``<sysfs>/module/kvm_amd/parameters/sev``, ``sev_es``, ``sev_snp``), libvirt's domain
capabilities XML (``virsh domcapabilities``: ``<sev>``, ``<tdx>``, ``<launchSecurity>``),
``[libvirt]`` of nova.conf, and for Intel TDX the misc cgroup's ``misc.capacity``.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import xml.etree.ElementTree as ET

from . import sysfs as _sysfs
from .sysfs import DiscoveryError
from ... import shapes as _shapes
from .common import DevicePart

MEM_ENCRYPTION_MODELS = (
    # (nova's model id, trait); the order of nova's fields.MemEncryptionModel.ALL
    ('amd_sev', 'HW_CPU_X86_AMD_SEV'),
    ('amd_sev_es', 'HW_CPU_X86_AMD_SEV_ES'),
    ('amd_sev_snp', 'HW_CPU_X86_AMD_SEV_SNP'),
    ('intel_tdx', 'HW_CPU_X86_INTEL_TDX'),
)
KVM_AMD_PARAMETERS = 'module/kvm_amd/parameters'
MISC_CGROUP_CAPACITY = 'fs/cgroup/misc.capacity'


def _kernel_flag(sysfs_root, name):
    path = os.path.join(sysfs_root, KVM_AMD_PARAMETERS, name)
    if not os.path.isfile(path):
        return False
    return _sysfs.read(path).strip().lower() in ('1', 'y', 'yes', 'true', 'on')


def _domcaps_text(domain_capabilities):
    if not domain_capabilities:
        return None, None
    text = domain_capabilities
    source = 'domain capabilities XML'
    if not text.lstrip().startswith('<'):
        source = text
        if not os.path.isfile(text):
            raise DiscoveryError('domain capabilities file %s does not exist' % text, path=text)
        text = _sysfs.read(text)
    return text, source


def _count(elem, tag, source):
    try:
        return int((elem.findtext(tag) or '0').strip())
    except ValueError:
        raise DiscoveryError('malformed %s: <%s> is not a number' % (source, tag), path=source)


def _amd_models(sysfs_root, sev, sectypes, source):
    """``{model: total}`` of AMD SEV, SEV-ES and SEV-SNP (see :func:`mem_encryption`)."""
    models = {}
    if not (_kernel_flag(sysfs_root, 'sev') and sev is not None and sev.get('supported') == 'yes'):
        return models
    models['amd_sev'] = _count(sev, 'maxGuests', source)
    snp_kernel = _kernel_flag(sysfs_root, 'sev_snp')
    if _kernel_flag(sysfs_root, 'sev_es') and not snp_kernel:
        models['amd_sev_es'] = _count(sev, 'maxESGuests', source)
    if snp_kernel and 'sev-snp' in sectypes:
        models['amd_sev_snp'] = _count(sev, 'maxESGuests', source)
    return models


def _tdx_cgroup_capacity(sysfs_root):
    path = os.path.join(sysfs_root, MISC_CGROUP_CAPACITY)
    if not os.path.isfile(path):
        return None
    for line in _sysfs.read(path).splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == 'tdx' and parts[1].isdigit():
            return int(parts[1])
    return None


def mem_encryption(sysfs_root, domain_capabilities, nova, warnings):
    """``{source, models: {model: {total, trait}}}`` as nova 34 computes them, or None.

    AMD SEV needs the kernel's kvm_amd ``sev`` parameter and ``<sev supported='yes'>``
    in the domain capabilities (total ``maxGuests``); SEV-ES also the ``sev_es``
    parameter and no ``sev_snp`` (total ``maxESGuests``); SEV-SNP the ``sev_snp``
    parameter and ``sev-snp`` among the ``<launchSecurity>`` sectypes (total
    ``maxESGuests``); Intel TDX ``[libvirt]cpu_mode = host-passthrough``, ``<tdx
    supported='yes'>`` and a capacity: ``[libvirt]num_intel_tdx_guests`` when set, else
    the ``tdx`` line of the misc cgroup's ``misc.capacity``.  (nova 34 no longer reads
    ``[libvirt]num_memory_encrypted_guests``: AMD totals come from libvirt only.)
    QEMU is assumed recent enough for SEV-ES (nova: 8.0.0); only supported models with
    a total above 0 are listed.
    """
    text, source = _domcaps_text(domain_capabilities)
    if text is None:
        if _kernel_flag(sysfs_root, 'sev'):
            warnings.append('the kernel enables AMD SEV (kvm_amd sev) but no domain capabilities XML '
                            'was given: memory encryption providers are not planned')
        return None
    try:
        caps = ET.fromstring(text)
    except ET.ParseError as exc:
        raise DiscoveryError('malformed %s: not valid XML (%s)' % (source, exc), path=source)
    features = caps.find('features')
    sev = features.find('sev') if features is not None else None
    tdx = features.find('tdx') if features is not None else None
    launch = features.find('launchSecurity') if features is not None else None
    sectypes = []
    if launch is not None and launch.get('supported') == 'yes':
        sectypes = [(v.text or '').strip() for v in launch.findall("enum[@name='sectype']/value")]
    models = _amd_models(sysfs_root, sev, sectypes, source)
    libvirt = (nova or {}).get('libvirt') or {}
    if tdx is not None and tdx.get('supported') == 'yes' and libvirt.get('cpu_mode') == 'host-passthrough':
        capacity = libvirt.get('num_intel_tdx_guests')
        if capacity is None:
            capacity = _tdx_cgroup_capacity(sysfs_root)
        models['intel_tdx'] = capacity or 0
    traits = dict(MEM_ENCRYPTION_MODELS)
    return {'source': source,
            'models': dict((m, {'total': n, 'trait': traits[m]}) for m, n in sorted(models.items()))}


class MemEncryption(DevicePart):
    """The report's ``mem_encryption``: the models nova 34 reports and their slots."""

    name = 'mem_encryption'
    report_keys = ('mem_encryption',)
    fields = {'mem_encryption': 'mapping?'}

    def read(self, reading, report):
        request = reading.request
        return {'mem_encryption': mem_encryption(request.sysfs_root, request.domain_capabilities,
                                                 reading.nova, reading.warnings)}

    def check(self, devices, field):
        enc = devices.get('mem_encryption')
        if enc is None:
            return
        models = _shapes.expect(enc.get('models'), 'mapping', field + '.mem_encryption.models',
                                'a mapping of model -> {total, trait}', optional=True)
        for name, info in (models or {}).items():
            _shapes.expect_fields(info, '%s.mem_encryption.models.%s' % (field, name),
                                  {'total': 'int?', 'trait': 'text!'})


PART = MemEncryption()
