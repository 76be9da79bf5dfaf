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
