# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every part of the device report shares: the contract of a part (:class:`DevicePart`)
and the shape checks the parts use.

A part is one module of this package (``gpus.py``, ``pci.py``, ``numa.py``, ``domains.py``,
``mem_encryption.py``) holding a :class:`DevicePart` subclass and ``PART = <it>()``, and one
line of ``registry.py``'s :data:`registry.PARTS`: its part of the device report, read from the
host (:meth:`DevicePart.read`), checked when a report is given back (:meth:`DevicePart.check`,
:meth:`DevicePart.addresses`), and who holds its devices (:meth:`DevicePart.holder`,
:meth:`DevicePart.owned`).  discovery.py, holders.py and report_check.py loop over the
registry and name no part.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ... import shapes as _shapes

#: a report field that is text or null (report_check's shape language, shapes.py)
TEXT_OR_NULL = 'text?'


def check_entries(items, field, what, kinds, each=None):
    """A report list of mappings: each entry's fields have their kinds (``each`` checks the rest)."""
    _shapes.expect_list_of(items, 'mapping', field, 'a list of %s' % what, 'a mapping (one of %s)' % what)
    for index, item in enumerate(items or []):
        where = '%s[%d]' % (field, index)
        _shapes.expect_fields(item, where, kinds)
        if each is not None:
            each(item, where)


def hold(device, uuid, name, warnings):
    """Mark ``device`` (an mdev, VF, PF or PCI device of the report; ``name`` names it in a message) held
    by instance ``uuid``; when another instance holds it already, that one keeps it, with a warning."""
    if device['instance_uuid'] and device['instance_uuid'] != uuid:
        warnings.append('%s is held by both instance %s and instance %s; keeping %s'
                        % (name, device['instance_uuid'], uuid, device['instance_uuid']))
        return
    device['instance_uuid'] = uuid


class DevicePart(object):
    """The contract of one part of the device report; the defaults are "no such rule".

    ``name``         the part's name (its module in node/discover/);
    ``report_keys``  the report keys it reads (lists of records, unless ``fields`` says);
    ``fields``       ``{key: shape}`` of its report keys that are checked at the report's
                     top level (shapes.py: ``'mapping?'``).
    """

    name = None
    report_keys = ()
    fields = {}

    def read(self, reading, report):
        """``{key: value}``: its part of the report, read from the host.  ``reading`` is the
        discovery under way (:class:`..discovery.Reading`: the request, the sysfs reader, the
        node's nova.conf, the PCI filters, the warnings); ``report`` the parts read before it,
        in registry order."""
        return {}

    def check(self, devices, field):
        """Refuse (errors.BadInput, naming the field) a report given back whose part has a shape
        the layout cannot read."""

    def addresses(self, devices, field):
        """``(field, address)`` of every PCI device of its part (each named once in a report)."""
        return []

    def holder(self, report, reported=()):
        """``hold(uuid, label, info, warnings)``: sets ``instance_uuid`` on its devices a guest
        domain (``info``, a report instance) holds; None when its devices have no holders.
        ``reported``: the PCI address of every device of the report, every part's."""
        return None

    def after_holding(self, report, warnings):
        """What it says, or sets, once every domain's devices were held."""

    def owned(self, report):
        """``(consumer, device address)``, once per unit a guest holds (the ownership map)."""
        return []

    def report_warnings(self, report):
        """Problems of its part the planner must know about, recomputed from a report alone."""
        return []
