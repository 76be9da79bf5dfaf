# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The placement_preflight module on the embedded store and on the real Placement.

The reshape-permission probe is an empty ``POST /reshaper`` body: the real service
checks the policy first (403 for a caller without the right) and the schema second
(400: ``inventories`` needs at least one provider), so an allowed caller gets a 400 and
nothing is written.  Both answers are exercised here against the real service.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import sys
import uuid

import pytest

from ansible.module_utils.common import warnings as ansible_warnings

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.base import provider_tree_state
from ansible_collections.placement.upgrade.plugins.modules import placement_preflight

from module_runner import patch_module_args

from placement_server import PlacementServer


@pytest.fixture
def run(capsys):
    def run_module(args):
        ansible_warnings._global_warnings.clear()  # pylint: disable=protected-access
        ansible_warnings._global_deprecations.clear()  # pylint: disable=protected-access
        with patch_module_args(dict(args)):
            with pytest.raises(SystemExit) as info:
                placement_preflight.main()
        return info.value.code, json.loads(capsys.readouterr().out)
    return run_module


def _checks(result):
    return dict((c['check'], c['passed']) for c in result['checks'])


def _roots(backend, names):
    roots = []
    for name in names:
        root = backend.create_provider(name, uuid=str(uuid.uuid4()))
        backend.create_provider(name + '_pci_0000_84_00_0', uuid=str(uuid.uuid4()),
                                parent_provider_uuid=root['uuid'])
        roots.append(root)
    return roots


def test_embedded_passes_and_names_missing_and_child_providers(run, embedded_backend, tmp_path):
    roots = _roots(embedded_backend, ['cn-1', 'cn-2'])
    db = str(tmp_path / 'placement.db')
    rc, res = run({'embedded_db': db, 'providers': ['cn-1', roots[1]['uuid'].upper()]})
    assert rc == 0, res
    assert res['changed'] is False and res['backend'] == 'embedded' and res['microversion'] == '1.39'
    assert _checks(res) == {'reachable': True, 'microversion': True, 'reshape_permission': True,
                            'root_providers': True}
    assert res['providers']['cn-1']['uuid'] == roots[0]['uuid']
    rc, res = run({'embedded_db': db, 'providers': ['cn-1', 'cn-9', 'cn-2_pci_0000_84_00_0']})
    assert rc == 1 and res['failed'] is True
    assert res['missing'] == ['cn-9', 'cn-2_pci_0000_84_00_0']
    assert res['msg'].startswith('Pre-flight failed, no node was touched: root_providers: 2 of 3 not found')
    assert "no resource provider named or with uuid 'cn-9'" in res['msg']
    assert "'cn-2_pci_0000_84_00_0' is not a root provider (its root is 'cn-2')" in res['msg']
    rc, res = run({'embedded_db': db, 'min_microversion': '1.40'})
    assert rc == 1 and _checks(res)['microversion'] is False
    assert 'negotiated 1.39 (need at least 1.40)' in res['msg']
    rc, res = run({'embedded_db': db, 'min_microversion': 'one'})
    assert rc == 1 and res['msg'] == "min_microversion must look like 1.30, got 'one'"


def test_the_run_directories_are_checked_and_nothing_is_created(run, embedded_backend, tmp_path):
    _roots(embedded_backend, ['cn-1'])
    db = str(tmp_path / 'placement.db')
    existing = tmp_path / 'reports'
    existing.mkdir()
    missing = tmp_path / 'deep' / 'snapshots'
    rc, res = run({'embedded_db': db, 'providers': ['cn-1'], 'directories': [str(missing), str(existing)]})
    assert rc == 0, res
    assert _checks(res)['directories'] is True and res['changed'] is False
    assert not (tmp_path / 'deep').exists()  # the reshape creates it with its first snapshot
    # a file in the way, as the directory or above it: the pre-flight fails, naming it, and creates nothing
    (tmp_path / 'afile').write_text(u'x')
    rc, res = run({'embedded_db': db, 'providers': ['cn-1'],
                   'directories': [str(tmp_path / 'afile'), str(tmp_path / 'afile' / 'sub' / 'snapshots'), str(existing)]})
    assert rc == 1 and res['failed'] is True and _checks(res)['directories'] is False
    assert res['msg'].startswith('Pre-flight failed, no node was touched: directories: ')
    assert '%s exists and is not a directory' % (tmp_path / 'afile') in res['msg']
    below = tmp_path / 'afile' / 'sub' / 'snapshots'
    assert '%s cannot be created: %s is not a directory' % (below, tmp_path / 'afile') in res['msg']
    assert str(existing) not in res['msg']
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith('placement.db')) == ['afile', 'reports']


def test_commands_are_looked_up_not_run(run, embedded_backend, tmp_path):
    _roots(embedded_backend, ['cn-1'])
    db = str(tmp_path / 'placement.db')
    conf = tmp_path / 'nova.conf'
    conf.write_text(u'[DEFAULT]\n')
    marker = tmp_path / 'ran'
    commands = [
        {'command': 'sh -c "touch %s"' % marker},                      # found (and NOT run)
        {'command': 'no-such-tool-4711 upgrade check'},                 # not in PATH
        {'command': 'sh -c true', 'requires': str(tmp_path / 'absent.conf')},  # its file is missing
        {'command': 'sh -c true', 'requires': str(conf)},               # found, its file exists
        {'command': '%s -V' % sys.executable},                          # an executable path
        {'command': str(conf)},                                         # a path, not executable
        {'command': '   '},                                             # nothing to run
    ]
    rc, res = run({'embedded_db': db, 'providers': ['cn-1'], 'commands': commands})
    assert rc == 0, res
    assert res['commands_found'] == [True, False, False, True, True, False, False]
    assert not marker.exists()
    # the answer comes with a failed pre-flight too (the role does not read it then, a caller may)
    rc, res = run({'embedded_db': db, 'providers': ['cn-9'], 'commands': commands[:2]})
    assert rc == 1 and res['commands_found'] == [True, False]
    rc, res = run({'embedded_db': db, 'commands': [{'requires': str(conf)}]})
    assert rc == 1 and 'command' in res['msg'] and 'commands' in res['msg']


def test_unreachable_placement_fails_before_anything(run):
    rc, res = run({'auth_type': 'admin_token', 'auth': {'token': 'admin', 'endpoint': 'http://127.0.0.1:9'},
                   'api_timeout': 5, 'providers': ['cn-1']})
    assert rc == 1 and res['failed'] is True
    assert _checks(res) == {'reachable': False}
    assert res['msg'].startswith('Pre-flight failed, no node was touched: reachable: ')


@pytest.mark.real
def test_real_placement_allowed_caller(run, placement_server, rest_backend, unique_name):
    names = [unique_name('pf'), unique_name('pf')]
    roots = _roots(rest_backend, names)
    before = [provider_tree_state(rest_backend, r['uuid']) for r in roots]
    args = dict(placement_server.module_auth(), providers=names)
    rc, res = run(args)
    assert rc == 0, res
    assert res['backend'] == 'rest' and res['microversion'] == '1.39'
    assert _checks(res) == {'reachable': True, 'microversion': True, 'reshape_permission': True,
                            'root_providers': True}
    assert 'refused by the schema' in [c for c in res['checks'] if c['check'] == 'reshape_permission'][0]['detail']
    # the probe wrote nothing: same trees, same generations
    assert [provider_tree_state(rest_backend, r['uuid']) for r in roots] == before


@pytest.mark.real
def test_real_placement_without_the_reshape_right(run, placement_server, unique_name, tmp_path):
    # the stock policy: placement:reshaper:reshape is role:service only, the admin token has admin only
    stock = PlacementServer(reshape_policy=None)
    stock.start()
    try:
        from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.rest import RestBackend
        with RestBackend(stock.adapter()) as backend:
            backend.create_provider('cn-stock', uuid=str(uuid.uuid4()))
        rc, res = run(dict(stock.module_auth(), providers=['cn-stock']))
    finally:
        stock.stop()
    assert rc == 1 and res['failed'] is True
    assert _checks(res) == {'reachable': True, 'microversion': True, 'reshape_permission': False,
                            'root_providers': True}
    assert 'the credentials need the `service` role' in res['msg']
    # a user with no role at all may not even list providers: both checks fail, each said
    rc, res = run(dict(placement_server.module_auth(token='operator:proj'), providers=['cn-x']))
    assert rc == 1
    assert _checks(res) == {'reachable': True, 'microversion': True, 'reshape_permission': False,
                            'root_providers': False}
    assert 'cannot list the resource providers: 403' in res['msg']
