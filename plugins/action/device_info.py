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

With ``nova_credentials``, the module's answer carries nova-compute's own ``[placement]`` options, its
secret included (``nova_placement``): this action probes them from the controller, as nova-compute
would connect (fleet/preflight.py ``check_node_nova``), fails the task when nova-compute could not
reshape, and removes them from the result before anything prints or registers it.  Options probed
with success earlier in the run (by another node's task: the run's shared memory file,
backends/tokens.py) are not probed again.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible.module_utils.parsing.convert_bool import boolean
from ansible.utils.display import Display

from ansible_collections.placement.upgrade.plugins.plugin_utils import in_process

display = Display()


class ActionModule(in_process.RunModuleAction):

    MODULE = 'placement.upgrade.device_info'

    def run(self, tmp=None, task_vars=None):
        started = time.time()
        result = super(ActionModule, self).run(tmp, task_vars)
        conf = result.pop('nova_placement', None)
        if conf is not None and not result.get('failed'):
            node = (task_vars or {}).get('inventory_hostname') or (result.get('devices') or {}).get('hostname')
            self._judge_nova(result, node, conf)
        result['started'] = started
        return result

    def _judge_nova(self, result, node, conf):
        """nova-compute's own credentials, probed here (once per set of options in a run): the task
        fails when they cannot reshape; never a traceback."""
        from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends import tokens
        from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import preflight
        from ansible_collections.placement.upgrade.plugins.module_utils.common import unexpected_error
        try:
            found = preflight.check_node_nova(node, conf, log=display.vvv, cache=tokens.shared())
        except Exception as exc:  # pylint: disable=broad-except
            result.update(failed=True, msg='nova_credentials: %s: %s' % (node, unexpected_error(exc)))
            return
        result['nova_credentials'] = found
        if found['passed'] is None:
            result.setdefault('warnings', []).append(found['detail'])
        elif not found['passed']:
            result.update(failed=True, msg='nova_credentials: %s (nothing was changed on %s)' % (found['detail'], node))

    def in_process(self, task_vars):
        try:
            virsh = boolean(self._task.args.get('use_virsh', False), strict=True)
        except TypeError:
            virsh = True  # the module's own validation says what is wrong with it
        return not virsh and super(ActionModule, self).in_process(task_vars)
