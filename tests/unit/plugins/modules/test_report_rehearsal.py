# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report of a rehearsal (playbooks/rehearse.yml: the roll on a copy of production) gives no
command of the rollback or of the roll: both would act on production, which the rehearsal did not
change.  It says so, naming the copy.  (The rehearsal's own report, end to end:
tests/integration/test_rehearsal.py.)"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.placement.upgrade.plugins.modules import fleet_report


def _records(tmp_path):
    """The records the rolling_reshape role gives: cn1 reshaped, cn2 failed after its reshape, cn3 deferred."""
    def applied(node):
        return {'status': 'reshaped', 'changed': True, 'snapshot': str(tmp_path / 'snap' / ('%s.json' % node))}
    return [
        {'node': 'cn1', 'status': 'reshaped', 'reshape': applied('cn1'), 'started': 1.0, 'finished': 2.0},
        {'node': 'cn2', 'status': 'failed', 'reason': 'verification failed', 'reshape': applied('cn2'),
         'started': 2.0, 'finished': 3.0},
        {'node': 'cn3', 'status': 'deferred', 'reason': 'a move in flight', 'reshape': {'status': 'deferred'},
         'started': 3.0, 'finished': 4.0},
    ]


def _run(run_module, tmp_path, name, context):
    dest = str(tmp_path / name)
    os.makedirs(str(tmp_path / 'snap'), exist_ok=True)
    for node in ('cn1', 'cn2'):
        (tmp_path / 'snap' / ('%s.json' % node)).write_text('{}')
    rc, res = run_module(fleet_report, {'embedded_db': str(tmp_path / 'copy.db'), 'dest': dest, 'run_id': name,
                                        'records': _records(tmp_path), 'hosts': ['cn1', 'cn2', 'cn3'],
                                        'context': dict(context, inventory='/srv/inventory')})
    assert rc == 0, res
    with open(os.path.join(dest, 'report.md')) as handle:
        text = handle.read()
    return res, text


def test_a_rehearsal_report_gives_no_rollback_of_production(run_module, tmp_path):
    copy = str(tmp_path / 'copy.db')
    res, text = _run(run_module, tmp_path, 'rehearsal', {'playbook': 'placement.upgrade.rehearse'})
    steps = res['summary']['next_steps']
    said = ('this run was a rehearsal on the copy %s: production was not changed, so there is nothing to roll '
            'back there (the next rehearsal starts from a fresh copy)' % copy)
    assert 'Nothing to roll back in production for cn1, cn2: %s' % said in steps, steps
    for where in (' '.join(steps), text, str(res['summary']['nodes'])):
        assert 'placement.upgrade.rollback' not in where
        assert 'placement.upgrade.rolling_reshape' not in where      # a rerun of the roll would act on production
    assert ("rehearse it again with the rehearsal's own command and --limit cn3 (playbooks/rehearse.yml exports "
            "a fresh copy of production)") in ' '.join(steps)
    entries = dict((e['node'], e) for e in res['summary']['nodes'])
    assert entries['cn1']['rollback'] == '' and entries['cn1']['no_rollback'] == said
    assert entries['cn2']['rollback'] == '' and entries['cn2']['no_rollback'] == said
    assert entries['cn2']['outcome'] == 'failed after its reshape was applied to the copy'
    assert entries['cn3']['no_rollback'] == ''
    assert said in ' '.join(text.split())


def test_the_same_records_of_a_real_roll_get_their_rollback(run_module, tmp_path):
    """Without the rehearsal's context (a roll), the same records get the rollback and rerun commands."""
    res, text = _run(run_module, tmp_path, 'roll', {})
    steps = ' '.join(res['summary']['next_steps'])
    assert 'placement.upgrade.rollback -e rollback_nodes=cn1,cn2' in steps
    assert 'placement.upgrade.rolling_reshape --limit cn3' in steps
    assert 'rehearsal' not in steps
    # another playbook name, or a rehearsal's name on a store that is not embedded, is no rehearsal either
    rc, res = run_module(fleet_report, {'auth_type': 'admin_token', 'auth': {'token': 'a-token-nowhere-shown', 'endpoint': 'http://127.0.0.1:9'},
                                        'dest': str(tmp_path / 'rest'), 'run_id': 'rest', 'records': _records(tmp_path),
                                        'context': {'playbook': 'placement.upgrade.rehearse'}})
    assert rc == 0, res
    assert 'placement.upgrade.rollback -e rollback_nodes=cn1,cn2' in ' '.join(res['summary']['next_steps'])
