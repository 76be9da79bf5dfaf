# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nova-compute's version from what ``nova-compute --version`` prints: nova_services.parse_version,
the placement.upgrade.nova_version filter (the role's node-side read) and compute_service's
version_command (the module run on the node) read it the same way."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.placement.upgrade.plugins.filter.nova_version import nova_version
from ansible_collections.placement.upgrade.plugins.module_utils._placement import errors
from ansible_collections.placement.upgrade.plugins.module_utils._placement.nova import services as nova_services
from ansible_collections.placement.upgrade.plugins.modules import compute_service


@pytest.mark.parametrize('output, version, line', [
    # nova 34.0.0's nova-compute --version (oslo.config prints version_string() alone)
    ('34.0.0\n', '34.0.0', '34.0.0'),
    # a development build from git (pbr)
    ('34.1.0.dev12\n', '34.1.0', '34.1.0.dev12'),
    # a distribution's package version string
    ('29.0.1-0ubuntu1\n', '29.0.1', '29.0.1-0ubuntu1'),
    ('nova-compute 33.0.0\n', '33.0.0', 'nova-compute 33.0.0'),
    # a warning printed before the version (its own dotted numbers do not count)
    ('/usr/lib/python3/dist-packages/oslo_config/cfg.py:12: DeprecationWarning: removed in 2.0\n'
     '  warnings.warn(msg)\n30.0.0\n', '30.0.0', '30.0.0'),
    # a list of lines (stdout_lines), empty lines skipped
    (['', '34.0.0'], '34.0.0', '34.0.0'),
    # no line is a version alone: the first dotted number
    ('nova-compute version 31.2.0 (epoch 1)', '31.2.0', 'nova-compute version 31.2.0 (epoch 1)'),
    # nothing to read: the first line says what came instead
    ('Error response from daemon: No such container: nova_compute\n', None,
     'Error response from daemon: No such container: nova_compute'),
    ('', None, ''),
    (None, None, ''),
])
def test_parse_version(output, version, line):
    assert nova_services.parse_version(output) == {'version': version, 'line': line}


@pytest.mark.parametrize('version, expected, matches', [
    ('34.0.0', '34.0.0', True),
    ('34.0.2', '34', True),
    ('34.0.2', '34.0', True),
    ('34.0.2', 'v34.0.2', True),
    ('34.0.2', '34.1', False),
    ('340.0.0', '34', False),
    ('33.1.0', '34.0.0', False),
    (None, '34', False),
])
def test_version_matches(version, expected, matches):
    assert nova_services.version_matches(version, expected) is matches


def test_filter_reads_a_registered_command_result_like_the_module():
    registered = {'rc': 0, 'stdout': '34.0.0', 'stderr': '', 'stdout_lines': ['34.0.0']}
    assert nova_version(registered) == {'version': '34.0.0', 'line': '34.0.0'}
    assert nova_version({'stdout': '', 'stderr': '33.0.0\n'})['version'] == '33.0.0'
    assert nova_version('34.0.0\n', expected='34') == {'version': '34.0.0', 'line': '34.0.0', 'matches': True}
    assert nova_version('33.0.0', expected='34.0.0')['matches'] is False
    with pytest.raises(AnsibleFilterError, match='nova_version: give the output'):
        nova_version(34)


class FakeModule(object):
    def __init__(self, rc, out, err=''):
        self.answer = (rc, out, err)
        self.ran = []

    def run_command(self, args, check_rc=False):
        self.ran.append((args, check_rc))
        return self.answer


def test_version_command_runs_without_a_shell_and_parses_the_same_way():
    module, log = FakeModule(0, '34.0.0\n'), []
    assert compute_service._version(module, ['nova-compute', '--version'], log.append) == {
        'version': '34.0.0', 'version_line': '34.0.0'}
    assert module.ran == [(['nova-compute', '--version'], False)]
    assert log == ['nova-compute version 34.0.0 (nova-compute --version)']


def test_version_command_failing_or_printing_no_version_fails_the_task():
    with pytest.raises(errors.ConfigurationError, match=r'version_command docker exec nova_compute nova-compute '
                                                        r'--version failed \(rc 1\): Error response from daemon'):
        compute_service._version(FakeModule(1, '', 'Error response from daemon: No such container: nova_compute\n'),
                                 ['docker', 'exec', 'nova_compute', 'nova-compute', '--version'], [].append)
    with pytest.raises(errors.ConfigurationError, match=r'printed no version \(usage: nova-compute'):
        compute_service._version(FakeModule(0, 'usage: nova-compute [-h]\n'), ['nova-compute', '-V'], [].append)
