# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""placement.upgrade.node_command's action: the shell line it sends and the result it makes of the answer.

The shell line is run here by /bin/sh exactly as the connection's shell would run it (the whole
action under ansible-playbook: tests/integration/test_node_command.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import os
import subprocess

from ansible_collections.placement.upgrade.plugins.action import node_command


def sh(argv, environment=''):
    done = subprocess.run(['/bin/sh', '-c', node_command.shell_command(argv, environment)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False)
    started = datetime.datetime(2026, 11, 26, 3, 0, 0)
    return node_command.command_result(argv, {'rc': done.returncode, 'stdout': done.stdout, 'stderr': done.stderr},
                                       started, started + datetime.timedelta(seconds=0.25))


def test_arguments_reach_the_command_unexpanded():
    result = sh(['printf', '%s|', '$HOME', '`id`', 'a;b', "it's", '*', ''])
    assert result['stdout'] == "$HOME|`id`|a;b|it's|*||"
    assert (result['rc'], result['found'], result['changed']) == (0, True, True)
    assert 'failed' not in result and 'msg' not in result
    assert result['cmd'] == ['printf', '%s|', '$HOME', '`id`', 'a;b', "it's", '*', '']
    assert (result['start'], result['end'], result['delta']) == (
        '2026-11-26 03:00:00', '2026-11-26 03:00:00.250000', '0:00:00.250000')


def test_the_output_as_the_command_module_gives_it():
    result = sh(['sh', '-c', 'echo one; echo two; echo oops >&2'])
    assert (result['stdout'], result['stdout_lines']) == ('one\ntwo', ['one', 'two'])
    assert (result['stderr'], result['stderr_lines']) == ('oops', ['oops'])


def test_a_non_zero_exit_fails_with_the_code_and_the_last_line_of_stderr():
    result = sh(['sh', '-c', 'echo first >&2; echo last >&2; exit 3'])
    assert result['failed'] is True and result['found'] is True and result['rc'] == 3
    assert result['msg'] == "sh -c 'echo first >&2; echo last >&2; exit 3' exited 3: last"
    assert sh(['false'])['msg'] == 'false exited 1'


def test_a_command_the_node_does_not_have_is_told_apart(tmp_path):
    missing = sh(['no-such-command-here', 'a'])
    assert (missing['failed'], missing['found'], missing['rc']) == (True, False, 127)
    assert missing['msg'] == 'no-such-command-here was not found on the node (not on its PATH, or not executable)'
    assert missing['stderr'] == '' and node_command.NOT_FOUND not in missing['stderr_lines']
    # a path: absent, a directory, not executable
    plain = tmp_path / 'plain'
    plain.write_text(u'echo hi\n')
    for path in (str(tmp_path / 'absent'), str(tmp_path), str(plain)):
        result = sh([path])
        assert (result['found'], result['rc']) == (False, 127), path
    os.chmod(str(plain), 0o755)
    assert sh([str(plain)])['stdout'] == 'hi'
    # a command that itself exits 127 was found: it is its own exit code
    own = sh(['sh', '-c', 'exit 127'])
    assert (own['found'], own['msg']) == (True, "sh -c 'exit 127' exited 127")


def test_the_task_environment_is_set_for_the_command():
    result = sh(['sh', '-c', 'echo "$PU_ONE/$PU_TWO"'], environment="PU_ONE='a b' PU_TWO=c")
    assert result['stdout'] == 'a b/c'
