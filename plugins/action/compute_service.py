# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action plugin of placement.upgrade.compute_service: on the controller, the module runs in process.

The rolling role delegates nova's steps to the controller (read, disable, wait down, wait up,
enable): nova-compute is out of service from the disable to the enable, and a module run there
costs a Python and the collection's module_utils imported again for a few requests to nova.  On
the controller the module's own code (its argument spec and rules, its own argument checks, its
run) runs inside this action (``plugin_utils/in_process.py``): the same validation and result,
check and diff mode.  Anywhere else (another host, become, a task ``environment``,
another Python interpreter), and whenever ``version_command`` is given (it runs a command, which
the in-process stand-in does not), the module runs as usual.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.placement.upgrade.plugins.plugin_utils import in_process


class ActionModule(in_process.RunModuleAction):

    MODULE = 'placement.upgrade.compute_service'

    def in_process(self, task_vars):
        if self._task.args.get('version_command'):
            return False  # the module runs it where the task runs, and validates it
        return super(ActionModule, self).in_process(task_vars)
