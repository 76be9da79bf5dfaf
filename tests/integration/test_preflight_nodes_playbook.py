# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pre-flight's checks on every node, through playbooks/rolling_reshape.yml on a simulated fleet:

* nova-compute's OWN [placement] credentials, read from each node's nova.conf and probed against
  a real Keystone and the real Placement behind it (tests/keystone_server.py: ``placement`` has
  admin and service, ``operator`` admin only), the nodes the roll skips or defers included, with
  nova's password nowhere in the output (the default callback at -vvv, the json callback);
* the persistence of the mdevs the guests hold (mdevctl), with a stand-in mdevctl on PATH and without.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.rest import RestBackend

import simfleet
from keystone_server import shared_stack
from test_fleet_playbook import BIN, PLAYBOOKS, _env, trees
from test_preflight_nova_credentials import nova_conf_text

pytestmark = pytest.mark.slow


def playbook(fleet, name, extra=None, check=False, verbosity=0, env=None):
    """ansible-playbook NAME on the fleet (as test_fleet_playbook runs it, one fork), with ``env`` added."""
    out = fleet['out_dir']
    args = [os.path.join(BIN, 'ansible-playbook'), '-i', fleet['inventory'], os.path.join(PLAYBOOKS, name)]
    extra = dict({'rolling_reshape_snapshot_dir': os.path.join(out, 'snapshots'),
                  'rolling_reshape_report_dir': os.path.join(out, 'reports')}, **(extra or {}))
    args += ['-e', json.dumps(extra)]
    if check:
        args.append('--check')
    if verbosity:
        args.append('-' + 'v' * verbosity)
    run_env = _env(out)
    run_env['ANSIBLE_FORKS'] = '1'
    run_env.update(env or {})
    proc = subprocess.run(args, env=run_env, cwd=out, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, timeout=900)
    return proc.returncode, proc.stdout


def _set_nova_conf(node, text):
    """Replace the simulated node's [placement] (its nova.conf keeps its other sections)."""
    with open(node['nova_conf']) as handle:
        kept = handle.read().split('\n[placement]\n')[0]
    body = text.split('[placement]\n', 1)[1]
    with open(node['nova_conf'], 'w') as handle:
        handle.write(kept.rstrip('\n') + '\n\n[placement]\n' + body)


def _failed_result(text):
    """The JSON result of the task that failed (default callback, result format json)."""
    start = text.index('FAILED! => ') + len('FAILED! => ')
    return json.JSONDecoder().raw_decode(text[start:])[0]


@pytest.mark.real
def test_nova_credentials_of_every_node_are_probed_before_anything_moves(tmp_path, unique_name):
    stack = shared_stack()
    auth = stack.password_auth('placement')
    prefix = unique_name('nc') + '-'
    with RestBackend.from_options(auth) as backend:
        fleet = simfleet.build(str(tmp_path / 'f'), nodes=5, prefix=prefix, backend=backend,
                               inventory_vars={'placement_backend': auth})
        before = trees(fleet, backend)
    by_kind = dict((n['kind'], n) for n in fleet['nodes'])
    wrong = 'wrong-pw-%s' % unique_name('x')
    for node in fleet['nodes']:
        _set_nova_conf(node, nova_conf_text(stack, 'placement'))
    # the node the roll skips (already reshaped) has nova's credentials without the service role,
    # the one it skips as plain (nothing to reshape) a wrong password
    skipped, plain = by_kind['reshaped'], by_kind['plain']
    _set_nova_conf(skipped, nova_conf_text(stack, 'operator'))
    _set_nova_conf(plain, nova_conf_text(stack, 'placement', password=wrong))
    secrets = (stack.passwords['placement'], stack.passwords['operator'], wrong)

    rc, out = playbook(fleet, 'rolling_reshape.yml', extra={'rolling_reshape_serial': 5}, verbosity=4)
    assert rc != 0, out
    assert 'Pre-flight failed, no node was touched: nova_credentials: ' in out
    assert ("%s: nova-compute may not reshape with its own credentials (user operator, project service, Placement "
            "at %s, from [placement] of %s; the token's roles: admin, manager, member, reader, no `service` role): "
            "403 Forbidden" % (skipped['name'], stack.placement.url, skipped['nova_conf'])) in out
    assert ("%s: nova-compute cannot reach Placement with its own credentials ([placement] of %s): 401 Unauthorized "
            "(placement_upgrade.identity): The identity service (Keystone) at %s rejected the credentials"
            % (plain['name'], plain['nova_conf'], stack.auth_url)) in out
    assert 'PLAY [Roll through the compute nodes]' not in out
    for secret in secrets:
        assert secret not in out
    with RestBackend.from_options(auth) as backend:
        assert trees(fleet, backend) == before
    assert not os.path.exists(os.path.join(fleet['out_dir'], 'reports', 'latest'))

    # every result of the play, in JSON (-v): no password in any; the check's result names each node
    rc, out = playbook(fleet, 'rolling_reshape.yml', verbosity=1, env={'ANSIBLE_CALLBACK_RESULT_FORMAT': 'json'})
    assert rc != 0
    for secret in secrets:
        assert secret not in out
    # every node was read, the skipped ones too, and what was read is hidden (nova's secret was in it)
    read = out.split("TASK [placement.upgrade.preflight : Read nova-compute's own Placement credentials")[1].split('TASK [')[0]
    for node in fleet['nodes']:
        assert 'ok: [%s] => {"censored": ' % node['name'] in read, read
    check = _failed_result(out)
    assert check['nova_credentials'][skipped['name']]['passed'] is False
    assert check['nova_credentials'][plain['name']]['passed'] is False
    assert check['nova_credentials'][by_kind['gpu']['name']]['passed'] is True

    # nova's credentials fixed on both: the pre-flight passes, probing once for the five nodes
    _set_nova_conf(skipped, nova_conf_text(stack, 'placement'))
    _set_nova_conf(plain, nova_conf_text(stack, 'placement'))
    rc, out = playbook(fleet, 'rolling_reshape.yml', check=True, extra={'rolling_reshape_serial': 5})
    assert rc == 0, out
    assert 'nova-compute may reshape with its own [placement] credentials on 5 node(s) (1 probe(s))' in out
    for secret in secrets:
        assert secret not in out


def _fake_mdevctl(directory):
    os.makedirs(str(directory))
    path = os.path.join(str(directory), 'mdevctl')
    with open(path, 'w') as handle:
        handle.write('#!/bin/sh\necho "stand-in mdevctl: $*"\n')
    os.chmod(path, 0o755)
    return str(directory)


def test_mdevs_held_by_guests_must_be_defined_persistently(tmp_path):
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=3)
    node = fleet['nodes'][0]
    held = sorted((uuid, m) for uuid, m in _mdevs(node).items() if m['holder'])
    uuid, mdev = held[0]
    os.unlink(os.path.join(node['mdevctl_dir'], mdev['gpu'], uuid))
    guest = node['instances'][mdev['holder']]
    before = trees(fleet)
    # mdevctl looked up by name, as on a real node: a stand-in on PATH
    path = _fake_mdevctl(tmp_path / 'bin') + os.pathsep + os.environ['PATH']
    rc, out = playbook(fleet, 'rolling_reshape.yml', check=True, extra={'preflight_mdevctl': 'mdevctl'},
                       env={'PATH': path})
    assert rc == 0, out
    warning = ('[WARNING]: %s: 1 mdev(s) held by guests are not defined persistently (no %s/<parent>/<uuid>, what '
               '`mdevctl list --defined` lists): %s on parent %s, held by %s (%s). A reboot of the host loses them, '
               'and nova 34 starts only defined mdevs, so their guests cannot start again. Define them on %s: mdevctl '
               'define --auto --uuid %s --parent %s --type %s'
               % (node['name'], node['mdevctl_dir'], uuid, mdev['gpu'], mdev['holder'], guest, node['name'], uuid,
                  mdev['gpu'], mdev['type']))
    assert warning in out, out
    assert out.count('not defined persistently') == 1
    assert 'mdevctl is not installed' not in out
    assert ('1 of 3 mdev node(s) have mdevs that a reboot of the host would lose, or no mdevctl (warned: '
            'fail_on_transient_mdevs is false)') in out
    # without mdevctl (not on PATH, nor in this machine's sbin directories), and the problems made failures
    for sbin in ('/usr/local/sbin', '/usr/sbin', '/sbin'):
        assert not os.path.exists(os.path.join(sbin, 'mdevctl')), 'this test needs a machine without mdevctl'
    rc, out = playbook(fleet, 'rolling_reshape.yml', extra={'preflight_mdevctl': 'mdevctl',
                                                            'preflight_fail_on_transient_mdevs': True})
    assert rc != 0, out
    assert 'Pre-flight failed, no node was touched: mdev_persistence: ' in out
    for other in fleet['nodes']:
        assert ('%s: mdevctl is not installed (not found in PATH, /usr/local/sbin, /usr/sbin, /sbin)'
                % other['name']) in out
    assert '%s on parent %s, held by %s (%s)' % (uuid, mdev['gpu'], mdev['holder'], guest) in out
    assert 'PLAY [Roll through the compute nodes]' not in out
    assert trees(fleet) == before


def _mdevs(node):
    """{uuid: {gpu, type, holder}} of a simulated node, from its definitions and its sysfs."""
    found = {}
    for gpu in sorted(os.listdir(node['mdevctl_dir'])):
        for uuid in sorted(os.listdir(os.path.join(node['mdevctl_dir'], gpu))):
            with open(os.path.join(node['mdevctl_dir'], gpu, uuid)) as handle:
                found[uuid] = {'gpu': gpu, 'type': json.load(handle)['mdev_type'], 'holder': None}
    for name in node['instances']:
        with open(os.path.join(os.path.dirname(node['domain_xml_glob']), '%s.xml' % name)) as handle:
            xml = handle.read()
        for uuid in found:
            if uuid in xml:
                found[uuid]['holder'] = name
    return found
