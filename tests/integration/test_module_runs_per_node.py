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
are asked for, run their commands on the node besides (tests/integration/test_nova_compute_supervised.py).
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
