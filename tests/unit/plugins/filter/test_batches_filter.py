# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The placement.upgrade.batches filter: a play's serial from what a survey sends."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.placement.upgrade.plugins.filter.batches import batches


@pytest.mark.parametrize('given, want', [
    (1, 1),
    ('1', 1),
    (' 10% ', '10%'),
    ([1, '50%'], [1, '50%']),
    (['1', ' 50 %'], [1, '50%']),
    ('[1, "50%"]', [1, '50%']),
    ("[1, '50%']", [1, '50%']),
    ('1,50%', [1, '50%']),
    ('1, 2, 100%', [1, 2, '100%']),
    (2.0, 2),
    (0, 0),
])
def test_accepted_forms(given, want):
    assert batches(given) == want


@pytest.mark.parametrize('given, says', [
    ('abc', "'abc' in 'abc' is not a batch size"),
    ('', 'an empty value'),
    ('[]', 'an empty list'),
    ('[1, "50%"', 'looks like a list but cannot be read'),
    ('1,x', "'x' in '1,x' is not a batch size"),
    (-1, 'is negative'),
    (True, 'is not a batch size'),
    ({'a': 1}, 'is not a batch size'),
    ('10.5', 'is not a batch size'),
])
def test_refused_forms_name_the_value_and_the_forms(given, says):
    with pytest.raises(AnsibleFilterError) as info:
        batches(given)
    assert says in str(info.value)
    assert 'a percentage ("10%")' in str(info.value)
