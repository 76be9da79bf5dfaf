# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The commands of the report start as the context says (``ansible_playbook``), e.g. the demo's script."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import report

PROGRAM = '/srv/out/demo/ansible-playbook'


def _records():
    return [
        {'node': 'n1', 'status': 'reshaped', 'snapshot': '/s/n1.json', 'touched': True},
        {'node': 'n2', 'status': 'deferred', 'reason': 'migration in flight'},
        {'node': 'n5', 'status': 'failed', 'reason': 'verification failed', 'touched': True, 'snapshot': '/s/n5.json'},
    ]


def test_the_commands_start_with_the_context_program():
    ctx, dropped = report.run_context({'inventory': ['/srv/out/demo/inventory.yml'], 'ansible_playbook': PROGRAM})
    assert dropped == [] and ctx['ansible_playbook'] == PROGRAM
    data = report.build_report(_records(), hosts=['n1', 'n2', 'n5', 'n6'], context=ctx)
    commands = [step[step.index(PROGRAM):] for step in data['next_steps'] if PROGRAM in step]
    # the rerun of the failed node, of the deferred one, of the one not reached, the rollback
    assert len(commands) == len(data['next_steps']) == 4, data['next_steps']
    assert commands[1] == '%s -i /srv/out/demo/inventory.yml placement.upgrade.rolling_reshape --limit n2' % PROGRAM
    assert commands[-1].startswith('%s -i /srv/out/demo/inventory.yml placement.upgrade.rollback -e rollback_nodes='
                                   % PROGRAM)
    assert not any(' ansible-playbook ' in step for step in data['next_steps'])
    by_node = dict((n['node'], n) for n in data['nodes'])
    assert by_node['n1']['rollback'] == ('%s -i /srv/out/demo/inventory.yml placement.upgrade.rollback '
                                         '-e rollback_nodes=n1' % PROGRAM)
    assert '(rollback: %s -i ' % PROGRAM in by_node['n5']['outcome']
    assert '%s -i /srv/out/demo/inventory.yml placement.upgrade.rollback' % PROGRAM in report.render_markdown(data)


def test_without_a_program_the_commands_say_ansible_playbook():
    for context in (None, {}, {'ansible_playbook': ''}, {'ansible_playbook': '   '}, {'inventory': 'inv'}):
        data = report.build_report(_records(), context=context)
        assert data['next_steps'] and all(' ansible-playbook -i ' in step for step in data['next_steps']), context
    # shell text as given, its spaces normalised
    data = report.build_report(_records(), context={'ansible_playbook': ' ANSIBLE_CONFIG=a.cfg   /v/ansible-playbook '})
    assert data['next_steps'][-1].endswith('ANSIBLE_CONFIG=a.cfg /v/ansible-playbook -i INVENTORY '
                                           'placement.upgrade.rollback -e rollback_nodes=n1,n5')
    # a value that is not text is dropped as any other key
    ctx, dropped = report.run_context({'ansible_playbook': ['x']})
    assert 'ansible_playbook' not in ctx and dropped == ['ansible_playbook']


# -- a plan's next step is the roll itself (issue 40 section 3) ------------------------------

def _plan_records():
    return [
        {'node': 'n1', 'status': 'planned'},
        {'node': 'n2', 'status': 'deferred', 'reason': 'migration in flight'},
        {'node': 'n3', 'status': 'noop'},
    ]


def test_a_check_mode_plan_names_the_roll_itself():
    ctx, _d = report.run_context({'inventory': ['inv.yml'], 'check_mode': True, 'plan': True, 'limit': 'n*'})
    data = report.build_report(_plan_records(), hosts=['n1', 'n2', 'n3'], mode='plan', context=ctx)
    roll = [s for s in data['next_steps'] if s.startswith('Nothing was changed')]
    assert roll == ['Nothing was changed (check mode). To roll, run the same command without --check: '
                    "ansible-playbook -i inv.yml placement.upgrade.rolling_reshape --limit 'n*'"], data['next_steps']
    assert report.summary(data)['next_steps'] == data['next_steps']
    # a plan without check mode (rolling_reshape_plan_only): the roll is the command without it
    ctx, _d = report.run_context({'inventory': ['inv.yml'], 'check_mode': 'False', 'plan': 'True'})
    data = report.build_report(_plan_records(), mode='plan', context=ctx)
    assert ('Nothing was changed (a plan: rolling_reshape_plan_only). To roll, run the same command without '
            'rolling_reshape_plan_only: ansible-playbook -i inv.yml placement.upgrade.rolling_reshape') \
        in data['next_steps']
    # nothing to roll: no roll step; an applied roll has none either
    data = report.build_report([{'node': 'n3', 'status': 'noop'}], mode='plan', context=ctx)
    assert data['next_steps'] == []
    assert not any(s.startswith('Nothing was changed') for s in report.build_report(_records())['next_steps'])


def test_the_sliced_preflight_names_the_sliced_playbooks():
    ctx, _d = report.run_context({'inventory': 'inv.yml', 'check_mode': True, 'plan': True,
                                  'playbook': 'placement.upgrade.sliced_preflight', 'preflight_run_id': 'R1'})
    records = _plan_records() + [{'node': 'n5', 'status': 'failed', 'reason': 'strict ownership'}]
    data = report.build_report(records, mode='plan', context=ctx)
    steps = data['next_steps']
    assert not any('placement.upgrade.rolling_reshape' in s for s in steps), steps
    assert steps[0] == ('n5 would stop a real roll: strict ownership. Fix the reason, then run the pre-flight '
                        'again (it plans the whole fleet): ansible-playbook -i inv.yml '
                        'placement.upgrade.sliced_preflight --check')
    # the gate failed: the pre-flight again, not the slices
    assert not any('sliced_roll' in s for s in steps), steps
    assert any(s.startswith('The roll would defer n2') for s in steps), steps
    steps = report.build_report(_plan_records(), mode='plan', context=ctx)['next_steps']
    assert not any('placement.upgrade.rolling_reshape' in s for s in steps), steps
    assert ('Nothing was changed (the sliced roll\'s pre-flight, check mode). To roll, run the workflow\'s '
            'slices (the canary\'s job first), each: ansible-playbook -i inv.yml placement.upgrade.sliced_roll '
            '-e preflight_run_id=R1') in steps
    assert ('Then write the one report of every slice: ansible-playbook -i inv.yml placement.upgrade.sliced_report '
            '-e preflight_run_id=R1') in steps
