#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

# This module is implemented by its action plugin (plugins/action/node_command.py): the command runs
# through the connection's shell, without a module process.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: node_command
short_description: Run a command on a node through the connection, without a module process
version_added: 1.0.0
author: placement.upgrade contributors (@placement-upgrade)
description:
  - Runs one command (a list of arguments, no shell expansion) on the node through the task's
    connection and privilege escalation, like M(ansible.builtin.raw), and returns what
    M(ansible.builtin.command) returns (C(rc), C(stdout), C(stderr), their lines, C(cmd),
    C(start), C(end), C(delta)).
  - No module is copied to the node and no Python starts there. The rolling role stops, starts
    and reads nova-compute with it while nova-compute is out of service, where a module process
    (about 0.3 s each) would be added to every node's downtime.
  - Each argument is quoted for the node's POSIX shell; nothing in them is expanded (not even
    C($VARIABLE), which M(ansible.builtin.command) expands unless C(expand_argument_vars=false)).
    The task's C(environment) is set for the command.
  - A command not found on the node (not on its C(PATH), or not executable) fails with a message
    saying so and RV(found) false; a command that exits non-zero fails with its exit code and the
    last line of its standard error, RV(found) true.
  - Always reports a change, like M(ansible.builtin.command); set C(changed_when) on a command
    that only reads.
attributes:
  action:
    details:
      - The whole module is its action plugin; the node needs no Python.
  check_mode:
    support: none
    details:
      - Skipped in check mode, as M(ansible.builtin.command) without C(creates) or C(removes); set
        C(check_mode=false) on a command that only reads.
extends_documentation_fragment:
  - placement.upgrade.attributes
  - placement.upgrade.attributes.ACTION
  - placement.upgrade.attributes.HOST
options:
  argv:
    description:
      - The command and its arguments. The first is looked up on the node's C(PATH) unless it is
        a path.
    type: list
    elements: str
    required: true
notes:
  - The command runs through the connection's shell (C(/bin/sh) on the node), so the node must
    have a POSIX shell; C(executable) cannot be changed.
  - Over a connection that gives the command a terminal (C(ssh) and C(paramiko) do, as for
    M(ansible.builtin.raw)), its standard error comes merged into RV(stdout), and RV(stderr) is
    empty.
  - There is no C(chdir), C(creates), C(removes) or C(stdin); use M(ansible.builtin.command) for
    those.
seealso:
  - module: ansible.builtin.command
  - module: ansible.builtin.raw
'''

EXAMPLES = r'''
- name: Stop nova-compute's unit on the node
  become: true
  placement.upgrade.node_command:
    argv: [systemctl, stop, kolla-nova_compute-container]

- name: Read the version of nova-compute (reads only)
  placement.upgrade.node_command:
    argv: [docker, exec, nova_compute, nova-compute, --version]
  register: version
  changed_when: false
  failed_when: false
  check_mode: false
'''

RETURN = r'''
cmd:
  description: The command, as given.
  returned: always
  type: list
  elements: str
  sample: [systemctl, stop, nova-compute]
rc:
  description: The command's exit code (127 when it was not found on the node).
  returned: when the command was run
  type: int
  sample: 0
stdout:
  description: The command's standard output.
  returned: when the command was run
  type: str
  sample: '34.0.0'
stderr:
  description: The command's standard error.
  returned: when the command was run
  type: str
  sample: ''
stdout_lines:
  description: RV(stdout), a line each.
  returned: when the command was run
  type: list
  elements: str
  sample: ['34.0.0']
stderr_lines:
  description: RV(stderr), a line each.
  returned: when the command was run
  type: list
  elements: str
  sample: []
found:
  description: Whether the command was found on the node (false, rc 127, when it is not on the node's C(PATH) or not executable).
  returned: when the command was run
  type: bool
  sample: true
start:
  description: When the command was started (the controller's clock).
  returned: when the command was run
  type: str
  sample: '2026-11-26 03:10:00.123456'
start_utc:
  description:
    - When the command was started, in UTC on the controller's clock, to the microsecond, in the form
      nova and Placement give their timestamps (C(YYYY-MM-DD HH:MM:SS.ffffff)).
    - The rolling role compares it with nova's record of a nova-compute it starts (C(reported_since) of
      M(placement.upgrade.compute_service)).
  returned: when the command was run
  type: str
  sample: '2026-11-26 03:10:00.123456'
end:
  description: When the command ended (the controller's clock).
  returned: when the command was run
  type: str
  sample: '2026-11-26 03:10:00.163456'
delta:
  description: How long the command took.
  returned: when the command was run
  type: str
  sample: '0:00:00.040000'
'''
