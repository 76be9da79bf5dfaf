# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""mdev persistence (mdevctl) on fake hosts (tools/fakehost.py), and nova's [placement] read from nova.conf."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import stat

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends import factory
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import discovery
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import mdev_persistence as mp
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import novaconf

import fakehost

GPU = '0000:84:00.0'


def _host(tmp_path):
    spec = {'hostname': 'cn-1',
            'gpus': [{'address': GPU, 'mdevs': [{'type': 'nvidia-222', 'holder': 'instance-1'},
                                                {'type': 'nvidia-222', 'holder': 'instance-2'},
                                                {'type': 'nvidia-222', 'holder': None}]}],
            'instances': [{'name': 'instance-1'}, {'name': 'instance-2'},
                          {'name': 'instance-3', 'extra_mdevs': ['0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0']}]}
    host = fakehost.build_host(str(tmp_path / 'h'), spec)
    report = discovery.discover(host['sysfs_root'], domain_xml_glob=host['domain_xml_glob'], numa=False,
                                hostname='cn-1')
    held = dict((m['holder'], u) for u, m in host['mdevs'].items() if m['holder'])
    return host, report, held


def _define(store, parent, uuid, mdev_type='nvidia-222', start='auto'):
    path = store / parent
    path.mkdir(parents=True, exist_ok=True)
    (path / uuid).write_text(json.dumps({'mdev_type': mdev_type, 'start': start, 'attrs': []}))


def _mdevctl(directory):
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / 'mdevctl'
    path.write_text(u'#!/bin/sh\nexit 0\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_held_mdevs_not_defined_are_named_with_parent_guest_and_fix(tmp_path):
    host, report, held = _host(tmp_path)
    store = tmp_path / 'mdevctl.d'
    _define(store, GPU, held['instance-1'])
    bindir = tmp_path / 'bin'
    _mdevctl(bindir)
    result = mp.check(report, str(store), 'mdevctl', path=str(bindir))
    assert result['mdev_node'] is True and result['mdevctl'] == str(bindir / 'mdevctl')
    assert result['held'] == 3  # two existing mdevs and the dangling one of instance-3
    lost = dict((m['uuid'], m) for m in result['not_persistent'])
    assert sorted(lost) == sorted([held['instance-2'], '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0'])
    assert lost[held['instance-2']]['parent'] == GPU and lost[held['instance-2']]['active'] is True
    assert lost['0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0']['active'] is False
    texts = mp.problems('cn-1', result)
    assert len(texts) == 1, texts
    text = texts[0]
    assert text.startswith('cn-1: 2 mdev(s) held by guests are not defined persistently (no %s/<parent>/<uuid>' % store)
    assert '%s on parent %s, held by instance-2 (%s)' % (held['instance-2'], GPU, host['instances']['instance-2']) in text
    assert '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0 not active, parent unknown' in text
    assert 'nova 34 starts only defined mdevs' in text
    assert 'Define them on cn-1: mdevctl define --auto --uuid %s --parent %s --type nvidia-222' % (held['instance-2'], GPU) in text
    # the unheld mdev is not named: nova makes a new (persistent) one when it needs it
    unheld = [u for u, m in host['mdevs'].items() if not m['holder']][0]
    assert unheld not in text


def test_defined_everywhere_is_fine_and_a_definition_on_another_parent_is_not(tmp_path):
    _host_, report, held = _host(tmp_path)
    store = tmp_path / 'mdevctl.d'
    _define(store, GPU, held['instance-1'])
    _define(store, '0000:85:00.0', held['instance-2'])
    _define(store, GPU, '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0', start='manual')
    bindir = tmp_path / 'bin'
    _mdevctl(bindir)
    result = mp.check(report, str(store), 'mdevctl', path=str(bindir))
    assert [(m['uuid'], m['defined_on']) for m in result['not_persistent']] == [(held['instance-2'], ['0000:85:00.0'])]
    assert ', defined on 0000:85:00.0 only' in mp.problems('cn-1', result)[0]
    _define(store, GPU, held['instance-2'])
    result = mp.check(report, str(store), 'mdevctl', path=str(bindir))
    assert result['not_persistent'] == [] and mp.problems('cn-1', result) == []


def test_without_mdevctl_and_with_a_broken_definition(tmp_path):
    _host_, report, held = _host(tmp_path)
    store = tmp_path / 'mdevctl.d'
    for uuid in list(held.values()) + ['0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0']:
        _define(store, GPU, uuid)
    (store / GPU / 'junk').write_text(u'{not json')
    empty = tmp_path / 'empty'
    empty.mkdir()
    # (the sbin directories searched besides PATH: none here, whatever this machine has)
    result = mp.check(report, str(store), 'mdevctl', path=str(empty), sbin=())
    texts = mp.problems('cn-1', result)
    assert result['mdevctl'] is None
    assert texts[0].startswith('cn-1: mdevctl is not installed (not found in PATH, /usr/local/sbin, /usr/sbin, /sbin)')
    assert texts[1].startswith('cn-1: an mdevctl definition cannot be read: %s: not JSON' % (store / GPU / 'junk'))
    assert len(texts) == 2
    # a path given for mdevctl is used as it is
    tool = _mdevctl(tmp_path / 'opt')
    assert mp.check(report, str(store), str(tool), path=str(empty), sbin=())['mdevctl'] == str(tool)
    assert mp.check(report, str(store), str(tmp_path / 'opt' / 'none'), path=str(empty))['mdevctl'] is None
    # an sbin directory is searched after PATH (mdevctl installs in /usr/sbin, which a non-login PATH lacks)
    assert mp.check(report, str(store), 'mdevctl', path=str(empty), sbin=(str(tmp_path / 'opt'),))['mdevctl'] == str(tool)


def test_a_node_without_mdevs_is_not_an_mdev_node(tmp_path):
    host = fakehost.build_host(str(tmp_path / 'h'), {'hostname': 'cn-2', 'instances': [{'name': 'vm'}]})
    report = discovery.discover(host['sysfs_root'], domain_xml_glob=host['domain_xml_glob'], numa=False)
    result = mp.check(report, str(tmp_path / 'none'), 'mdevctl', path='')
    assert result['mdev_node'] is False and result['mdevctl'] is None
    assert mp.problems('cn-2', result) == []


def test_placement_section_keeps_secrets_apart(tmp_path):
    conf = tmp_path / 'nova.conf'
    conf.write_text(u'[DEFAULT]\ndebug = true\n[placement]\nauth_type = password\nauth-url = http://ks:5000/v3\n'
                    u'username = nova\npassword = s3cr3t-one\nregion_name = RegionOne\n'
                    u'valid_interfaces = internal\n[database]\nconnection = mysql://nova:dbpw@db/nova\n')
    (tmp_path / 'nova.conf.d').mkdir()
    (tmp_path / 'nova.conf.d' / '50-pw.conf').write_text(u'[placement]\npassword = s3cr3t-two\n')
    found = novaconf.placement_section(str(conf), is_secret=factory.is_secret_name)
    assert found['files'] == [str(conf), str(tmp_path / 'nova.conf.d' / '50-pw.conf')]
    assert found['secrets'] == {'password': 's3cr3t-two'}  # the later file wins
    assert found['options'] == {'auth_type': 'password', 'auth_url': 'http://ks:5000/v3', 'username': 'nova',
                                'region_name': 'RegionOne', 'valid_interfaces': 'internal'}
    assert found['auth'] == found['options'] and found['auth_section'] is None
    # nothing of another section (the database password) is read
    assert 'dbpw' not in json.dumps(found)
    # auth_section: the auth options (and the secret) come from that section
    conf.write_text(u'[placement]\nauth_section = nova_auth\nregion_name = R2\npassword = ignored\n'
                    u'[nova_auth]\nauth_type = v3applicationcredential\nauth_url = http://ks/v3\n'
                    u'application_credential_id = abc\napplication_credential_secret = s3cr3t-three\n')
    os.unlink(str(tmp_path / 'nova.conf.d' / '50-pw.conf'))
    found = novaconf.placement_section(str(conf), is_secret=factory.is_secret_name)
    assert found['auth_section'] == 'nova_auth'
    assert found['secrets'] == {'application_credential_secret': 's3cr3t-three'}
    assert found['auth'] == {'auth_type': 'v3applicationcredential', 'auth_url': 'http://ks/v3',
                             'application_credential_id': 'abc'}
    assert found['options'] == {'auth_section': 'nova_auth', 'region_name': 'R2'}
    assert novaconf.placement_section(str(tmp_path / 'absent.conf')) is None


def test_a_node_whose_devices_cannot_be_read_is_said(tmp_path, capsys):
    """node_preflight never fails on what it finds: a discovery error is the node's problem, said by the check."""
    from ansible_collections.placement.upgrade.plugins.modules import node_preflight, placement_preflight
    from module_runner import run_module_main

    rc, read = run_module_main(node_preflight.main, {'sysfs_root': str(tmp_path / 'nosys'), 'nova_conf': '',
                                                     'hostname': 'cn-3'}, capsys)
    assert rc == 0, read
    assert read['mdevs']['error'] == 'sysfs root %s does not exist or is not a directory' % (tmp_path / 'nosys')
    assert read['nova_placement'] == {'missing': 'no nova.conf to read (nova_conf is empty)'}
    db = str(tmp_path / 'placement.db')
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend
    EmbeddedBackend(db).close()
    node = {'node': 'cn-3', 'nova_placement': None, 'mdevs': read['mdevs']}
    rc, result = run_module_main(placement_preflight.main, {'embedded_db': db, 'nodes': [node],
                                                            'fail_on_transient_mdevs': True}, capsys)
    assert rc == 1
    assert result['msg'] == ('Pre-flight failed, no node was touched: mdev_persistence: cn-3: its mdevs could not be '
                             'checked: sysfs root %s does not exist or is not a directory' % (tmp_path / 'nosys'))
