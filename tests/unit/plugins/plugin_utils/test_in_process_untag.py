# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A module run in process (plugin_utils/in_process.py) gets its arguments as ansible-core 2.19
templated them: tagged (issue 40).  Its argument errors named "_AnsibleTaggedDict"; the same
module run in its own process (JSON arguments) names a dict.  Untagged before validating: the
same message as the module."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

try:
    from ansible._internal._datatag._tags import Origin
except ImportError:     # ansible-core 2.18: no data tagging, templated values arrive plain
    Origin = None

from ansible_collections.placement.upgrade.plugins.modules import fleet_slice
from ansible_collections.placement.upgrade.plugins.plugin_utils import in_process

from module_runner import run_module_main


def _tagged(value):
    """``value`` tagged as ansible-core 2.19+ templates it (as it is on 2.18, which tags nothing)."""
    if Origin is None:
        return value
    return Origin(path='/srv/inventory/group_vars/all.yml', line_num=3).tag(value)


def test_argument_errors_of_tagged_values_read_as_the_modules(capsys, tmp_path):
    args = {'dest': str(tmp_path / 'run-1'), 'run_id': 'run-1', 'owner': 'AWX job 7',
            'nodes': {'cn-01': 'a mapping, not a list'}}
    rc, expected = run_module_main(fleet_slice.main, dict(args), capsys)
    assert rc == 1
    tagged = dict(args, nodes=_tagged({'cn-01': _tagged('a mapping, not a list')}), owner=_tagged('AWX job 7'))
    got = in_process.run('placement.upgrade.fleet_slice', fleet_slice, tagged)
    assert got['failed'] is True
    assert 'Tagged' not in got['msg'], got['msg']
    assert got['msg'] == expected['msg']
    assert "<class 'dict'> cannot be converted to a list" in got['msg']


def test_tagged_values_that_are_right_are_taken_as_plain_ones(tmp_path):
    args = {'dest': _tagged(str(tmp_path / 'run-1')), 'run_id': _tagged('run-1'), 'owner': _tagged('AWX job 7'),
            'nodes': _tagged([_tagged('cn-01')])}
    got = in_process.run('placement.upgrade.fleet_slice', fleet_slice, args, check_mode=True)
    assert 'failed' not in got, got
    nodes = got['invocation']['module_args']['nodes']
    assert got['claimed'] == ['cn-01'] and nodes.__class__ is list and nodes[0].__class__ is str
