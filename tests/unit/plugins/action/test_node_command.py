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
    # start_utc only when given, and then to the microsecond, as nova stamps its writes
    assert 'start_utc' not in result
    utc = datetime.datetime(2026, 11, 26, 2, 0, 0, tzinfo=datetime.timezone.utc)
    stamped = node_command.command_result(['true'], {'rc': 0, 'stdout': '', 'stderr': ''}, utc, utc, started_utc=utc)
    assert stamped['start_utc'] == '2026-11-26 02:00:00.000000'


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


def test_a_terminal_merges_stderr_into_stdout_and_the_marker_is_found_there():
    """ssh -tt and paramiko's pty: the marker, and the error, come in stdout with CR LF."""
    started = datetime.datetime(2026, 11, 26, 3, 0, 0)
    missing = node_command.command_result(['docker', 'ps'], {
        'rc': 127, 'stdout': node_command.NOT_FOUND + '\r\n', 'stderr': ''}, started, started)
    assert (missing['found'], missing['failed'], missing['stdout']) == (False, True, '')
    assert missing['msg'] == 'docker was not found on the node (not on its PATH, or not executable)'
    failed = node_command.command_result(['systemctl', 'stop', 'x'], {
        'rc': 5, 'stdout': 'Failed to stop x.service: Unit x.service not loaded.\r\n', 'stderr': ''}, started, started)
    assert failed['found'] is True
    assert failed['msg'] == 'systemctl stop x exited 5: Failed to stop x.service: Unit x.service not loaded.'
    assert failed['stdout_lines'] == ['Failed to stop x.service: Unit x.service not loaded.']
    ran = node_command.command_result(['true'], {'rc': 0, 'stdout': 'a\r\nb\r\n', 'stderr': ''}, started, started)
    assert (ran['stdout'], ran['stdout_lines']) == ('a\nb', ['a', 'b'])


def test_no_exit_status_is_a_command_that_could_not_be_run():
    started = datetime.datetime(2026, 11, 26, 3, 0, 0)
    result = node_command.command_result(['docker', 'ps'], {'rc': None, 'stdout': '', 'stderr': ''}, started, started)
    assert (result['found'], result['failed']) == (False, True)
    assert result['msg'] == 'docker could not be run on the node: the connection gave no exit status'


def test_the_program_is_looked_up_on_the_path_the_task_environment_sets(tmp_path):
    tool = tmp_path / 'only-here'
    tool.write_text(u'#!/bin/sh\necho found it\n')
    os.chmod(str(tool), 0o755)
    assert sh(['only-here'])['found'] is False
    result = sh(['only-here'], environment="PATH='%s:/usr/bin:/bin'" % tmp_path)
    assert (result['found'], result['stdout']) == (True, 'found it')
