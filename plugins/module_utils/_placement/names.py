# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Standard resource classes and traits that Placement 16.0.0 knows at start.

Placement seeds its database from the ``os-resource-classes`` and ``os-traits``
libraries when it starts; the embedded store seeds the same names.  The lists
are literal tuples GENERATED from os-resource-classes 1.1.0 and os-traits 3.9.0 (the
versions openstack-placement 16.0.0 installs with) so the core stays
dependency-free: nothing here imports those libraries at run time.

Regenerate (same versions) with::

    python -c "import os_resource_classes as o; print(o.STANDARDS)"
    python -c "import os_traits as t; print(sorted(t.get_traits()))"

``STANDARD_RESOURCE_CLASSES`` keeps the library's order (Placement gives the
standard classes ids in that order); ``STANDARD_TRAITS`` is sorted.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib

OS_RESOURCE_CLASSES_VERSION = '1.1.0'
OS_TRAITS_VERSION = '3.9.0'

# os-resource-classes 1.1.0: os_resource_classes.STANDARDS
STANDARD_RESOURCE_CLASSES = (
    'VCPU',
    'MEMORY_MB',
    'DISK_GB',
    'PCI_DEVICE',
    'SRIOV_NET_VF',
    'NUMA_SOCKET',
    'NUMA_CORE',
    'NUMA_THREAD',
    'NUMA_MEMORY_MB',
    'IPV4_ADDRESS',
    'VGPU',
    'VGPU_DISPLAY_HEAD',
    'NET_BW_EGR_KILOBIT_PER_SEC',
    'NET_BW_IGR_KILOBIT_PER_SEC',
    'PCPU',
    'MEM_ENCRYPTION_CONTEXT',
    'FPGA',
    'PGPU',
    'NET_PACKET_RATE_KILOPACKET_PER_SEC',
    'NET_PACKET_RATE_EGR_KILOPACKET_PER_SEC',
    'NET_PACKET_RATE_IGR_KILOPACKET_PER_SEC',
)

# os-traits 3.9.0: sorted(os_traits.get_traits())
STANDARD_TRAITS = (
    'COMPUTE_ACCELERATORS',
    'COMPUTE_ADDRESS_SPACE_EMULATED',
    'COMPUTE_ADDRESS_SPACE_PASSTHROUGH',
    'COMPUTE_ARCH_AARCH64',
    'COMPUTE_ARCH_MIPSEL',
    'COMPUTE_ARCH_PPC64LE',
    'COMPUTE_ARCH_RISCV64',
    'COMPUTE_ARCH_S390X',
    'COMPUTE_ARCH_X86_64',
    'COMPUTE_CONFIG_DRIVE_REGENERATION',
    'COMPUTE_DEVICE_TAGGING',
    'COMPUTE_EPHEMERAL_ENCRYPTION',
    'COMPUTE_EPHEMERAL_ENCRYPTION_LUKS',
    'COMPUTE_EPHEMERAL_ENCRYPTION_LUKSV2',
    'COMPUTE_EPHEMERAL_ENCRYPTION_PLAIN',
    'COMPUTE_FIRMWARE_BIOS',
    'COMPUTE_FIRMWARE_UEFI',
    'COMPUTE_GRAPHICS_MODEL_BOCHS',
    'COMPUTE_GRAPHICS_MODEL_CIRRUS',
    'COMPUTE_GRAPHICS_MODEL_GOP',
    'COMPUTE_GRAPHICS_MODEL_NONE',
    'COMPUTE_GRAPHICS_MODEL_QXL',
    'COMPUTE_GRAPHICS_MODEL_VGA',
    'COMPUTE_GRAPHICS_MODEL_VIRTIO',
    'COMPUTE_GRAPHICS_MODEL_VMVGA',
    'COMPUTE_GRAPHICS_MODEL_XEN',
    'COMPUTE_IMAGE_TYPE_AKI',
    'COMPUTE_IMAGE_TYPE_AMI',
    'COMPUTE_IMAGE_TYPE_ARI',
    'COMPUTE_IMAGE_TYPE_ISO',
    'COMPUTE_IMAGE_TYPE_PLOOP',
    'COMPUTE_IMAGE_TYPE_QCOW2',
    'COMPUTE_IMAGE_TYPE_RAW',
    'COMPUTE_IMAGE_TYPE_VDI',
    'COMPUTE_IMAGE_TYPE_VHD',
    'COMPUTE_IMAGE_TYPE_VHDX',
    'COMPUTE_IMAGE_TYPE_VMDK',
    'COMPUTE_MANAGED_PCI_DEVICE',
    'COMPUTE_MEM_BACKING_FILE',
    'COMPUTE_MIGRATE_AUTO_CONVERGE',
    'COMPUTE_MIGRATE_POST_COPY',
    'COMPUTE_NET_ATTACH_INTERFACE',
    'COMPUTE_NET_ATTACH_INTERFACE_WITH_TAG',
    'COMPUTE_NET_VIF_MODEL_E1000',
    'COMPUTE_NET_VIF_MODEL_E1000E',
    'COMPUTE_NET_VIF_MODEL_IGB',
    'COMPUTE_NET_VIF_MODEL_LAN9118',
    'COMPUTE_NET_VIF_MODEL_NE2K_PCI',
    'COMPUTE_NET_VIF_MODEL_NETFRONT',
    'COMPUTE_NET_VIF_MODEL_PCNET',
    'COMPUTE_NET_VIF_MODEL_RTL8139',
    'COMPUTE_NET_VIF_MODEL_SPAPR_VLAN',
    'COMPUTE_NET_VIF_MODEL_SRIOV',
    'COMPUTE_NET_VIF_MODEL_VIRTIO',
    'COMPUTE_NET_VIF_MODEL_VMXNET',
    'COMPUTE_NET_VIF_MODEL_VMXNET3',
    'COMPUTE_NET_VIRTIO_PACKED',
    'COMPUTE_NODE',
    'COMPUTE_REMOTE_MANAGED_PORTS',
    'COMPUTE_RESCUE_BFV',
    'COMPUTE_SAME_HOST_COLD_MIGRATE',
    'COMPUTE_SECURITY_STATELESS_FIRMWARE',
    'COMPUTE_SECURITY_TPM_1_2',
    'COMPUTE_SECURITY_TPM_2_0',
    'COMPUTE_SECURITY_TPM_CRB',
    'COMPUTE_SECURITY_TPM_SECRET_SECURITY_DEPLOYMENT',
    'COMPUTE_SECURITY_TPM_SECRET_SECURITY_HOST',
    'COMPUTE_SECURITY_TPM_SECRET_SECURITY_USER',
    'COMPUTE_SECURITY_TPM_TIS',
    'COMPUTE_SECURITY_UEFI_SECURE_BOOT',
    'COMPUTE_SHARE_LOCAL_FS',
    'COMPUTE_SOCKET_PCI_NUMA_AFFINITY',
    'COMPUTE_SOUND_MODEL_AC97',
    'COMPUTE_SOUND_MODEL_ES1370',
    'COMPUTE_SOUND_MODEL_ICH6',
    'COMPUTE_SOUND_MODEL_ICH9',
    'COMPUTE_SOUND_MODEL_PCSPK',
    'COMPUTE_SOUND_MODEL_SB16',
    'COMPUTE_SOUND_MODEL_USB',
    'COMPUTE_SOUND_MODEL_VIRTIO',
    'COMPUTE_STATUS_DISABLED',
    'COMPUTE_STORAGE_BUS_FDC',
    'COMPUTE_STORAGE_BUS_IDE',
    'COMPUTE_STORAGE_BUS_LXC',
    'COMPUTE_STORAGE_BUS_SATA',
    'COMPUTE_STORAGE_BUS_SCSI',
    'COMPUTE_STORAGE_BUS_UML',
    'COMPUTE_STORAGE_BUS_USB',
    'COMPUTE_STORAGE_BUS_VIRTIO',
    'COMPUTE_STORAGE_BUS_XEN',
    'COMPUTE_STORAGE_VIRTIO_FS',
    'COMPUTE_TRUSTED_CERTS',
    'COMPUTE_USB_MODEL_NEC_XHCI',
    'COMPUTE_USB_MODEL_QEMU_XHCI',
    'COMPUTE_VIOMMU_MODEL_AUTO',
    'COMPUTE_VIOMMU_MODEL_INTEL',
    'COMPUTE_VIOMMU_MODEL_SMMUV3',
    'COMPUTE_VIOMMU_MODEL_VIRTIO',
    'COMPUTE_VOLUME_ATTACH',
    'COMPUTE_VOLUME_ATTACH_WITH_TAG',
    'COMPUTE_VOLUME_EXTEND',
    'COMPUTE_VOLUME_MULTI_ATTACH',
    'HW_ARCH_AARCH64',
    'HW_ARCH_ALPHA',
    'HW_ARCH_ARMV6',
    'HW_ARCH_ARMV7',
    'HW_ARCH_ARMV7B',
    'HW_ARCH_CRIS',
    'HW_ARCH_I686',
    'HW_ARCH_IA64',
    'HW_ARCH_LM32',
    'HW_ARCH_M68K',
    'HW_ARCH_MICROBLAZE',
    'HW_ARCH_MICROBLAZEEL',
    'HW_ARCH_MIPS',
    'HW_ARCH_MIPS64',
    'HW_ARCH_MIPS64EL',
    'HW_ARCH_MIPSEL',
    'HW_ARCH_OPENRISC',
    'HW_ARCH_PARISC',
    'HW_ARCH_PARISC64',
    'HW_ARCH_PPC',
    'HW_ARCH_PPC64',
    'HW_ARCH_PPC64LE',
    'HW_ARCH_PPCEMB',
    'HW_ARCH_PPCLE',
    'HW_ARCH_S390',
    'HW_ARCH_S390X',
    'HW_ARCH_SH4',
    'HW_ARCH_SH4EB',
    'HW_ARCH_SPARC',
    'HW_ARCH_SPARC64',
    'HW_ARCH_UNICORE32',
    'HW_ARCH_X86_64',
    'HW_ARCH_XTENSA',
    'HW_ARCH_XTENSAEB',
    'HW_CPU_AARCH64_AES',
    'HW_CPU_AARCH64_ASIMD',
    'HW_CPU_AARCH64_ASIMDDP',
    'HW_CPU_AARCH64_ASIMDHP',
    'HW_CPU_AARCH64_ASIMDRDM',
    'HW_CPU_AARCH64_ATOMICS',
    'HW_CPU_AARCH64_CPUID',
    'HW_CPU_AARCH64_CRC32',
    'HW_CPU_AARCH64_DCPOP',
    'HW_CPU_AARCH64_EVTSTRM',
    'HW_CPU_AARCH64_FCMA',
    'HW_CPU_AARCH64_FP',
    'HW_CPU_AARCH64_FPHP',
    'HW_CPU_AARCH64_JSCVT',
    'HW_CPU_AARCH64_LRCPC',
    'HW_CPU_AARCH64_PMULL',
    'HW_CPU_AARCH64_SHA1',
    'HW_CPU_AARCH64_SHA2',
    'HW_CPU_AARCH64_SHA3',
    'HW_CPU_AARCH64_SHA512',
    'HW_CPU_AARCH64_SM3',
    'HW_CPU_AARCH64_SM4',
    'HW_CPU_AARCH64_SVE',
    'HW_CPU_AMD_SEV',
    'HW_CPU_HYPERTHREADING',
    'HW_CPU_PPC64LE_POWER8',
    'HW_CPU_PPC64LE_POWER9',
    'HW_CPU_X86_3DNOW',
    'HW_CPU_X86_ABM',
    'HW_CPU_X86_AESNI',
    'HW_CPU_X86_AMD_IBPB',
    'HW_CPU_X86_AMD_NO_SSB',
    'HW_CPU_X86_AMD_SEV',
    'HW_CPU_X86_AMD_SEV_ES',
    'HW_CPU_X86_AMD_SEV_SNP',
    'HW_CPU_X86_AMD_SSBD',
    'HW_CPU_X86_AMD_SVM',
    'HW_CPU_X86_AMD_VIRT_SSBD',
    'HW_CPU_X86_AMXBF16',
    'HW_CPU_X86_AMXINT8',
    'HW_CPU_X86_AMXTILE',
    'HW_CPU_X86_ASF',
    'HW_CPU_X86_AVX',
    'HW_CPU_X86_AVX2',
    'HW_CPU_X86_AVX512BITALG',
    'HW_CPU_X86_AVX512BW',
    'HW_CPU_X86_AVX512CD',
    'HW_CPU_X86_AVX512DQ',
    'HW_CPU_X86_AVX512ER',
    'HW_CPU_X86_AVX512F',
    'HW_CPU_X86_AVX512GFNI',
    'HW_CPU_X86_AVX512IFMA',
    'HW_CPU_X86_AVX512PF',
    'HW_CPU_X86_AVX512VAES',
    'HW_CPU_X86_AVX512VBMI',
    'HW_CPU_X86_AVX512VBMI2',
    'HW_CPU_X86_AVX512VL',
    'HW_CPU_X86_AVX512VNNI',
    'HW_CPU_X86_AVX512VPCLMULQDQ',
    'HW_CPU_X86_AVX512VPOPCNTDQ',
    'HW_CPU_X86_BMI',
    'HW_CPU_X86_BMI2',
    'HW_CPU_X86_CLMUL',
    'HW_CPU_X86_F16C',
    'HW_CPU_X86_FMA3',
    'HW_CPU_X86_FMA4',
    'HW_CPU_X86_INTEL_MD_CLEAR',
    'HW_CPU_X86_INTEL_PCID',
    'HW_CPU_X86_INTEL_SPEC_CTRL',
    'HW_CPU_X86_INTEL_SSBD',
    'HW_CPU_X86_INTEL_TDX',
    'HW_CPU_X86_INTEL_VMX',
    'HW_CPU_X86_MMX',
    'HW_CPU_X86_MPX',
    'HW_CPU_X86_PDPE1GB',
    'HW_CPU_X86_SGX',
    'HW_CPU_X86_SHA',
    'HW_CPU_X86_SSE',
    'HW_CPU_X86_SSE2',
    'HW_CPU_X86_SSE3',
    'HW_CPU_X86_SSE41',
    'HW_CPU_X86_SSE42',
    'HW_CPU_X86_SSE4A',
    'HW_CPU_X86_SSSE3',
    'HW_CPU_X86_STIBP',
    'HW_CPU_X86_SVM',
    'HW_CPU_X86_TBM',
    'HW_CPU_X86_TSX',
    'HW_CPU_X86_VMX',
    'HW_CPU_X86_XOP',
    'HW_GPU_API_DIRECT2D',
    'HW_GPU_API_DIRECT3D_V10_0',
    'HW_GPU_API_DIRECT3D_V10_1',
    'HW_GPU_API_DIRECT3D_V11_0',
    'HW_GPU_API_DIRECT3D_V11_1',
    'HW_GPU_API_DIRECT3D_V11_2',
    'HW_GPU_API_DIRECT3D_V11_3',
    'HW_GPU_API_DIRECT3D_V12_0',
    'HW_GPU_API_DIRECT3D_V6_0',
    'HW_GPU_API_DIRECT3D_V7_0',
    'HW_GPU_API_DIRECT3D_V8_0',
    'HW_GPU_API_DIRECT3D_V8_1',
    'HW_GPU_API_DIRECT3D_V9_0',
    'HW_GPU_API_DIRECT3D_V9_0B',
    'HW_GPU_API_DIRECT3D_V9_0C',
    'HW_GPU_API_DIRECT3D_V9_0L',
    'HW_GPU_API_DIRECTX_V10',
    'HW_GPU_API_DIRECTX_V11',
    'HW_GPU_API_DIRECTX_V12',
    'HW_GPU_API_DXVA',
    'HW_GPU_API_OPENCL_V1_0',
    'HW_GPU_API_OPENCL_V1_1',
    'HW_GPU_API_OPENCL_V1_2',
    'HW_GPU_API_OPENCL_V2_0',
    'HW_GPU_API_OPENCL_V2_1',
    'HW_GPU_API_OPENCL_V2_2',
    'HW_GPU_API_OPENGL_V1_1',
    'HW_GPU_API_OPENGL_V1_2',
    'HW_GPU_API_OPENGL_V1_3',
    'HW_GPU_API_OPENGL_V1_4',
    'HW_GPU_API_OPENGL_V1_5',
    'HW_GPU_API_OPENGL_V2_0',
    'HW_GPU_API_OPENGL_V2_1',
    'HW_GPU_API_OPENGL_V3_0',
    'HW_GPU_API_OPENGL_V3_1',
    'HW_GPU_API_OPENGL_V3_2',
    'HW_GPU_API_OPENGL_V3_3',
    'HW_GPU_API_OPENGL_V4_0',
    'HW_GPU_API_OPENGL_V4_1',
    'HW_GPU_API_OPENGL_V4_2',
    'HW_GPU_API_OPENGL_V4_3',
    'HW_GPU_API_OPENGL_V4_4',
    'HW_GPU_API_OPENGL_V4_5',
    'HW_GPU_API_VULKAN',
    'HW_GPU_CUDA_COMPUTE_CAPABILITY_V1_0',
    'HW_GPU_CUDA_COMPUTE_CAPABILITY_V1_1',
    'HW_GPU_CUDA_COMPUTE_CAPABILITY_V1_2',
    'HW_GPU_CUDA_COMPUTE_CAPABILITY_V1_3',
    'HW_GPU_CUDA_COMPUTE_CAPABILITY_V2_0',
    'HW_GPU_CUDA_COMPUTE_CAPABILITY_V2_1',
    'HW_GPU_CUDA_COMPUTE_CAPABILITY_V3_0',
    'HW_GPU_CUDA_COMPUTE_CAPABILITY_V3_2',
    'HW_GPU_CUDA_COMPUTE_CAPABILITY_V3_5',
    'HW_GPU_CUDA_COMPUTE_CAPABILITY_V3_7',
    'HW_GPU_CUDA_COMPUTE_CAPABILITY_V5_0',
    'HW_GPU_CUDA_COMPUTE_CAPABILITY_V5_2',
    'HW_GPU_CUDA_COMPUTE_CAPABILITY_V5_3',
    'HW_GPU_CUDA_COMPUTE_CAPABILITY_V6_0',
    'HW_GPU_CUDA_COMPUTE_CAPABILITY_V6_1',
    'HW_GPU_CUDA_COMPUTE_CAPABILITY_V6_2',
    'HW_GPU_CUDA_COMPUTE_CAPABILITY_V7_0',
    'HW_GPU_CUDA_COMPUTE_CAPABILITY_V7_1',
    'HW_GPU_CUDA_COMPUTE_CAPABILITY_V7_2',
    'HW_GPU_CUDA_SDK_V10_0',
    'HW_GPU_CUDA_SDK_V6_5',
    'HW_GPU_CUDA_SDK_V7_5',
    'HW_GPU_CUDA_SDK_V8_0',
    'HW_GPU_CUDA_SDK_V9_0',
    'HW_GPU_CUDA_SDK_V9_1',
    'HW_GPU_CUDA_SDK_V9_2',
    'HW_GPU_MAX_DISPLAY_HEADS_1',
    'HW_GPU_MAX_DISPLAY_HEADS_2',
    'HW_GPU_MAX_DISPLAY_HEADS_4',
    'HW_GPU_MAX_DISPLAY_HEADS_6',
    'HW_GPU_MAX_DISPLAY_HEADS_8',
    'HW_GPU_RESOLUTION_W1024H600',
    'HW_GPU_RESOLUTION_W1024H768',
    'HW_GPU_RESOLUTION_W1152H864',
    'HW_GPU_RESOLUTION_W1280H1024',
    'HW_GPU_RESOLUTION_W1280H720',
    'HW_GPU_RESOLUTION_W1280H768',
    'HW_GPU_RESOLUTION_W1280H800',
    'HW_GPU_RESOLUTION_W1360H768',
    'HW_GPU_RESOLUTION_W1366H768',
    'HW_GPU_RESOLUTION_W1440H900',
    'HW_GPU_RESOLUTION_W1600H1200',
    'HW_GPU_RESOLUTION_W1600H900',
    'HW_GPU_RESOLUTION_W1680H1050',
    'HW_GPU_RESOLUTION_W1920H1080',
    'HW_GPU_RESOLUTION_W1920H1200',
    'HW_GPU_RESOLUTION_W2560H1440',
    'HW_GPU_RESOLUTION_W2560H1600',
    'HW_GPU_RESOLUTION_W320H240',
    'HW_GPU_RESOLUTION_W3840H2160',
    'HW_GPU_RESOLUTION_W640H480',
    'HW_GPU_RESOLUTION_W7680H4320',
    'HW_GPU_RESOLUTION_W800H600',
    'HW_NIC_ACCEL_DEFLATE',
    'HW_NIC_ACCEL_DIFFIEH',
    'HW_NIC_ACCEL_ECC',
    'HW_NIC_ACCEL_IPSEC',
    'HW_NIC_ACCEL_LZS',
    'HW_NIC_ACCEL_RSA',
    'HW_NIC_ACCEL_SSL',
    'HW_NIC_ACCEL_TLS',
    'HW_NIC_DCB_ETS',
    'HW_NIC_DCB_PFC',
    'HW_NIC_DCB_QCN',
    'HW_NIC_MULTIQUEUE',
    'HW_NIC_OFFLOAD_FDF',
    'HW_NIC_OFFLOAD_GENEVE',
    'HW_NIC_OFFLOAD_GRE',
    'HW_NIC_OFFLOAD_GRO',
    'HW_NIC_OFFLOAD_GSO',
    'HW_NIC_OFFLOAD_L2CRC',
    'HW_NIC_OFFLOAD_LRO',
    'HW_NIC_OFFLOAD_LSO',
    'HW_NIC_OFFLOAD_QINQ',
    'HW_NIC_OFFLOAD_RDMA',
    'HW_NIC_OFFLOAD_RX',
    'HW_NIC_OFFLOAD_RXHASH',
    'HW_NIC_OFFLOAD_RXVLAN',
    'HW_NIC_OFFLOAD_SCS',
    'HW_NIC_OFFLOAD_SG',
    'HW_NIC_OFFLOAD_SWITCHDEV',
    'HW_NIC_OFFLOAD_TCS',
    'HW_NIC_OFFLOAD_TSO',
    'HW_NIC_OFFLOAD_TX',
    'HW_NIC_OFFLOAD_TXUDP',
    'HW_NIC_OFFLOAD_TXVLAN',
    'HW_NIC_OFFLOAD_UCS',
    'HW_NIC_OFFLOAD_UFO',
    'HW_NIC_OFFLOAD_VXLAN',
    'HW_NIC_PROGRAMMABLE_PIPELINE',
    'HW_NIC_SRIOV',
    'HW_NIC_SRIOV_MULTIQUEUE',
    'HW_NIC_SRIOV_QOS_RX',
    'HW_NIC_SRIOV_QOS_TX',
    'HW_NIC_SRIOV_TRUSTED',
    'HW_NIC_VMDQ',
    'HW_NUMA_ROOT',
    'HW_NVME_BES',
    'HW_NVME_CES',
    'HW_NVME_WZS',
    'HW_PCI_LIVE_MIGRATABLE',
    'HW_PCI_ONE_TIME_USE',
    'MISC_SHARES_VIA_AGGREGATE',
    'OWNER_CYBORG',
    'OWNER_NOVA',
    'STORAGE_DISK_HDD',
    'STORAGE_DISK_SSD',
)

_STANDARD_RC_SET = frozenset(STANDARD_RESOURCE_CLASSES)
_STANDARD_TRAIT_SET = frozenset(STANDARD_TRAITS)


def is_standard_resource_class(name):
    return name in _STANDARD_RC_SET


def is_standard_trait(name):
    return name in _STANDARD_TRAIT_SET


# ---------------------------------------------------------------------------
# names -> file names (snapshots, fleet report node records)

#: Characters a name keeps as they are in a file name.
_FILE_SAFE = frozenset('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-')
#: Longest file stem :func:`file_stem` returns (a file name must stay under 255 bytes
#: with a ``.<UTC stamp>.json`` suffix added).
FILE_STEM_MAX = 180


def file_stem(name):
    """The file-name form of a provider or node name: the ONE mapping every file named after a name uses.

    Readable, file-system safe and injective: letters, digits, ``_``, ``-`` and ``.``
    (not as the first character, which would hide the file) are kept; every other
    character is written ``%XX`` per UTF-8 byte (``%`` itself too), so ``cmp/01``
    gives ``cmp%2F01`` and ``cmp_01`` stays ``cmp_01``, and :func:`name_of_file_stem`
    gives the name back.  A stem longer than :data:`FILE_STEM_MAX` is cut and ends
    with ``~`` and 16 hex digits of the SHA-256 of the exact name (``~`` never
    appears otherwise: it is escaped).  An empty name gives ``%``.
    """
    text = '' if name is None else str(name)
    if not text:
        return '%'
    out = []
    for index, char in enumerate(text):
        if char in _FILE_SAFE and not (index == 0 and char == '.'):
            out.append(char)
        else:
            out.extend('%%%02X' % byte for byte in char.encode('utf-8', 'surrogatepass'))
    stem = ''.join(out)
    if len(stem) > FILE_STEM_MAX:
        digest = hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:16]
        cut = stem[:FILE_STEM_MAX - 17]
        # never cut an escape in half
        tail = cut.rfind('%')
        if tail >= len(cut) - 2:
            cut = cut[:tail]
        stem = '%s~%s' % (cut, digest)
    return stem


def name_of_file_stem(stem):
    """The name :func:`file_stem` made ``stem`` of; None for a cut (hashed) or malformed stem."""
    if stem == '%':
        return ''
    if '~' in stem:
        return None
    data = bytearray()
    index = 0
    while index < len(stem):
        char = stem[index]
        if char == '%':
            try:
                data.append(int(stem[index + 1:index + 3], 16))
            except ValueError:
                return None
            index += 3
        else:
            data.extend(char.encode('ascii', 'replace'))
            index += 1
    try:
        return data.decode('utf-8', 'surrogatepass')
    except UnicodeDecodeError:
        return None


def legacy_file_stem(name):
    """The file-name form used before :func:`file_stem` (anything but ``[A-Za-z0-9._-]`` -> ``_``,
    leading dots dropped): not injective, only used to find files written under it."""
    text = ''.join(c if c in _FILE_SAFE else '_' for c in str(name or 'provider'))
    return text.lstrip('.') or 'provider'
