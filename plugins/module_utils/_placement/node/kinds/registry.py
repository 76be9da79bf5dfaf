# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The registry of the reshape kinds (one file per kind in this package, each keeping the
contract of :class:`common.Kind`): :data:`KINDS`, which the layout, the planner and
verification loop over.  (The package's ``__init__.py`` stays empty: ansible-test's
``empty-init``.)

Adding a kind: its file here (a :class:`common.Kind` subclass and ``KIND = <it>()``), one
line below, its tests, and its row in docs/reshape.md.  The order is the order children
are built, checks run and the kinds settle (PCI healing before the VCPU -> PCPU conversion).

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from . import mem_encryption, numa, pci, pcpu, vgpu

KINDS = (
    vgpu.KIND,
    pci.KIND,
    numa.KIND,
    mem_encryption.KIND,
    pcpu.KIND,
)


def taker(children, rc):
    """The child every allocation of ``rc`` goes to by a kind's own rule (nova's), or None:
    the one place the planner (which moves them) and verification (which checks them) read it."""
    for kind in KINDS:
        child = kind.taker(children, rc)
        if child is not None:
            return child
    return None
