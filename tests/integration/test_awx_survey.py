# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""extensions/awx/rolling_reshape_survey.json: the survey the collection ships, answered as AWX
sends the answers (text and multiple choice as strings, integers as numbers), drives a plan and
then a roll of a simulated fleet with ansible-playbook."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest
import yaml

import simfleet
from test_fleet_playbook import REPO, playbook, statuses, summary

pytestmark = pytest.mark.slow

SURVEY = os.path.join(REPO, 'extensions', 'awx', 'rolling_reshape_survey.json')
PLAY_VARS = ('rolling_reshape_hosts', 'rolling_reshape_serial', 'rolling_reshape_max_fail_percentage')


def survey():
    with open(SURVEY) as handle:
        return json.load(handle)


def answers(**given):
    """The extra vars AWX builds from the survey: defaults, with ``given`` typed in."""
    out = {}
    for question in survey()['spec']:
        value = given.get(question['variable'], question['default'])
        out[question['variable']] = int(value) if question['type'] == 'integer' else str(value)
    return out


def test_every_question_is_a_variable_of_the_roll():
    with open(os.path.join(REPO, 'roles', 'rolling_reshape', 'meta', 'argument_specs.yml')) as handle:
        role = yaml.safe_load(handle)['argument_specs']['main']['options']
    for question in survey()['spec']:
        assert question['variable'] in role or question['variable'] in PLAY_VARS, question['variable']
        if question['type'] == 'multiplechoice':
            assert question['default'] in question['choices'].split('\n')
            spec = role.get(question['variable']) or {}
            if 'choices' in spec:
                assert set(question['choices'].split('\n')) == set(spec['choices'])


def test_a_plan_then_a_roll_with_the_survey_answers_as_awx_sends_them(tmp_path):
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=4)
    rc, out = playbook(fleet, 'rolling_reshape.yml',
                       extra=answers(rolling_reshape_serial='1,50%', rolling_reshape_plan_only='true'))
    assert rc == 0, out
    assert summary(fleet)['mode'] == 'plan'
    assert set(statuses(fleet).values()) == {'planned', 'noop'}
    rc, out = playbook(fleet, 'rolling_reshape.yml', extra=answers(rolling_reshape_serial='1,50%'))
    assert rc == 0, out
    assert statuses(fleet) == fleet['expected']
    assert '[rolling_progress] batch 1: compute-01 (nodes 1-1 of 4)' in out
    assert '[rolling_progress] batch 2: compute-02, compute-03 (nodes 2-3 of 4)' in out


def test_lists_and_dicts_given_as_survey_text(tmp_path):
    """An extra var typed in a survey text field is a string, for a list or a dict too: the
    ownership override as JSON text and the PCI filters as compact text reach the modules."""
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=4, unmapped=['compute-02'])
    unmapped = next(node for node in fleet['nodes'] if node['unmapped'])
    assert fleet['expected'][unmapped['name']] == 'failed'
    extra = answers(rolling_reshape_plan_only='true')
    extra['rolling_reshape_ownership'] = json.dumps({unmapped['unmappable_consumer']: {'0000:84:00.0': 1}})
    extra['rolling_reshape_pci_filters'] = '10de:25b6, 8086'
    rc, out = playbook(fleet, 'rolling_reshape.yml', extra=extra)
    assert rc == 0, out
    # the override explains the guest the strict policy would otherwise fail the node for
    assert statuses(fleet) == {'compute-01': 'planned', 'compute-02': 'planned', 'compute-03': 'planned',
                               'compute-04': 'noop'}

    extra['rolling_reshape_pci_filters'] = '10de:25b6:1'
    rc, out = playbook(fleet, 'rolling_reshape.yml', extra=extra)
    assert rc != 0
    assert "pci_filters: '10de:25b6:1' is not vendor[:product] in '10de:25b6:1'" in out
