# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action plugin of placement.upgrade.node_preflight: in process when the node is this controller.

Over SSH (or any other connection) the module runs on the node as usual.  When the node IS this
controller (the local connection, no become, no task ``environment``, this Python: a simulated
fleet), the module's own code runs in this process (``plugin_utils/in_process.py``), with the same
argument validation and result.  It runs no command (mdevctl is only looked up).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.placement.upgrade.plugins.plugin_utils import in_process


class ActionModule(in_process.RunModuleAction):

    MODULE = 'placement.upgrade.node_preflight'
