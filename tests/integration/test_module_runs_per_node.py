# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How many module runs a roll makes on each node (issue 45): device_info, and nothing else.

Every node of a simulated fleet gets its own Python interpreter, a wrapper script around this
Python that writes the name of each module file Ansible runs through it (``AnsiballZ_<module>.py``)
to the node's log: the node's tasks are then shipped and run as on a remote node (the in-process
actions run their module in process only with the controller's own Python).  The roll
(playbooks/rolling_reshape.yml, its defaults: every pre-flight check on) and its plan must run
device_info once per node and nothing else on the node: the pre-flight's checks of the node ride on
that run (nova-compute's own credentials, the mdevs' persistence).  The nova-compute steps, when they
are asked for, run their commands on the node besides (shell lines, no module: the last test here).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys

import pytest
import yaml

import simfleet
from test_fleet_playbook import playbook, statuses
from test_preflight_nodes_playbook import _mdevs

pytestmark = pytest.mark.slow

WRAPPER = """#!/bin/sh
# the node's Python: note which module file runs, then run it with the controller's Python
for arg in "$@"; do
  case "$arg" in
    *AnsiballZ_*) echo "${arg##*/}" >> %(log)s ;;
  esac
done
[ $# -gt 0 ] || echo "(stdin)" >> %(log)s
exec %(python)s "$@"
"""


def node_interpreters(fleet, directory):
    """An inventory giving every node its own logging interpreter; returns (inventory path, {node: log})."""
    os.makedirs(directory)
    logs, hosts = {}, {}
    for node in fleet['nodes']:
        name = node['name']
        logs[name] = os.path.join(directory, '%s.log' % name)
        wrapper = os.path.join(directory, '%s-python' % name)
        with open(wrapper, 'w') as handle:
            handle.write(WRAPPER % {'log': logs[name], 'python': sys.executable})
        os.chmod(wrapper, 0o755)
        hosts[name] = {'ansible_python_interpreter': wrapper}
    path = os.path.join(directory, 'interpreters.yml')
    with open(path, 'w') as handle:
        yaml.safe_dump({'compute': {'hosts': hosts}}, handle)
    return path, logs


def module_runs(logs):
    """{node: [module file, ...]} run on each node so far; the logs are emptied."""
    runs = {}
    for name, path in sorted(logs.items()):
        runs[name] = []
        if os.path.exists(path):
            with open(path) as handle:
                runs[name] = handle.read().split()
            os.unlink(path)
    return runs


def test_a_roll_runs_device_info_and_nothing_else_on_each_node(tmp_path):
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=4)
    inventory, logs = node_interpreters(fleet, str(tmp_path / 'nodes'))
    # one held mdev of the first node not defined persistently: the checks' warning shows they ran
    node = fleet['nodes'][0]
    uuid, mdev = sorted((u, m) for u, m in _mdevs(node).items() if m['holder'])[0]
    os.unlink(os.path.join(node['mdevctl_dir'], mdev['gpu'], uuid))
    transient = '%s: 1 mdev(s) held by guests are not defined persistently' % node['name']
    only_discovery = dict((name, ['AnsiballZ_device_info.py']) for name in logs)

    # the plan (check mode): every node visited once
    rc, out = playbook(fleet, 'rolling_reshape.yml', check=True, inventories=[inventory])
    assert rc == 0, out
    assert module_runs(logs) == only_discovery, out
    assert transient in out, out

    # the roll, one node a batch, every default check on (the mdevs' persistence is checked on
    # every node: a simulated node's definitions and stand-in mdevctl, tools/simfleet.py)
    rc, out = playbook(fleet, 'rolling_reshape.yml', inventories=[inventory])
    assert rc == 0, out
    assert statuses(fleet) == fleet['expected']
    assert module_runs(logs) == only_discovery, out
    assert transient in out, out

    # a batch of 2
    rc, out = playbook(fleet, 'rolling_reshape.yml', extra={'rolling_reshape_serial': 2}, inventories=[inventory])
    assert rc == 0, out
    assert module_runs(logs) == only_discovery, out


@pytest.mark.real
def test_with_nova_compute_steps_the_node_runs_only_discovery_and_the_service_commands(
        tmp_path, placement_server, rest_backend, unique_name):
    """nova-compute's steps asked for (kolla-ansible's recipe of docs/operator-guide.md: its unit stopped
    and started through the service manager, stood in here as in test_nova_compute_supervised.py): on
    the node, device_info is still the one module run; the stop, the start and the reads of the version
    and the unit's state are commands (node_command's shell lines, no module shipped)."""
    import standin_units
    import test_nova_compute_supervised as supervised
    from test_fleet_playbook import BIN, _env, summary
    import subprocess
    import json

    fleet, node, _provider = supervised.one_node_fleet(tmp_path, placement_server, rest_backend, unique_name)
    inventory, logs = node_interpreters(fleet, str(tmp_path / 'nodes'))
    with supervised_side(tmp_path) as (side, nova):
        state_dir = side['start'](supervised.KOLLA_UNIT, 1)
        out_dir = fleet['out_dir']
        playbook_path = os.path.join(out_dir, 'systemd_host_roll.yml')
        with open(playbook_path, 'w') as handle:
            handle.write(supervised.SYSTEMD_HOST)
        extra = dict(supervised.nova_steps(nova), **supervised.KOLLA)
        extra.update({'rolling_reshape_snapshot_dir': os.path.join(out_dir, 'snapshots'),
                      'rolling_reshape_report_dir': os.path.join(out_dir, 'reports')})
        env = _env(out_dir)
        env['PATH'] = side['bin'] + os.pathsep + env.get('PATH', '')
        proc = subprocess.run([os.path.join(BIN, 'ansible-playbook'), '-i', fleet['inventory'], '-i', inventory,
                               playbook_path, '-e', json.dumps(extra)], env=env, cwd=out_dir,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                              check=False, timeout=600)
    assert proc.returncode == 0, proc.stdout
    assert [n['status'] for n in summary(fleet)['nodes']] == ['reshaped']
    # one module run on the node: discovery; nova-compute's steps ran there as commands (node_command
    # sends a shell line, no module): the unit was stopped and started again
    assert module_runs(logs) == {node: ['AnsiballZ_device_info.py']}, proc.stdout
    assert [e.split()[0] for e in standin_units.events(state_dir)] == ['start', 'unit-stop', 'unit-start']


class supervised_side(object):
    """test_nova_compute_supervised.py's node side and nova stand-in, outside of pytest's fixtures."""

    def __init__(self, tmp_path):
        self.tmp_path = tmp_path

    def __enter__(self):
        import test_nova_compute_supervised as supervised
        self._side = supervised.node_side.__wrapped__(self.tmp_path)
        side = next(self._side)
        self._nova = supervised.NovaServices(side['dir'])
        return side, self._nova

    def __exit__(self, *exc):
        self._nova.close()
        try:
            next(self._side)
        except StopIteration:
            pass
        return False
