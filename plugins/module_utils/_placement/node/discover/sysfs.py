# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The readers every discovery module shares: sysfs files, PCI addresses, CPU lists, filters.

The lowest floor of discovery: it imports nothing of the node pass, so :mod:`..novaconf`
and :mod:`..nvidia_vfio` read through it and the per-kind modules of this package
(:mod:`.gpus`, :mod:`.pci`, :mod:`.numa`, :mod:`.mem_encryption`, :mod:`.domains`) build on it.

Every reader names the file in its error: :class:`DiscoveryError` (a PlacementError, status
0, code ``placement_upgrade.discovery``, ``.path`` set).  An absent optional file gives the
reader's default.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ...errors import DISCOVERY, LocalFileError

DISCOVERY_CODE = DISCOVERY  # the catalog's (errors.py); its name here for the callers

BDF_RE = re.compile(r'^[0-9a-fA-F]{4,}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$')
HEX_ID_RE = re.compile(r'^(?:0[xX])?([0-9a-fA-F]{1,4})$')
CLASS_RE = re.compile(r'^(?:0[xX])?([0-9a-fA-F]{1,6})$')
UUID_RE = re.compile(r'^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$')


class DiscoveryError(LocalFileError):
    """A sysfs file or domain XML could not be read or parsed.

    The message always names the file (or the XML source) at fault.
    """

    default_code = DISCOVERY_CODE
    default_title = 'Discovery Error'


# ---------------------------------------------------------------------------
# small readers: every one names the file in its error


def read(path):
    """Return the stripped text of ``path`` or raise DiscoveryError naming it."""
    try:
        with open(path, 'rb') as handle:
            data = handle.read()
    except (IOError, OSError) as exc:
        raise DiscoveryError('cannot read %s: %s' % (path, exc.strerror or exc), path=path)
    try:
        return data.decode('utf-8').strip()
    except UnicodeDecodeError:
        raise DiscoveryError('malformed %s: not UTF-8 text' % path, path=path)


def read_optional(path, default=None):
    if not os.path.lexists(path):
        return default
    return read(path)


def read_int(path, default=None, required=False):
    if not os.path.lexists(path):
        if required:
            raise DiscoveryError('missing %s' % path, path=path)
        return default
    text = read(path)
    try:
        return int(text, 10)
    except ValueError:
        raise DiscoveryError('malformed %s: expected an integer, got %r' % (path, text[:80]), path=path)


def _read_id(path, pattern, expected, digits):
    """The id in ``path`` (``0x`` optional) in lower case, ``digits`` wide; None when absent."""
    if not os.path.lexists(path):
        return None
    text = read(path)
    match = pattern.match(text)
    if not match:
        raise DiscoveryError('malformed %s: expected %s, got %r' % (path, expected, text[:80]), path=path)
    return match.group(1).lower().zfill(digits)


def read_hex_id(path):
    """'0x10de' -> '10de'; None when the file is absent."""
    return _read_id(path, HEX_ID_RE, 'a hexadecimal id like 0x10de', 4)


def read_class(path):
    """'0x030200' -> '030200'; None when the file is absent."""
    return _read_id(path, CLASS_RE, 'a PCI class like 0x030200', 6)


def list_dir(path):
    """Sorted entries of ``path``; [] when it does not exist."""
    if not os.path.isdir(path):
        return []
    try:
        return sorted(os.listdir(path))
    except (IOError, OSError) as exc:
        raise DiscoveryError('cannot list %s: %s' % (path, exc.strerror or exc), path=path)


def parse_cpulist(text, path='cpulist'):
    """Kernel list syntax ('0-15,32-47', '0,2,4-7', '') -> sorted ints.

    ``path`` only names the source in the error.
    """
    result = set()
    text = (text or '').strip()
    if not text:
        return []
    for part in text.split(','):
        part = part.strip()
        try:
            if '-' in part:
                low, high = part.split('-', 1)
                # '0-15:2/4' (stride syntax) is accepted by the kernel's parser on
                # input but never printed in these files: refuse it.
                low, high = int(low, 10), int(high, 10)
                if low < 0 or high < low:
                    raise ValueError(part)
                result.update(range(low, high + 1))
            else:
                value = int(part, 10)
                if value < 0:
                    raise ValueError(part)
                result.add(value)
        except ValueError:
            raise DiscoveryError('malformed %s: bad CPU list %r' % (path, text[:80]), path=path)
    return sorted(result)


def normalize_address(text):
    """'0000:84:00.0' in lower case; raise ValueError when it is not a BDF."""
    text = (text or '').strip()
    if not BDF_RE.match(text):
        raise ValueError('not a PCI address: %r' % (text,))
    return text.lower()


def canonical_uuid(text):
    """A uuid (with or without dashes, any case) in its canonical lower-case dashed form."""
    text = text.strip().lower().replace('-', '')
    return '%s-%s-%s-%s-%s' % (text[0:8], text[8:12], text[12:16], text[16:20], text[20:32])


# ---------------------------------------------------------------------------
# filters


def normalize_pci_filters(pci_filters):
    """Validate ``[{vendor_id, product_id?}]`` -> [(vendor, product_or_None)].

    Ids are 4 hex digits, with or without ``0x``, any case.
    """
    result = []
    for index, item in enumerate(pci_filters or []):
        if not isinstance(item, dict):
            raise DiscoveryError('pci_filters[%d]: expected a mapping with vendor_id and optional '
                                 'product_id, got %r' % (index, item))
        vendor = item.get('vendor_id')
        product = item.get('product_id')
        ids = []
        for key, value in (('vendor_id', vendor), ('product_id', product)):
            if value is None or (key == 'product_id' and value == ''):
                ids.append(None)
                continue
            match = HEX_ID_RE.match(str(value).strip())
            if not match or len(match.group(1)) != 4:
                raise DiscoveryError('pci_filters[%d].%s: expected 4 hexadecimal digits like "10de", '
                                     'got %r' % (index, key, value))
            ids.append(match.group(1).lower())
        if ids[0] is None:
            raise DiscoveryError('pci_filters[%d]: vendor_id is required' % index)
        result.append((ids[0], ids[1]))
    return result


def filters_match(filters, vendor_id, product_id):
    """Whether normalized ``filters`` select a device of ``vendor_id`` / ``product_id``."""
    for vendor, product in filters:
        if vendor == vendor_id and (product is None or product == product_id):
            return True
    return False


# ---------------------------------------------------------------------------
# sysfs


class Sysfs(object):
    """The directories of a sysfs tree rooted at ``root`` (``/sys``, or a fake host's)."""

    def __init__(self, root):
        self.root = root
        self.pci_dir = os.path.join(root, 'bus', 'pci', 'devices')
        self.mdev_bus_dir = os.path.join(root, 'class', 'mdev_bus')
        self.mdev_dev_dir = os.path.join(root, 'bus', 'mdev', 'devices')
        self.node_dir = os.path.join(root, 'devices', 'system', 'node')

    def pci_path(self, address):
        return os.path.join(self.pci_dir, address)

    def pci_identity(self, address, fallback_dir=None):
        """vendor_id, product_id, class_id, numa_node of a PCI function."""
        base = self.pci_path(address)
        if not os.path.isdir(base) and fallback_dir is not None:
            base = fallback_dir
        numa = read_int(os.path.join(base, 'numa_node'), default=-1)
        return {
            'vendor_id': read_hex_id(os.path.join(base, 'vendor')),
            'product_id': read_hex_id(os.path.join(base, 'device')),
            'class_id': read_class(os.path.join(base, 'class')),
            'numa_node': numa if numa >= 0 else -1,
        }

    def link_target_name(self, path):
        """Basename of the directory a link (or plain directory) resolves to."""
        return os.path.basename(os.path.realpath(path))

    def link_address(self, link):
        """The PCI address a link (``physfn``, ``virtfnN``) points to; DiscoveryError otherwise."""
        try:
            return normalize_address(self.link_target_name(link))
        except ValueError:
            raise DiscoveryError('malformed %s: does not point to a PCI function' % link, path=link)
