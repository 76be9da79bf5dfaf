# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""compute_service: what it does without nova, and the update it computes.

The calls to nova's real os-services API are in tests/nova_oracle/test_nova_services.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.placement.upgrade.plugins.modules import compute_service
from ansible_collections.placement.upgrade.plugins.module_utils._placement.nova import services as nova_services

ENABLED = {'id': 'c0ffee00-0000-4000-8000-000000000001', 'host': 'cmp-01', 'binary': 'nova-compute',
           'status': 'enabled', 'state': 'up', 'disabled_reason': None, 'forced_down': False}


def test_without_nova_the_task_says_so(run_module, store):
    rc, result = run_module(compute_service, {'host': 'cmp-01', 'state': 'disabled'})
    assert rc == 1 and result['failed'] is True
    assert 'compute_service needs nova\'s compute API' in result['msg']
    assert 'the embedded store has no nova' in result['msg']


def test_a_missing_embedded_store_is_not_created(run_module, tmp_path):
    rc, result = run_module(compute_service, {'host': 'cmp-01', 'embedded_db': str(tmp_path / 'none.db')})
    assert rc == 1 and 'does not exist' in result['msg']
    assert not (tmp_path / 'none.db').exists()


@pytest.mark.parametrize('current, asked, body', [
    (ENABLED, dict(enabled=False, disabled_reason='why'), {'status': 'disabled', 'disabled_reason': 'why'}),
    (ENABLED, dict(enabled=True), {}),
    (ENABLED, dict(), {}),
    (dict(ENABLED, status='disabled', disabled_reason='why'), dict(enabled=False, disabled_reason='why'), {}),
    (dict(ENABLED, status='disabled', disabled_reason='why'), dict(enabled=False), {}),
    (dict(ENABLED, status='disabled', disabled_reason='why'), dict(enabled=False, disabled_reason='other'),
     {'status': 'disabled', 'disabled_reason': 'other'}),
    (dict(ENABLED, status='disabled', disabled_reason='why'), dict(enabled=True), {'status': 'enabled'}),
    (ENABLED, dict(forced_down=True), {'forced_down': True}),
    (dict(ENABLED, forced_down=True), dict(forced_down=True), {}),
])
def test_only_what_differs_is_sent(current, asked, body):
    assert nova_services.wanted_update(current, **asked) == body


def test_check_mode_predicts_nova_record():
    after = nova_services.predicted(dict(ENABLED, status='disabled', disabled_reason='why'), {'status': 'enabled'})
    assert (after['status'], after['disabled_reason']) == ('enabled', None)
    after = nova_services.predicted(ENABLED, {'forced_down': True})
    assert (after['forced_down'], after['state']) == (True, 'down')
