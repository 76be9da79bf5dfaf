# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action plugin of placement.upgrade.device_info: discovery runs in process when it would run here.

Discovery runs on the compute node: over SSH (or any other connection) the module is shipped
and run there as usual.  When the node IS this controller (the local connection, no become, no
task ``environment``, this Python: a simulated fleet, or a recording replayed on the
controller), the module's own code runs in this process instead (``plugin_utils/in_process.py``),
with the same argument validation and result.  With ``use_virsh`` it always runs as a module
(it runs commands, which the in-process stand-in does not).  The result says when the task
began (``started``, the controller's clock): the rolling role times each node's pass from it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.placement.upgrade.plugins.plugin_utils import in_process

MODULE = 'placement.upgrade.device_info'


class ActionModule(in_process.RunModuleAction):

    MODULE = MODULE

    def _module_file(self):
        from ansible_collections.placement.upgrade.plugins.modules import device_info
        return device_info

    def run(self, tmp=None, task_vars=None):
        started = time.time()
        result = super(ActionModule, self).run(tmp, task_vars)
        result['started'] = started
        return result

    def in_process(self, task_vars):
        try:
            virsh = boolean(self._task.args.get('use_virsh', False), strict=True)
        except TypeError:
            virsh = True  # the module's own validation says what is wrong with it
        return not virsh and super(ActionModule, self).in_process(task_vars)
