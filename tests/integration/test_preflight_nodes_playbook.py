# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pre-flight's checks of each node, through playbooks/rolling_reshape.yml on a simulated fleet. Since
issue 45 they ride on the node's one module run (device_info) and are judged before that node's
reshape; a node that fails them fails as any failed node does (the plan lists them all):

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
import re
import subprocess

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.rest import RestBackend

import simfleet
from keystone_server import shared_stack
from test_fleet_playbook import BIN, PLAYBOOKS, _env, statuses, summary, trees
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


@pytest.mark.real
def test_nova_credentials_of_each_node_are_probed_before_its_reshape(tmp_path, unique_name):
    """Issue 45: read in each node's discovery (no second module run on the node), probed from the
    controller before the node's reshape, nodes with the same options probed once per run; the plan
    (check mode) is the gate for the whole fleet before anything moves."""
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
    refused = ("%s: nova_credentials: %s: nova-compute may not reshape with its own credentials (user operator, project "
               "service, Placement at %s, from [placement] of %s; the token's roles: admin, manager, member, reader, no "
               "`service` role): 403 Forbidden" % (skipped['name'], skipped['name'], stack.placement.url,
                                                   skipped['nova_conf']))
    unreachable = ("%s: nova_credentials: %s: nova-compute cannot reach Placement with its own credentials ([placement] "
                   "of %s): 401 Unauthorized (placement_upgrade.identity): The identity service (Keystone) at %s "
                   "rejected the credentials" % (plain['name'], plain['name'], plain['nova_conf'], stack.auth_url))

    # the plan: every node visited (those the roll skips too), both named, nothing changed
    rc, out = playbook(fleet, 'rolling_reshape.yml', check=True, extra={'rolling_reshape_serial': 5}, verbosity=4)
    assert rc != 0, out
    said = ' '.join(out.split())
    assert 'The plan says 2 node(s) would stop a real roll' in said, out
    assert refused in said and unreachable in said
    for secret in secrets:
        assert secret not in out
    with RestBackend.from_options(auth) as backend:
        assert trees(fleet, backend) == before

    # the roll, one node a batch: the nodes before the refused one are reshaped, the refused one fails
    # before its reshape and the roll stops there; no password in any result (JSON, -v)
    rc, out = playbook(fleet, 'rolling_reshape.yml', verbosity=1, env={'ANSIBLE_CALLBACK_RESULT_FORMAT': 'json'})
    assert rc != 0, out
    for secret in secrets:
        assert secret not in out
    names = [n['name'] for n in fleet['nodes']]
    assert names.index(skipped['name']) < names.index(plain['name'])
    first = names.index(skipped['name'])
    assert statuses(fleet) == dict(
        [(n, fleet['expected'][n]) for n in names[:first]] + [(skipped['name'], 'failed')]
        + [(n, 'unreached') for n in names[first + 1:]])
    assert ('The roll stops at %s' % refused) in ' '.join(out.split()), out

    # nova's credentials fixed on both: the plan passes, probing once for the five nodes
    _set_nova_conf(skipped, nova_conf_text(stack, 'placement'))
    _set_nova_conf(plain, nova_conf_text(stack, 'placement'))
    rc, out = playbook(fleet, 'rolling_reshape.yml', check=True, extra={'rolling_reshape_serial': 5}, verbosity=1,
                       env={'ANSIBLE_CALLBACK_RESULT_FORMAT': 'json'})
    assert rc == 0, out
    for secret in secrets:
        assert secret not in out
    assert out.count('"probed_for": null') == 1, out
    probed = re.findall(r'"probed_for": "([^"]+)"', out)
    assert len(probed) == 4 and len(set(probed)) == 1 and probed[0] in [n['name'] for n in fleet['nodes']], out


def _fake_mdevctl(directory):
    os.makedirs(str(directory))
    path = os.path.join(str(directory), 'mdevctl')
    with open(path, 'w') as handle:
        handle.write('#!/bin/sh\necho "stand-in mdevctl: $*"\n')
    os.chmod(path, 0o755)
    return str(directory)


def test_mdevs_held_by_guests_must_be_defined_persistently(tmp_path):
    """Checked in each node's discovery (issue 45), before its reshape: a warning in the play output and
    in the node's record, or, with preflight_fail_on_transient_mdevs, the node's failure (its tree
    untouched, the roll stopped there, as any failed node stops it)."""
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
    problem = ('%s: 1 mdev(s) held by guests are not defined persistently (no %s/<parent>/<uuid>, what '
               '`mdevctl list --defined` lists): %s on parent %s, held by %s (%s). A reboot of the host loses them, '
               'and nova 34 starts only defined mdevs, so their guests cannot start again. Define them on %s: mdevctl '
               'define --auto --uuid %s --parent %s --type %s'
               % (node['name'], node['mdevctl_dir'], uuid, mdev['gpu'], mdev['holder'], guest, node['name'], uuid,
                  mdev['gpu'], mdev['type']))
    assert '[WARNING]: ' + problem in out, out
    assert out.count('[WARNING]: %s: 1 mdev(s) held by guests are not defined persistently' % node['name']) == 1
    assert 'mdevctl is not installed' not in out
    # the node's record carries it: the report shows it in the node's section
    record = [n for n in summary(fleet)['nodes'] if n['node'] == node['name']][0]
    assert 'device_info: ' + problem in record['warnings']
    assert [n['warnings'] for n in summary(fleet)['nodes'] if n['node'] != node['name'] and
            any('persistently' in w for w in n['warnings'])] == []
    # without mdevctl (not on PATH, nor in this machine's sbin directories), and the problems made failures:
    # the first node fails before its reshape, and the roll stops there
    for sbin in ('/usr/local/sbin', '/usr/sbin', '/sbin'):
        assert not os.path.exists(os.path.join(sbin, 'mdevctl')), 'this test needs a machine without mdevctl'
    rc, out = playbook(fleet, 'rolling_reshape.yml', extra={'preflight_mdevctl': 'mdevctl',
                                                            'preflight_fail_on_transient_mdevs': True})
    assert rc != 0, out
    said = ' '.join(out.split())
    assert ('The roll stops at %s: mdev_persistence: %s: mdevctl is not installed (not found in PATH, /usr/local/sbin, '
            '/usr/sbin, /sbin)' % (node['name'], node['name'])) in said, out
    assert '%s on parent %s, held by %s (%s)' % (uuid, mdev['gpu'], mdev['holder'], guest) in said
    assert '(fail_on_transient_mdevs is true; nothing was changed)' in said
    assert statuses(fleet) == {node['name']: 'failed', fleet['nodes'][1]['name']: 'unreached',
                               fleet['nodes'][2]['name']: 'unreached'}
    assert trees(fleet) == before
    # the plan lists every node that would stop a real roll (here every node: no mdevctl anywhere)
    rc, out = playbook(fleet, 'rolling_reshape.yml', check=True, extra={'preflight_mdevctl': 'mdevctl',
                                                                        'preflight_fail_on_transient_mdevs': True})
    assert rc != 0, out
    assert 'The plan says 3 node(s) would stop a real roll' in ' '.join(out.split()), out
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
