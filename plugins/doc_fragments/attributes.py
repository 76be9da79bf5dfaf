# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    """The ``attributes:`` the collection's modules share, as ``ansible.builtin.action_common_attributes``
    shares ansible-core's: what each attribute means (and, where every module using a section has the
    same, its support), written once.  A module's own ``attributes:`` adds its support and details
    (Ansible merges each attribute of a fragment with the module's)."""

    # Every module: the meaning of check_mode and diff_mode.
    DOCUMENTATION = r'''
options: {}
attributes:
  check_mode:
    description: Can run in C(check_mode) and return changed status prediction without modifying target.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in C(check_mode)), when in diff mode.
'''

    # The modules of the action group placement.upgrade.placement (meta/runtime.yml), with the
    # placement.upgrade.auth options: the group, and what idempotent means.
    PLACEMENT = r'''
options: {}
attributes:
  action_group:
    description: Use C(group/placement.upgrade.placement) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - placement.upgrade.placement
  idempotent:
    description:
      - When run twice in a row outside check mode, with the same arguments, the second invocation
        indicates no change.
'''

    # The modules that write Placement or nova: check mode predicts, diff mode shows, idempotent.
    WRITES = r'''
options: {}
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  idempotent:
    support: full
'''

    # The modules that only read: check mode runs as a real run, no diff, idempotent.
    READ_ONLY = r'''
options: {}
attributes:
  check_mode:
    support: full
  diff_mode:
    support: N/A
    details: The module only reads.
  idempotent:
    support: full
'''

    # The modules that work on the host they run on (a node, or the controller), not through
    # Placement: POSIX, check mode as a real run, no diff.
    HOST = r'''
options: {}
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  platform:
    description: Target OS/families that can be operated against.
    support: full
    platforms: posix
'''

    # The modules with an action plugin doing part of the work on the controller.
    ACTION = r'''
options: {}
attributes:
  action:
    description: Indicates this has a corresponding action plugin so some parts of the options can be executed on the controller.
    support: full
'''
