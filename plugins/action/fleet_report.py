# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action plugin of placement.upgrade.fleet_report: the module gathers, the controller renders.

1. The module runs where the task runs (delegated to the controller by the roles) with
   ``return_report: true``: it reads Placement, stores the node records and returns the
   report data instead of rendering it.
2. report.md and report.html are rendered here from the Jinja2 templates
   (``templates/fleet_report/`` of the collection, or the operator's ``html_template`` /
   ``markdown_template``, found like a template task's ``src``), with summary.json.  The
   controller always has jinja2 (ansible-core requires it); the module's Python, chosen by
   interpreter discovery, may not, and an AnsiballZ payload carries no template file.
3. The files are written into ``dest`` where the module runs: directly when that is this
   controller as this user (the local connection without become), otherwise by running the
   module again with ``files`` (atomic writes, mode 0600, the ``latest`` link).

In check mode, with ``render: false``, or when the module failed, nothing is rendered and the
module's result is returned as it is.  Every failure is a task failure with a message, never a
traceback.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible.errors import AnsibleError
from ansible.module_utils.common.text.converters import to_text
from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import report
from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import PlacementError
from ansible_collections.placement.upgrade.plugins.plugin_utils import in_process
TEMPLATE_OPTIONS = ('html_template', 'markdown_template')
INTERNAL_OPTIONS = ('return_report', 'files')


def _unexpected(exc):
    return 'Unexpected error (%s): %s' % (type(exc).__name__, exc)


class ActionModule(in_process.InProcessAction):

    MODULE = 'placement.upgrade.fleet_report'

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        args = dict(self._task.args)
        for name in INTERNAL_OPTIONS:
            if args.get(name) not in (None, False):
                return self._fail(result, '%s is set by the action plugin of %s, not by a task' % (name, self.MODULE))
        try:
            render = boolean(args.get('render', True), strict=True)
            templates = {}
            for name in TEMPLATE_OPTIONS:
                value = args.pop(name, None)
                if value:
                    try:
                        templates[name] = self._find_needle('templates', to_text(value))
                    except AnsibleError as exc:
                        raise AnsibleError('%s: %s' % (name, to_text(exc)))
        except (AnsibleError, TypeError) as exc:
            return self._fail(result, to_text(exc))
        render = render and not self._play_context.check_mode
        if render:
            args['return_report'] = True
        module_result = self._run_module(args, task_vars)
        data = module_result.pop('report', None)
        result.update(module_result)
        if not render or result.get('failed') or data is None:
            return result
        log = result.setdefault('log', [])
        dest = os.path.dirname(result['paths']['html'])
        try:
            files = report.report_files(data, templates.get('html_template'), templates.get('markdown_template'))
        except PlacementError as exc:
            return self._fail(result, exc.detail)
        except Exception as exc:  # pylint: disable=broad-except
            return self._fail(result, _unexpected(exc))
        latest = boolean(args.get('latest_link', True), strict=False)
        if self._writes_here():
            try:
                result['paths'] = report.write_files(dest, files)
            except (OSError, IOError) as exc:
                return self._fail(result, 'Cannot write the report in %s: %s' % (dest, exc))
            if latest:
                try:
                    report.latest_link(dest)
                except OSError as exc:
                    message = 'cannot update the latest link next to %s: %s' % (dest, exc)
                    log.append(message)
                    result.setdefault('warnings', []).append(message)
        else:
            written = self._run_module({'dest': dest, 'files': files, 'latest_link': latest}, task_vars)
            for message in written.get('log') or []:
                log.append(message)
            result.setdefault('warnings', []).extend(written.get('warnings') or [])
            if written.get('failed'):
                return self._fail(result, written.get('msg') or 'the report files could not be written')
            result['paths'] = written['paths']
        result['changed'] = True
        return result

    def _writes_here(self):
        """Whether the module ran on this controller as this user (files written here are its files)."""
        return getattr(self._connection, 'transport', None) == 'local' and not self._play_context.become

    @staticmethod
    def _fail(result, msg):
        result['failed'] = True
        result['msg'] = msg
        return result
