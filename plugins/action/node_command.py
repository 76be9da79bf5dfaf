# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action plugin of placement.upgrade.node_command: one command on the node, no module process.

``ansible.builtin.command`` copies a module to the node and starts a Python there (about 0.3 s of a
node's time, more on a loaded controller); between the disable and the enable of nova-compute
(the rolling role's window) every such process is added to the node's downtime.  This runs the
command through the connection's own shell (``_low_level_execute_command``, as ``ansible.builtin.raw``
does, with the task's become and environment), each argument quoted, and returns what the command
module returns (over a connection that gives it a terminal, its stderr merged into its stdout).  A
command the node does not have is told apart from one that exits non-zero: a probe before it prints
:data:`NOT_FOUND` and exits 127.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import time
from shlex import quote as shlex_quote

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

#: What the probe writes to stderr when the command is not on the node.
NOT_FOUND = 'placement.upgrade.node_command: command not found'

ARGUMENT_SPEC = {'argv': {'type': 'list', 'elements': 'str', 'required': True}}


def shell_command(argv, environment=''):
    """The POSIX shell line that runs ``argv`` (each argument quoted), or says :data:`NOT_FOUND` (rc 127).

    ``environment`` (the task's, as the connection's shell writes it: ``K=V K2=V2``) is exported
    first, so the probe looks the program up on the same ``PATH`` as the command.  The command is
    not ``exec``-ed: the shell ends with its exit status, and what the connection appends to the
    line (``&& sleep 0`` over ssh) still runs."""
    program = shlex_quote(argv[0])
    probe = ('case %s in */*) [ -f %s ] && [ -x %s ] ;; *) command -v %s >/dev/null 2>&1 ;; esac'
             % (program, program, program, program))
    line = ('export %s; ' % environment) if environment else ''
    line += '%s || { echo %s >&2; exit 127; }; ' % (probe, shlex_quote(NOT_FOUND))
    return line + ' '.join(shlex_quote(arg) for arg in argv)


def _lines(text):
    return (text or '').replace('\r\n', '\n').rstrip('\n').splitlines() if text else []


def command_result(argv, low, started, ended, started_utc=None):
    """The command module's result for what ``_low_level_execute_command`` returned (``low``).

    A connection that gives the command a terminal (ssh and paramiko do, for a command that may
    become another user) merges its standard error into its standard output: the marker of a
    command not found is looked for in both, and a failure's message takes the last line of
    stderr, or of stdout when stderr is empty."""
    rc = low.get('rc')
    stdout_lines = _lines(low.get('stdout'))
    stderr_lines = _lines(low.get('stderr'))
    marked = NOT_FOUND in stdout_lines or NOT_FOUND in stderr_lines
    found = rc is not None and not (rc == 127 and marked)
    if rc == 127 and marked:
        stdout_lines = [line for line in stdout_lines if line != NOT_FOUND]
        stderr_lines = [line for line in stderr_lines if line != NOT_FOUND]
    stdout, stderr = '\n'.join(stdout_lines), '\n'.join(stderr_lines)
    result = {
        'cmd': list(argv), 'rc': rc, 'stdout': stdout, 'stderr': stderr,
        'stdout_lines': stdout_lines, 'stderr_lines': stderr_lines, 'found': found,
        'start': str(started), 'end': str(ended), 'delta': str(ended - started), 'changed': True,
    }
    if started_utc is not None:
        result['start_utc'] = started_utc.strftime('%Y-%m-%d %H:%M:%S.%f')
    if rc is None:
        result.update(failed=True, msg='%s could not be run on the node: the connection gave no exit status'
                      % argv[0])
    elif not found:
        result.update(failed=True, msg='%s was not found on the node (not on its PATH, or not executable)' % argv[0])
    elif rc != 0:
        tail = [line.strip() for line in (stderr_lines or stdout_lines) if line.strip()]
        result.update(failed=True, msg='%s exited %s%s' % (' '.join(shlex_quote(arg) for arg in argv), rc,
                                                           (': ' + tail[-1]) if tail else ''))
    return result


class ActionModule(ActionBase):

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(ARGUMENT_SPEC)
    _requires_connection = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        try:
            _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        except AnsibleActionFail as exc:
            result.update(failed=True, msg=str(exc))
            return result
        argv = list(args['argv'])
        if not argv or not argv[0]:
            result.update(failed=True, msg='argv is empty: give the command and its arguments as a list')
            return result
        if self._task.check_mode:
            result.update(skipped=True, changed=False, cmd=argv,
                          msg='Skipped in check mode: %s was not run (set check_mode: false on a command that only reads)'
                          % argv[0])
            return result
        environment = self._compute_environment_string()
        stamp = time.time()
        started = datetime.datetime.fromtimestamp(stamp)
        low = self._low_level_execute_command(shell_command(argv, environment), sudoable=True)
        ended = datetime.datetime.now()
        result.update(command_result(argv, low, started, ended,
                                     started_utc=datetime.datetime.fromtimestamp(stamp, datetime.timezone.utc)))
        return result
