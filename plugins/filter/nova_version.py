# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: nova_version
short_description: The version of nova-compute from what C(nova-compute --version) printed
version_added: 1.0.0
author: placement.upgrade contributors (@placement-upgrade)
description:
  - Reads the version of nova-compute from the output of C(nova-compute --version) (or of the
    same command in a container), as the M(placement.upgrade.compute_service) module's
    O(placement.upgrade.compute_service#module:version_command) does, with the same parsing.
  - The line that is a version alone (C(34.0.0), as nova-compute prints it) wins over warnings
    printed before it; otherwise the first dotted number of the output.
  - The P(placement.upgrade.rolling_reshape#role) role reads the node's nova-compute with it
    before stopping it and after starting the new one.
options:
  _input:
    description:
      - The command's output, or the registered result of a command task (its C(stdout), or
        its C(stderr) when C(stdout) is empty).
    type: raw
    required: true
  expected:
    description:
      - A version the result is compared with; V(34) and V(34.0) take C(34.0.2).
    type: str
'''

EXAMPLES = r'''
- name: Read the version of nova-compute on the node
  ansible.builtin.command:
    argv: [nova-compute, --version]
  register: nova_version_out
  changed_when: false

- name: Say it
  ansible.builtin.debug:
    msg: "nova-compute {{ (nova_version_out | placement.upgrade.nova_version).version }}"

- name: Fail unless nova-compute 34 runs
  ansible.builtin.assert:
    that: (nova_version_out | placement.upgrade.nova_version(expected='34')).matches
'''

RETURN = r'''
_value:
  description:
    - C(version) (the version, null when the output has none), C(line) (the line it was read
      from) and, with O(expected), C(matches) (a boolean).
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import type_name
from ansible_collections.placement.upgrade.plugins.module_utils._placement.nova import services as nova_services


def nova_version(value, expected=None):
    """``{'version', 'line'}`` (and ``matches`` with ``expected``) from a command's output."""
    if isinstance(value, dict):
        text = value.get('stdout') or ''
        if not str(text).strip():
            text = value.get('stderr') or ''
    elif value is None or isinstance(value, (str, list, tuple)):
        text = value
    else:
        raise AnsibleFilterError('nova_version: give the output of nova-compute --version (text) or the '
                                 'registered result of the command task, got %s' % type_name(value))
    found = nova_services.parse_version(text)
    if expected is not None:
        found['matches'] = nova_services.version_matches(found['version'], expected)
    return found


class FilterModule(object):
    """placement.upgrade filters."""

    def filters(self):
        return {'nova_version': nova_version}
