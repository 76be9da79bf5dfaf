# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""node/run.py: the reshape module's work, one core run per state, called without Ansible."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends import factory
from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import ConfigurationError
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import records
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import discovery
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import run
from ansible_collections.placement.upgrade.plugins.modules import reshape as reshape_module

import simfleet
from module_runner import run_module_main

VOLATILE = ('invocation', 'log', 'changed')


@pytest.fixture(scope='module')
def fleet(tmp_path_factory):
    return simfleet.build(str(tmp_path_factory.mktemp('run') / 'fleet'), nodes=2)


def _devices(node):
    return discovery.discover(node['sysfs_root'], domain_xml_glob=node['domain_xml_glob'],
                              hostname=node['provider'], nova_conf=node['nova_conf'],
                              domain_capabilities=node.get('domain_capabilities'))


def _params(fleet, node, **asked):
    """The module's options as Ansible gives them (every option, its default where not asked)."""
    params = dict((name, option.get('default')) for name, option in reshape_module.SPEC.options.items())
    params.update(embedded_db=fleet['embedded_db'], root_provider=node['provider'], **asked)
    return params


def _core(fleet, params, check_mode=False, diff=False):
    warned, logged = [], []
    backend = factory.get_backend({'embedded_db': fleet['embedded_db']}, create=False)
    try:
        request = run.Request(params, attempts=6, records=records, check_mode=check_mode, diff=diff,
                              warn=warned.append)
        result = run.run(backend, request, log=logged.append)
    finally:
        backend.close()
    return result, warned, logged


def _stable(result):
    return dict((k, v) for k, v in result.items() if k not in VOLATILE)


def test_a_run_for_every_state_of_the_module():
    assert sorted(run.RUNS) == sorted(reshape_module.SPEC.options['state']['choices'])


def test_the_plan_of_the_core_is_the_modules(fleet, capsys, tmp_path):
    node = fleet['nodes'][0]
    asked = {'devices': _devices(node), 'snapshot_dir': str(tmp_path / 'snap')}
    rc, expected = run_module_main(reshape_module.main, dict(asked, embedded_db=fleet['embedded_db'],
                                                             root_provider=node['provider']),
                                   capsys, check=True, diff=True)
    got, warned, logged = _core(fleet, _params(fleet, node, **asked), check_mode=True, diff=True)
    assert rc == 0 and 'failed' not in got
    assert got['status'] == expected['status'] and got['plan'] == expected['plan']
    assert _stable(got) == _stable(expected)
    assert warned == got['remarks']
    assert logged and all(message in expected['log'] for message in logged)


def test_a_verification_that_does_not_pass_is_a_failed_result(fleet, tmp_path):
    node = fleet['nodes'][1]                  # never reshaped: its tree is not the layout's
    params = _params(fleet, node, devices=_devices(node), state='verified', snapshot_dir=str(tmp_path / 'snap'))
    got, _warned, logged = _core(fleet, params)
    assert got['failed'] is True and got['verified'] is False and got['msg']
    assert got['log'] == logged
    assert 'diff' not in got                  # not in diff mode


def test_the_options_are_checked_before_anything_is_read(fleet):
    node = fleet['nodes'][0]
    with pytest.raises(ConfigurationError) as raised:
        _core(fleet, _params(fleet, node, devices=None, state='verified'))
    assert 'devices' in str(raised.value)
