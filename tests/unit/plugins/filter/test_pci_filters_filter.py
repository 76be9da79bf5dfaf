# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The placement.upgrade.pci_filters filter: device_info's pci_filters from what a survey sends."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.placement.upgrade.plugins.filter.pci_filters import pci_filters

A100 = {'vendor_id': '10de', 'product_id': '20b5'}
INTEL = {'vendor_id': '8086'}


@pytest.mark.parametrize('given, want', [
    ([], []),
    (None, []),
    ('', []),
    ('  ', []),
    ([A100, INTEL], [A100, INTEL]),
    (A100, [A100]),
    ('10de:20b5', [A100]),
    ('10de:20b5, 8086', [A100, INTEL]),
    ('10de:20b5 8086\n', [A100, INTEL]),
    ('[{"vendor_id": "10de", "product_id": "20b5"}, {"vendor_id": "8086"}]', [A100, INTEL]),
    ('{"vendor_id": "8086"}', [INTEL]),
    ('- vendor_id: "10de"\n  product_id: "20b5"\n- vendor_id: "8086"\n', [A100, INTEL]),
])
def test_accepted_forms(given, want):
    assert pci_filters(given) == want


@pytest.mark.parametrize('given, why', [
    ('10de:20b5:1', "'10de:20b5:1' is not vendor[:product]"),
    ('[{"vendor_id": "10de"', 'cannot be read as JSON or YAML'),
    ('["10de"]', "'10de' is not a {vendor_id, product_id} dict"),
    ('- vendor_id: 0400\n', 'vendor_id 256 is a number, not hexadecimal text: quote it'),
    ('[1, 2]', 'is not a {vendor_id, product_id} dict'),
    (42, 'a int is not a filter list'),
    ('{"a": 1}x', 'cannot be read'),
])
def test_refused_forms_name_the_value(given, why):
    with pytest.raises(AnsibleFilterError) as err:
        pci_filters(given)
    assert why in str(err.value)
    assert repr(given) in str(err.value)
    assert 'give a list of {vendor_id, product_id} dicts' in str(err.value)
