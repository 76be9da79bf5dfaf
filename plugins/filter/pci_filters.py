# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: pci_filters
short_description: The device_info module's C(pci_filters) from what an operator or an AWX survey gives
version_added: 1.0.0
author: placement.upgrade contributors (@placement-upgrade)
description:
  - Turns the PCI devices to report, given as a list of C({vendor_id, product_id}) dicts or as a
    STRING holding them (what an AWX survey text field or C(-e key=value) sends), into the list of
    dicts the P(placement.upgrade.device_info#module) module's O(placement.upgrade.device_info#module:pci_filters)
    takes.
  - 'Accepted strings: the compact form V(10de:1eb8, 8086) (a vendor id, optionally C(:) and a
    product id, separated by commas or blanks), a JSON or YAML list of dicts, and the empty string
    (no filter).'
  - Anything else fails with a message naming the value and the accepted forms. The ids are checked
    by the module (four hexadecimal digits).
options:
  _input:
    description: The filters, as a list of dicts, one dict, or a string holding them.
    type: raw
    required: true
'''

EXAMPLES = r'''
- name: Report NVIDIA A100s and every Intel device passed through whole
  placement.upgrade.device_info:
    pci_filters: "{{ '10de:20b5, 8086' | placement.upgrade.pci_filters }}"

# '[{"vendor_id": "10de", "product_id": "20b5"}]' (JSON text) gives the same list of one dict
'''

RETURN = r'''
_value:
  description: The list of C({vendor_id, product_id}) dicts (C(product_id) only when given).
  type: list
  elements: dict
'''

import re

import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import type_name

_COMPACT = re.compile(r'^([0-9A-Za-z]+)(?::([0-9A-Za-z]+))?$')
_FORMS = ('a list of {vendor_id, product_id} dicts, or text: "10de:1eb8, 8086" (vendor[:product], '
          'comma or blank separated), or that list as JSON or YAML')


def _fail(why, value):
    raise AnsibleFilterError('pci_filters: %s in %r: give %s' % (why, value, _FORMS))


def _entries(items, value):
    out = []
    for item in items:
        if not isinstance(item, dict):
            _fail('%r is not a {vendor_id, product_id} dict' % (item,), value)
        for key in ('vendor_id', 'product_id'):
            if isinstance(item.get(key), (int, float)):
                _fail('%s %r is a number, not hexadecimal text: quote it' % (key, item[key]), value)
        out.append(dict(item))
    return out


def _compact(text, value):
    out = []
    for word in re.split(r'[\s,]+', text):
        if not word:
            continue
        match = _COMPACT.match(word)
        if not match:
            _fail('%r is not vendor[:product]' % word, value)
        entry = {'vendor_id': match.group(1)}
        if match.group(2):
            entry['product_id'] = match.group(2)
        out.append(entry)
    return out


def pci_filters(value):
    """device_info's ``pci_filters`` from a list, a dict, or a string holding them."""
    if value is None:
        return []
    if isinstance(value, dict):
        return _entries([value], value)
    if isinstance(value, (list, tuple)):
        return _entries(value, value)
    if not isinstance(value, str):
        _fail('a %s is not a filter list' % type_name(value), value)
    text = value.strip()
    if not text:
        return []
    if text[0] in '[{-':
        try:
            parsed = yaml.safe_load(text)   # JSON is YAML
        except yaml.YAMLError as exc:
            _fail('the text cannot be read as JSON or YAML (%s)' % str(exc).splitlines()[0], value)
        if isinstance(parsed, dict):
            parsed = [parsed]
        if not isinstance(parsed, list):
            _fail('the text holds a %s, not a list' % type_name(parsed), value)
        return _entries(parsed, value)
    return _compact(text, value)


class FilterModule(object):
    """placement.upgrade filters."""

    def filters(self):
        return {'pci_filters': pci_filters}
