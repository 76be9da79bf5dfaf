# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A whole ``reshape_node`` checks the device report once and builds the layout once per tree
state (issue 44): the read's selection of the consumers to read in full (read_node) and the plan
of that read share one layout; a state the pass makes (the read plus the children it created) or
a fresh read after a concurrent update is a new tree state, whose layout is built once again.

The counters wrap every binding of ``discovery.check_report`` in the loaded core modules (a
module that imported it by name included), the planner's one layout builder (``_layout_of``,
which records the tree state it was given) and ``layout.layout_of_report`` (every layout of a
device report goes through it: a layout built anywhere else would show as a difference).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import sys
import uuid as _uuid

from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import layout
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import moves
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import planner
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node.discover import report_check

from test_reshaper_support import consumers_by_name, put

CORE = 'ansible_collections.placement.upgrade.plugins.module_utils._placement'


class Counts(object):
    """What a pass did: report checks, layouts built, and the tree state (its providers) of each."""

    def __init__(self, monkeypatch):
        self.checks = 0
        self.reports = 0
        self.states = []   # the providers mapping of each tree state a layout was built for
        real_check = report_check.check_report
        real_of = planner._layout_of  # pylint: disable=protected-access
        real_report = layout.layout_of_report

        def check(*args, **kwargs):
            self.checks += 1
            return real_check(*args, **kwargs)

        def layout_of(tree, *args, **kwargs):
            self.states.append(tree.state['providers'])
            return real_of(tree, *args, **kwargs)

        def of_report(*args, **kwargs):
            self.reports += 1
            return real_report(*args, **kwargs)

        patched = 0
        for name, module in list(sys.modules.items()):
            if not name.startswith(CORE) or module is None:
                continue
            for attr, value in list(vars(module).items()):
                if value is real_check:
                    monkeypatch.setattr(module, attr, check)
                    patched += 1
                elif value is real_report:
                    monkeypatch.setattr(module, attr, of_report)
        assert patched >= 2   # discovery's name and report_check's own at least
        monkeypatch.setattr(planner, '_layout_of', layout_of)

    def distinct_states(self):
        out = []
        for providers in self.states:
            if not any(providers is seen for seen in out):
                out.append(providers)
        return out


def _reshape(backend, node, **kwargs):
    return reshaper.reshape_node(backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'],
                                 backoff=0, **kwargs)


class WritesBeforeFirstReshape(object):
    """A concurrent writer: a new consumer on the root right before the first POST /reshaper."""

    def __init__(self, inner, root_uuid, pool_uuid):
        self.inner, self.root_uuid, self.pool_uuid = inner, root_uuid, pool_uuid
        self.reshapes = 0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def reshape(self, body):
        self.reshapes += 1
        if self.reshapes == 1:
            put(self.inner, str(_uuid.uuid4()), {self.root_uuid: {'resources': {'VCPU': 2, 'MEMORY_MB': 512}},
                                                 self.pool_uuid: {'resources': {'DISK_GB': 1}}})
        return self.inner.reshape(body)


def test_a_reshape_checks_the_report_once_and_builds_one_layout_per_tree_state(embedded_backend, node, monkeypatch):
    counts = Counts(monkeypatch)
    result = _reshape(embedded_backend, node)
    assert result['status'] == 'reshaped' and result['verified'] is True, result['msg']
    assert result['retries'] == 0 and result['children_created']
    assert counts.checks == 1
    # the tree states of the pass: its read (the selection and the first plan), then the read plus
    # the two children it created (the plan it sends); one layout each
    assert len(counts.states) == 2
    assert len(counts.distinct_states()) == 2
    assert counts.reports == 2


def test_a_retried_reshape_builds_the_layout_again_only_for_the_new_read(embedded_backend, node, monkeypatch):
    counts = Counts(monkeypatch)
    writer = WritesBeforeFirstReshape(embedded_backend, node['root'], node['pool'])
    result = _reshape(writer, node)
    assert result['status'] == 'reshaped' and result['verified'] is True, result['msg']
    assert result['retries'] == 1 and writer.reshapes == 2
    assert counts.checks == 1
    # the first attempt's two tree states (as above), then the fresh read after the conflict (the
    # children exist by then: nothing is created, its plan is sent): three states, one layout each
    assert len(counts.states) == 3
    assert len(counts.distinct_states()) == 3
    assert counts.reports == 3


def test_a_noop_pass_reads_once_and_builds_one_layout(embedded_backend, node, monkeypatch):
    _reshape(embedded_backend, node)
    counts = Counts(monkeypatch)
    result = _reshape(embedded_backend, node)
    assert result['status'] == 'noop', result['msg']
    assert counts.checks == 1
    assert len(counts.states) == 1 and counts.reports == 1


def test_verify_node_checks_the_report_once_and_builds_one_layout(embedded_backend, node, monkeypatch):
    _reshape(embedded_backend, node)
    counts = Counts(monkeypatch)
    result = reshaper.verify_node(embedded_backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    assert result['verified'] is True, result['msg']
    assert counts.checks == 1
    assert len(counts.states) == 1 and counts.reports == 1


def _two_gpu_moves():
    return [{'from_resource_provider': 'compute-01', 'to_resource_provider': name, 'moved_resources': {'VGPU': 8}}
            for name in ('compute-01_pci_0000_84_00_0', 'compute-01_pci_0000_85_00_0')]


def _split(node):
    names = consumers_by_name(node['report'])
    a, b = 'compute-01_pci_0000_84_00_0', 'compute-01_pci_0000_85_00_0'
    return {names['instance-00000001']: {a: {'VGPU': 2}},
            names['instance-00000002']: {a: {'VGPU': 1}, b: {'VGPU': 1}},
            names['instance-00000003']: {b: {'VGPU': 1}}}


def test_a_reshape_of_move_records_builds_one_layout_per_tree_state(embedded_backend, node, monkeypatch):
    states = []
    real = moves.layout_from_moves

    def counting(state, *args, **kwargs):
        states.append(getattr(state, 'state', state)['providers'])   # a state dict or a ProviderTree
        return real(state, *args, **kwargs)

    monkeypatch.setattr(moves, 'layout_from_moves', counting)
    result = reshaper.reshape_node(embedded_backend, 'compute-01', None, moves=_two_gpu_moves(), consumers=_split(node),
                                   snapshot_dir=node['snapdir'], backoff=0)
    assert result['status'] == 'reshaped' and result['verified'] is True, result['msg']
    # the read (its selection and its plan), then the read plus the two children created
    assert len(states) == 2 and states[0] is not states[1]
