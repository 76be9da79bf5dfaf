# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: batches
short_description: A play's C(serial) from what an operator or an AWX survey gives
version_added: 1.0.0
author: placement.upgrade contributors (@placement-upgrade)
description:
  - Turns a batch size given as a number, a percentage, a list of them, or a STRING holding one
    of those (what an AWX survey or C(-e key=value) sends) into the value the C(serial) play
    keyword takes.
  - V(1), V("1"), V("10%"), V([1, "10%"]), V('[1, "10%"]') (JSON or Python list syntax) and
    V("1,10%") (comma separated) are accepted; a list keeps its order (a canary first).
  - Anything else fails with a message naming the value and the accepted forms, instead of
    ansible-core's C(invalid literal for int()).
options:
  _input:
    description: The batch size, or a list of batch sizes, or a string holding either.
    type: raw
    required: true
'''

EXAMPLES = r'''
- name: Roll a canary node first, then half of the rest at a time
  hosts: compute
  serial: "{{ rolling_reshape_serial | default(1) | placement.upgrade.batches }}"
  tasks: []

# "[1, \"50%\"]" and "1,50%" (survey text fields) both give [1, "50%"]
'''

RETURN = r'''
_value:
  description: An integer, a percentage string, or a list of them, as C(serial) takes it.
  type: raw
'''

import ast
import json
import re

from ansible.errors import AnsibleFilterError

from ansible_collections.placement.upgrade.plugins.plugin_utils import preload

_PERCENT = re.compile(r'^\s*(\d+(?:\.\d+)?)\s*%\s*$')
_INT = re.compile(r'^\s*\d+\s*$')
_FORMS = 'a number (1), a percentage ("10%") or a list of them ([1, "10%"], or the text "1,10%")'


def _one(item, whole):
    if isinstance(item, bool):
        raise AnsibleFilterError('batches: %r in %r is not a batch size: give %s' % (item, whole, _FORMS))
    if isinstance(item, int):
        if item < 0:
            raise AnsibleFilterError('batches: %d in %r is negative: give %s' % (item, whole, _FORMS))
        return item
    if isinstance(item, float) and item.is_integer() and item >= 0:
        return int(item)
    text = str(item)
    if _INT.match(text):
        return int(text)
    match = _PERCENT.match(text)
    if match:
        return '%s%%' % match.group(1)
    raise AnsibleFilterError('batches: %r in %r is not a batch size: give %s' % (item, whole, _FORMS))


def _parse_list(text):
    for parse in (json.loads, ast.literal_eval):
        try:
            value = parse(text)
        except (ValueError, SyntaxError):
            continue
        if isinstance(value, (list, tuple)):
            return list(value)
    raise AnsibleFilterError('batches: %r looks like a list but cannot be read: give %s' % (text, _FORMS))


def batches(value):
    """``serial`` from an int, a percentage, a list, or a string holding any of them.

    ansible-playbook templates ``serial`` in its own process, before the play's first batch:
    the node pass's controller code is imported there once (plugin_utils/preload.py).
    """
    preload.warm()
    if isinstance(value, (list, tuple)):
        items = list(value)
    elif isinstance(value, str):
        text = value.strip()
        if not text:
            raise AnsibleFilterError('batches: an empty value is not a batch size: give %s' % _FORMS)
        if text.startswith('['):
            items = _parse_list(text)
        elif ',' in text:
            items = [part for part in (p.strip() for p in text.split(',')) if part]
        else:
            return _one(text, value)
    else:
        return _one(value, value)
    if not items:
        raise AnsibleFilterError('batches: an empty list is not a batch size: give %s' % _FORMS)
    return [_one(item, value) for item in items]


class FilterModule(object):
    """placement.upgrade filters."""

    def filters(self):
        return {'batches': batches}
