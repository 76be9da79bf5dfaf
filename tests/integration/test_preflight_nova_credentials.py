# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""placement_preflight's nova_credentials check: nova-compute's OWN [placement] credentials, read
from each node's nova.conf, probed against a real Keystone and the real Placement behind it
(tests/keystone_server.py: user ``placement`` has admin and service, ``operator`` admin only;
Placement's stock policy lets only the ``service`` role call POST /reshaper)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends import factory
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import novaconf
from ansible_collections.placement.upgrade.plugins.module_utils._placement.nova import placement_auth
from ansible_collections.placement.upgrade.plugins.modules import placement_preflight

from keystone_server import shared_stack
from module_runner import run_module_main

pytestmark = [pytest.mark.real, pytest.mark.slow]


@pytest.fixture
def stack():
    return shared_stack()


def nova_conf_text(stack, user, password=None, **extra):
    """A nova.conf whose [placement] is nova's credentials for ``user`` (as a deployment writes it)."""
    options = {'auth_type': 'password', 'auth_url': stack.auth_url, 'username': user,
               'password': stack.passwords[user] if password is None else password,
               'project_name': 'service', 'user_domain_name': 'Default', 'project_domain_name': 'Default',
               'region_name': 'RegionOne', 'valid_interfaces': 'internal'}
    options.update(extra)
    return u'[DEFAULT]\ndebug = false\n\n[placement]\n' + u''.join(
        u'%s = %s\n' % (k, v) for k, v in sorted(options.items()) if v is not None)


def node(tmp_path, name, text):
    """The ``nodes`` element node_preflight's result gives for a node whose nova.conf is ``text``."""
    entry = {'node': name, 'mdevs': None}
    if text is None:
        entry['nova_placement'] = {'missing': 'no nova.conf at %s' % (tmp_path / name / 'nova.conf')}
        return entry
    (tmp_path / name).mkdir()
    path = tmp_path / name / 'nova.conf'
    path.write_text(text)
    entry['nova_placement'] = novaconf.placement_section(str(path), is_secret=factory.is_secret_name)
    return entry


def warned(result):
    # (ansible-core 2.19 returns each as a WarningSummary: {'event': {'msg': ...}}; older ones as text)
    return [w['event']['msg'] if isinstance(w, dict) else w for w in result.get('warnings') or []]


def _checks(result):
    return dict((c['check'], c) for c in result['checks'])


def test_nova_credentials_refused_named_and_no_secret_anywhere(stack, tmp_path, capsys, monkeypatch):
    probes = []
    real_connect = placement_auth.connect

    def counting(conf, log=None):
        probes.append(conf['options'].get('username') or conf['auth'].get('username'))
        return real_connect(conf, log=log)

    monkeypatch.setattr(placement_auth, 'connect', counting)
    wrong = 'not-the-password-4711'
    same = node(tmp_path, 'cn-ok-1', nova_conf_text(stack, 'placement'))
    nodes = [
        node(tmp_path, 'cn-op', nova_conf_text(stack, 'operator')),
        same,
        # the same file at the same path (each node's /etc/nova/nova.conf on a real fleet)
        dict(same, node='cn-ok-2'),
        node(tmp_path, 'cn-badpw', nova_conf_text(stack, 'placement', password=wrong)),
        node(tmp_path, 'cn-noconf', None),
        node(tmp_path, 'cn-noauth', u'[placement]\nregion_name = RegionOne\n'),
    ]
    args = dict(stack.password_auth('placement'), nodes=nodes)
    rc, result = run_module_main(placement_preflight.main, args, capsys)
    assert rc == 1, result
    checks = _checks(result)
    assert checks['reshape_permission']['passed'] is True  # the operator's own (the task's) may
    assert checks['nova_credentials']['passed'] is False
    msg = result['msg']
    assert msg.startswith('Pre-flight failed, no node was touched: nova_credentials: ')
    # the node whose nova lacks the service role: named, with the user, the roles and the hint
    assert ('cn-op: nova-compute may not reshape with its own credentials (user operator, project service, '
            'Placement at %s, from [placement] of %s; the token\'s roles: admin, manager, member, reader, '
            'no `service` role): 403 Forbidden' % (stack.placement.url, tmp_path / 'cn-op' / 'nova.conf')) in msg
    assert 'the credentials need the `service` role' in msg
    # the wrong password: Keystone's refusal, Placement not contacted
    assert ('cn-badpw: nova-compute cannot reach Placement with its own credentials ([placement] of %s): '
            '401 Unauthorized (placement_upgrade.identity): The identity service (Keystone) at %s rejected the '
            'credentials (401 Unauthorized)' % (tmp_path / 'cn-badpw' / 'nova.conf', stack.auth_url)) in msg
    assert 'cn-ok-1' not in msg and 'cn-ok-2' not in msg
    per_node = result['nova_credentials']
    assert per_node['cn-ok-1']['passed'] is True and per_node['cn-ok-2']['passed'] is True
    assert per_node['cn-ok-1']['roles'] == ['admin', 'manager', 'member', 'reader', 'service']
    assert per_node['cn-ok-1']['endpoint'] == stack.placement.url
    assert per_node['cn-op']['passed'] is False and per_node['cn-op']['user'] == 'operator'
    assert per_node['cn-noconf']['passed'] is None and per_node['cn-noauth']['passed'] is None
    # nodes with the same options are probed once; unreadable ones are not probed
    assert sorted(probes) == ['operator', 'placement', 'placement']
    # the nodes that cannot be checked are warnings, each named with why
    warnings = warned(result)
    assert ("nova-compute's own Placement credentials: cn-noconf: not checked: no nova.conf at %s"
            % (tmp_path / 'cn-noconf' / 'nova.conf')) in warnings
    assert any(w.startswith("nova-compute's own Placement credentials: cn-noauth: not checked: [placement] of %s "
                            "sets no auth_type" % (tmp_path / 'cn-noauth' / 'nova.conf')) for w in warnings), warnings
    # no password in the result, its warnings or its log, nor anything printed
    out = json.dumps(result)
    for secret in (stack.passwords['placement'], stack.passwords['operator'], wrong):
        assert secret not in out
    assert result['invocation']['module_args']['nodes'][0]['nova_placement']['secrets'] == {
        'password': 'VALUE_SPECIFIED_IN_NO_LOG_PARAMETER'}


def test_nova_credentials_pass_and_endpoint_choice(stack, tmp_path, capsys):
    nodes = [node(tmp_path, 'cn-1', nova_conf_text(stack, 'placement')),
             node(tmp_path, 'cn-2', nova_conf_text(stack, 'placement', valid_interfaces='admin,public'))]
    rc, result = run_module_main(placement_preflight.main, dict(stack.password_auth('operator'), nodes=nodes,
                                                                check_reshape_permission=False), capsys)
    assert rc == 0, result
    assert _checks(result)['nova_credentials'] == {
        'check': 'nova_credentials', 'passed': True,
        'detail': "nova-compute may reshape with its own [placement] credentials on 2 node(s) (2 probe(s))"}
    assert 'warnings' not in result
    # the endpoint nova would use: its region, its interfaces, or its endpoint_override
    nodes = [node(tmp_path, 'cn-3', nova_conf_text(stack, 'placement', region_name='RegionTwo')),
             node(tmp_path, 'cn-4', nova_conf_text(stack, 'placement', region_name=None,
                                                   endpoint_override='http://127.0.0.1:9'))]
    rc, result = run_module_main(placement_preflight.main, dict(stack.password_auth('placement'), nodes=nodes),
                                 capsys)
    assert rc == 1
    assert ('cn-3: nova-compute cannot reach Placement with its own credentials ([placement] of %s): the service '
            'catalog of %s has no placement endpoint for interface internal in region RegionTwo, which '
            'nova-compute looks up' % (tmp_path / 'cn-3' / 'nova.conf', stack.auth_url)) in result['msg']
    assert ('cn-4: nova-compute cannot reach Placement with its own credentials ([placement] of %s): Placement '
            'at http://127.0.0.1:9 could not be reached: the connection was refused' % (
                tmp_path / 'cn-4' / 'nova.conf')) in result['msg']
    assert stack.passwords['placement'] not in json.dumps(result)


def test_embedded_store_probes_nothing(tmp_path, capsys):
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend
    db = str(tmp_path / 'placement.db')
    EmbeddedBackend(db).close()
    entry = {'node': 'cn-1', 'nova_placement': {'options': {'auth_type': 'password'}, 'secrets': {'password': 'pw-x1'}},
             'mdevs': None}
    rc, result = run_module_main(placement_preflight.main, {'embedded_db': db, 'nodes': [entry]}, capsys)
    assert rc == 0, result
    assert _checks(result)['nova_credentials']['detail'] == (
        "the embedded store has no identity service: nova-compute's credentials of 1 node(s) are not probed")
    assert 'pw-x1' not in json.dumps(result)
