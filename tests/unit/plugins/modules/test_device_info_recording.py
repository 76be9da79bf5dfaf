# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""device_info's record_to / replay_from: a node's discovery recorded, then replayed without the node."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import stat

import pytest
import yaml

import fakehost
from module_runner import run_module_main
from ansible_collections.placement.upgrade.plugins.modules import device_info


@pytest.fixture
def host(tmp_path):
    return fakehost.build_host(str(tmp_path / 'node'), fakehost.default_gpu_host('compute-01', spare_mdevs=1))


def _probe(host, **extra):
    args = {'sysfs_root': host['sysfs_root'], 'domain_xml_glob': host['domain_xml_glob'], 'hostname': 'compute-01'}
    args.update(extra)
    return args


def test_record_then_replay_gives_the_same_result(capsys, host, tmp_path):
    path = str(tmp_path / 'compute-01.json')
    rc, probed = run_module_main(device_info.main, _probe(host, record_to=path), capsys)
    assert rc == 0 and probed['changed'] is False
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    with open(path) as handle:
        assert json.load(handle) == {'devices': probed['devices'], 'ownership': probed['ownership']}
    # the node is gone: the replay never reads sysfs
    os.rename(host['sysfs_root'], host['sysfs_root'] + '.gone')
    rc, replayed = run_module_main(device_info.main, {'replay_from': path, 'hostname': 'compute-01'}, capsys)
    assert rc == 0 and replayed['changed'] is False
    assert replayed['devices'] == probed['devices'] and replayed['ownership'] == probed['ownership']


def test_check_mode_records_too(capsys, host, tmp_path):
    path = str(tmp_path / 'rec.json')
    rc, probed = run_module_main(device_info.main, _probe(host, record_to=path), capsys, check=True)
    assert rc == 0 and os.path.isfile(path) and probed['changed'] is False


def test_a_saved_registered_result_or_a_bare_report_replays(capsys, host, tmp_path):
    rc, probed = run_module_main(device_info.main, _probe(host), capsys)
    assert rc == 0
    registered = tmp_path / 'registered.yml'
    registered.write_text(yaml.safe_dump(dict(probed, failed=False)))
    bare = tmp_path / 'bare.json'
    bare.write_text(json.dumps(probed['devices']))
    for path in (registered, bare):
        rc, replayed = run_module_main(device_info.main, {'replay_from': str(path)}, capsys)
        assert rc == 0 and replayed['ownership'] == probed['ownership'], path


def test_a_recording_of_another_node_or_no_recording_fails(capsys, host, tmp_path):
    path = str(tmp_path / 'compute-01.json')
    run_module_main(device_info.main, _probe(host, record_to=path), capsys)
    rc, out = run_module_main(device_info.main, {'replay_from': path, 'hostname': 'compute-02'}, capsys)
    assert rc == 1 and out['msg'] == 'replay_from: %s is the recording of compute-01, not of compute-02' % path
    rc, out = run_module_main(device_info.main, {'replay_from': str(tmp_path / 'none.json')}, capsys)
    assert rc == 1 and out['msg'].startswith('replay_from: cannot read %s' % (tmp_path / 'none.json'))
    junk = tmp_path / 'junk.json'
    junk.write_text(u'{"gpus": []}')
    rc, out = run_module_main(device_info.main, {'replay_from': str(junk)}, capsys)
    assert rc == 1 and 'holds no device report' in out['msg']
    rc, out = run_module_main(device_info.main, {'replay_from': path, 'record_to': path}, capsys)
    assert rc == 1 and out['msg'] == 'replay_from cannot be used with record_to'
    rc, out = run_module_main(device_info.main, _probe(host, record_to=str(tmp_path / 'no' / 'dir.json')), capsys)
    assert rc == 1 and out['msg'] == 'record_to: the directory %s does not exist' % (tmp_path / 'no')
