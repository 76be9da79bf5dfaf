# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action plugin of placement.upgrade.resource_provider_info: on the controller, the module runs in process.

The rolling role reads the node's tree on the controller once nova-compute is back, while it is
still out of service.  There, the module's own code (its argument spec and rules, its read) runs
inside this action (``plugin_utils/in_process.py``): the same validation and result, without
packing the module and starting a Python for it.  Anywhere else (another
host, become, a task ``environment``, another Python interpreter) the module runs as usual.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.placement.upgrade.plugins.plugin_utils import in_process


class ActionModule(in_process.RunModuleAction):

    MODULE = 'placement.upgrade.resource_provider_info'
