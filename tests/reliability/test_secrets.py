# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secrets figure (issue 12 e), the short run: every auth form through a real
``ansible-playbook -vvv`` against a real Keystone and Placement (keystone_secrets.py), once
with good credentials and once with a bad secret; no secret anywhere, nothing else masked.

The full run (keystone unreachable, Placement unreachable, writes, a user without the service
role, the ``environment:`` keyword caveat): ``python tests/reliability/keystone_secrets.py --full``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import keystone_secrets  # noqa: E402
from keystone_server import shared_stack  # noqa: E402

pytestmark = [pytest.mark.real, pytest.mark.slow]


def test_the_counters_see_a_leak_and_a_mask(tmp_path):
    """The figures are not blind: a secret in the output and a masked user name are counted."""
    suite = keystone_secrets.Suite(stack=_NoStack(), workdir=str(tmp_path))
    suite.secrets = {'s3cret-value'}
    task = keystone_secrets.Task('auth dict, password', 'bad secret', 'resource_provider_info', {}, False,
                                 ['"username": "placement"'])
    suite.runs.append({
        'label': 'synthetic', 'tasks': [task], 'rc': 2, 'seconds': 0.0,
        'output': 'TASK [auth dict, password | bad secret] ****\n'
                  '<localhost> PUT /tmp/a/tmpx TO /tmp/a/AnsiballZ_resource_provider_info.py\nfatal: [localhost]: FAILED! => '
                  '{"msg": "401 (********_upgrade.identity) password s3cret-value", '
                  '"invocation": {"module_args": {"auth": {"username": "********"}}}}\nPLAY RECAP ****\n',
        'results': {'r0': {'failed': True, 'msg': 'x'}}, 'results_text': '{"r0": {"failed": true}}',
        'syslog': 'Invoked with auth={} s3cret-value\n'})
    fig = suite.figures()
    assert fig['secret_occurrences'] == 2                 # the output and the syslog line
    assert fig['masked_non_secrets'] == 3                 # two masks + the user name not shown
    assert fig['module_tasks'] == 1 and fig['module_runs'] == 1 and len(fig['problems']) == 4, fig['problems']
    # a module run whose invocation the syslog capture did not see is a problem of its own
    suite.runs[0]['syslog'] = ''
    assert 'synthetic: the syslog capture saw 0 invocation(s) for 1 module run(s)' in suite.figures()['problems']


class _NoStack(object):
    passwords = {}

    class keystone(object):
        admin_password = 'unused-admin-password'


def test_no_secret_shows_and_nothing_else_is_masked(record_property):
    fig, text = keystone_secrets.run_suite(stack=shared_stack())
    record_property('reliability_figures', text)
    # 12 tasks of the auth forms in process, the same 12 as modules, 2 of the OS_* environment
    assert fig['forms'] == 7 and fig['module_tasks'] == 26 and fig['module_runs'] == 12, text
    assert fig['secret_occurrences'] == 0, text
    assert fig['masked_non_secrets'] == 0, text
    assert not fig['problems'], text
