# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The registry of the device report's parts (one module per part in this package, each keeping
the contract of :class:`common.DevicePart`): :data:`PARTS`, which discovery (reading),
holders.py (who holds what) and report_check.py (a report given back) loop over.

Adding a part (the devices of a new kind): its module here (a :class:`common.DevicePart`
subclass and ``PART = <it>()``), one line below, its tests, and its row in
docs/architecture.md.  The order is the order the parts are read (a part reads the parts
before it: pci.py skips the GPUs' addresses), checked, and their holders set.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from . import domains, gpus, mem_encryption, numa, pci

PARTS = (
    gpus.PART,
    pci.PART,
    numa.PART,
    domains.PART,
    mem_encryption.PART,
)
