# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The device_info module: argument handling, result shape, failures as fail_json."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml

from ansible.module_utils import basic

import fakehost
from module_runner import run_module_main
from ansible_collections.placement.upgrade.plugins.doc_fragments import attributes
from ansible_collections.placement.upgrade.plugins.modules import device_info


def _run(capsys, args, monkeypatch=None, run_command=None):
    if run_command is not None:
        monkeypatch.setattr(basic.AnsibleModule, 'run_command', run_command)
        monkeypatch.setattr(basic.AnsibleModule, 'get_bin_path',
                            lambda self, name, required=False, opt_dirs=None: '/usr/bin/' + name)
    return run_module_main(device_info.main, args, capsys)


@pytest.fixture
def host(tmp_path):
    return fakehost.build_host(str(tmp_path), fakehost.default_gpu_host('compute-01', spare_mdevs=1))


def _args(host, **extra):
    args = {'sysfs_root': host['sysfs_root'], 'domain_xml_glob': host['domain_xml_glob'],
            'hostname': 'compute-01'}
    args.update(extra)
    return args


def test_report_and_ownership(capsys, host):
    rc, out = _run(capsys, _args(host))
    assert rc == 0
    assert out['changed'] is False
    assert [g['address'] for g in out['devices']['gpus']] == ['0000:84:00.0', '0000:85:00.0']
    assert out['devices']['hostname'] == 'compute-01'
    i2 = host['instances']['instance-00000002']
    assert out['ownership'][i2] == {'0000:84:00.0': 1, '0000:85:00.0': 1}
    assert len(out['ownership']) == 3
    warnings = out['devices']['warnings']
    assert len(warnings) == 2 and 'not held by any instance' in warnings[1]
    assert warnings[0].startswith('no nova.conf at /etc/nova/nova.conf')
    assert out['devices']['nova_conf'] is None


def test_nova_conf_is_read_and_recorded(capsys, host):
    rc, out = _run(capsys, _args(host, nova_conf=host['nova_conf']))
    assert rc == 0
    nova = out['devices']['nova_conf']
    assert nova['files'] == [host['nova_conf']]
    assert nova['devices']['enabled_mdev_types'] == ['nvidia-222']
    assert nova['set'] == ['[devices]enabled_mdev_types']
    assert nova['pci']['report_in_placement'] is False
    assert len(out['devices']['warnings']) == 1


def test_bad_nova_conf_names_file_and_option(capsys, host, tmp_path):
    bad = tmp_path / 'nova.conf'
    bad.write_text('[pci]\nreport_in_placement = maybe\n')
    rc, out = _run(capsys, _args(host, nova_conf=str(bad)))
    assert rc == 1 and out['failed'] is True
    assert str(bad) in out['msg'] and '[pci]report_in_placement' in out['msg']
    assert 'exception' not in out
    assert 'exception' not in out


def test_check_mode_gives_the_same_report(capsys, host):
    _rc, normal = _run(capsys, _args(host))
    rc, checked = _run(capsys, _args(host, _ansible_check_mode=True))
    assert rc == 0 and checked['changed'] is False
    assert checked['devices'] == normal['devices'] and checked['ownership'] == normal['ownership']


def test_pci_filters_and_numa_off(capsys, tmp_path):
    host = fakehost.build_host(str(tmp_path), fakehost.default_sriov_host('compute-02'))
    rc, out = _run(capsys, _args(host, numa=False, pci_filters=[{'vendor_id': '10de', 'product_id': '25b6'}]))
    assert rc == 0
    assert out['devices']['numa_cells'] == []
    assert [d['address'] for d in out['devices']['pci_devices']] == ['0000:3b:00.0']
    assert out['ownership'][host['instances']['instance-00000013']] == {'0000:3b:00.0': 1}


def test_malformed_file_fails_with_msg_naming_it(capsys, host):
    path = os.path.join(host['sysfs_root'], 'class', 'mdev_bus', '0000:84:00.0', 'mdev_supported_types',
                        'nvidia-222', 'available_instances')
    with open(path, 'w') as handle:
        handle.write('six\n')
    rc, out = _run(capsys, _args(host))
    assert rc == 1
    assert out['failed'] is True
    assert path in out['msg']
    assert out['path'] == path
    assert 'exception' not in out and 'Traceback' not in out['msg']


def test_missing_sysfs_root_fails(capsys, tmp_path):
    missing = str(tmp_path / 'nowhere')
    rc, out = _run(capsys, {'sysfs_root': missing, 'domain_xml_glob': ''})
    assert rc == 1 and missing in out['msg'] and 'exception' not in out


def test_bad_filter_fails_cleanly(capsys, host):
    rc, out = _run(capsys, _args(host, pci_filters=[{'vendor_id': 'nvidia'}]))
    assert rc == 1 and 'pci_filters[0].vendor_id' in out['msg']


def test_filter_without_vendor_is_rejected_by_the_argument_spec(capsys, host):
    rc, out = _run(capsys, _args(host, pci_filters=[{'product_id': '20b5'}]))
    assert rc == 1 and 'vendor_id' in out['msg']


def test_use_virsh_live_xml_wins(capsys, monkeypatch, host):
    i1 = host['instances']['instance-00000001']
    calls = []

    def run_command(self, args, **kwargs):
        calls.append(list(args))
        if args[1:] == ['list', '--uuid']:
            return 0, '%s\n\n' % i1, ''
        if args[1:] == ['dumpxml', i1]:
            return 0, fakehost.domain_xml('instance-00000001', i1, mdevs=[]), ''
        if args[1:] == ['domcapabilities']:
            return 0, fakehost.domain_capabilities_xml({'max_guests': 15, 'max_es_guests': 0}), ''
        return 1, '', 'unexpected call'

    rc, out = _run(capsys, _args(host, use_virsh=True), monkeypatch, run_command)
    assert rc == 0
    assert calls == [['/usr/bin/virsh', 'list', '--uuid'], ['/usr/bin/virsh', 'dumpxml', i1],
                     ['/usr/bin/virsh', 'domcapabilities']]
    assert out['devices']['instances'][i1]['source'] == 'virsh dumpxml %s' % i1
    assert i1 not in out['ownership']      # the live definition has no mdevs any more


def test_use_virsh_only(capsys, monkeypatch, host):
    i3 = host['instances']['instance-00000003']
    with open(os.path.join(os.path.dirname(host['domain_xml_glob']), 'instance-00000003.xml')) as handle:
        live = handle.read()

    def run_command(self, args, **kwargs):
        if args[1] == 'list':
            return 0, i3 + '\n', ''
        return 0, live, ''

    rc, out = _run(capsys, _args(host, use_virsh=True, domain_xml_glob=''), monkeypatch, run_command)
    assert rc == 0
    assert list(out['devices']['instances']) == [i3]
    assert out['ownership'] == {i3: {'0000:85:00.0': 1}}


def test_virsh_domain_gone_between_list_and_dumpxml_is_skipped(capsys, monkeypatch, host):
    def run_command(self, args, **kwargs):
        if args[1] == 'list':
            return 0, 'deadbeef-0000-0000-0000-000000000000\n', ''
        if args[1] == 'domcapabilities':
            return 0, '<domainCapabilities><features/></domainCapabilities>', ''
        return 1, '', "error: failed to get domain 'deadbeef-0000-0000-0000-000000000000'"

    rc, out = _run(capsys, _args(host, use_virsh=True), monkeypatch, run_command)
    assert rc == 0 and len(out['devices']['instances']) == 3


def test_virsh_failure_fails_with_stderr(capsys, monkeypatch, host):
    def run_command(self, args, **kwargs):
        return 1, '', 'error: failed to connect to the hypervisor'

    rc, out = _run(capsys, _args(host, use_virsh=True), monkeypatch, run_command)
    assert rc == 1 and 'virsh list --uuid failed' in out['msg'] and 'failed to connect' in out['msg']


def test_documentation_matches_argument_spec(monkeypatch):
    captured = {}

    class Stop(Exception):
        pass

    def fake_init(self, argument_spec, **kwargs):
        captured['spec'] = argument_spec
        captured['kwargs'] = kwargs
        raise Stop()

    monkeypatch.setattr(basic.AnsibleModule, '__init__', fake_init)
    with pytest.raises(Stop):
        device_info.main()
    doc = yaml.safe_load(device_info.DOCUMENTATION)
    spec = captured['spec']
    assert captured['kwargs'] == {'supports_check_mode': True}
    assert set(doc['options']) == set(spec)
    for name, option in doc['options'].items():
        assert option['type'] == spec[name]['type'], name
        assert option.get('default') == spec[name].get('default'), name
        assert option.get('required', False) == spec[name].get('required', False), name
        assert option.get('elements') == spec[name].get('elements'), name
    sub_doc = doc['options']['pci_filters']['suboptions']
    sub_spec = spec['pci_filters']['options']
    assert set(sub_doc) == set(sub_spec)
    for name, option in sub_doc.items():
        assert option['type'] == sub_spec[name]['type']
        assert option.get('required', False) == sub_spec[name].get('required', False)
    # its attributes: the collection's fragment of the modules that work on their host
    # (plugins/doc_fragments/attributes.py)
    assert 'placement.upgrade.attributes.HOST' in doc['extends_documentation_fragment']
    assert 'attributes' not in doc
    host = yaml.safe_load(attributes.ModuleDocFragment.HOST)['attributes']
    assert host['check_mode']['support'] == 'full'
    assert host['diff_mode']['support'] == 'none'
    assert host['platform']['platforms'] == 'posix'
    yaml.safe_load(device_info.EXAMPLES)
    returned = yaml.safe_load(device_info.RETURN)
    # started: added by the action plugin (tests/integration/test_in_process_action.py sees it);
    # leftovers_removed: by the module's exit, when record_to's write removed any (tests/unit/plugins/modules/test_leftovers.py)
    # nova_credentials: by the action plugin, from the module's nova_placement, which it removes
    # (tests/unit/plugins/action/test_device_info_checks.py)
    assert set(returned) == {'devices', 'ownership', 'started', 'leftovers_removed', 'nova_credentials',
                             'mdev_persistence'}
    assert set(returned['devices']['contains']) == {'hostname', 'sysfs_root', 'gpus', 'sriov_pfs', 'pci_devices',
                                                    'numa_cells', 'instances', 'nova_conf', 'mem_encryption',
                                                    'warnings'}


def test_each_discovery_warning_is_a_task_warning(capsys, host, tmp_path):
    """Issue 26 s2: the report's warnings reach the play output (module.warn), recorded or replayed."""
    def warned(out):
        # (ansible-core 2.19 returns each as a WarningSummary: {'event': {'msg': ...}}; older ones as text)
        return [w['event']['msg'] if isinstance(w, dict) else w for w in out.get('warnings') or []]

    rc, out = _run(capsys, _args(host, record_to=str(tmp_path / 'rec.json')))
    assert rc == 0
    assert out['devices']['warnings'][0].startswith('no nova.conf at /etc/nova/nova.conf: the layout falls back')
    assert warned(out) == out['devices']['warnings']
    rc, out = _run(capsys, {'replay_from': str(tmp_path / 'rec.json'), 'hostname': 'compute-01'})
    assert rc == 0 and warned(out) == out['devices']['warnings'] and len(warned(out)) == 2


def _defined(tmp_path, host):
    """The fake host's mdevs defined persistently, and a stand-in mdevctl (as tools/simfleet.py gives a node)."""
    import simfleet
    return simfleet.write_mdevctl(str(tmp_path), host)


def _held(host, out):
    return sorted((m['uuid'], g['address'], m['type']) for g in out['devices']['gpus'] for m in g['mdevs']
                  if m['instance_uuid'])


def test_mdevs_persistence_checked_from_what_discovery_read(capsys, host, tmp_path):
    """Issue 45: the pre-flight's mdev check in the node's one module run (no second discovery)."""
    store = _defined(tmp_path, host)
    args = _args(host, check_mdevs=True, mdevctl_dir=store['mdevctl_dir'], mdevctl=store['mdevctl'])
    rc, out = _run(capsys, args)
    assert rc == 0, out
    found = out['mdev_persistence']
    assert (found['mdev_node'], found['mdevctl'], found['held'], found['problems']) == (True, store['mdevctl'], len(_held(host, out)), [])
    assert not [w for w in out['devices']['warnings'] if 'persistently' in w]
    # one held mdev not defined: a warning in the report (the node's record) and in the task's warnings
    uuid, parent, mdev_type = _held(host, out)[0]
    os.unlink(os.path.join(store['mdevctl_dir'], parent, uuid))
    rc, out = _run(capsys, args)
    assert rc == 0, out
    text = out['mdev_persistence']['problems']
    assert len(text) == 1 and text[0].startswith('compute-01: 1 mdev(s) held by guests are not defined persistently')
    assert text[0].endswith('Define them on compute-01: mdevctl define --auto --uuid %s --parent %s --type %s'
                            % (uuid, parent, mdev_type))
    assert out['devices']['warnings'][-1] == text[0]
    assert text[0] in [w['event']['msg'] if isinstance(w, dict) else w for w in out['warnings']]
    # made a failure: the task fails, saying why and that nothing was changed
    rc, out = _run(capsys, dict(args, fail_on_transient_mdevs=True))
    assert rc == 1 and out['failed'] is True
    assert out['msg'] == 'mdev_persistence: %s (fail_on_transient_mdevs is true; nothing was changed)' % text[0]
    # off (the module's default): nothing checked
    rc, out = _run(capsys, _args(host, mdevctl_dir=store['mdevctl_dir'], fail_on_transient_mdevs=True))
    assert rc == 0 and 'mdev_persistence' not in out


def test_nova_placement_options_read_for_the_action_only_when_asked(capsys, host, tmp_path):
    conf = tmp_path / 'nova.conf'
    conf.write_text(u'[placement]\nauth_type = password\nauth_url = http://k/v3\nusername = nova\n'
                    u'password = s3cret\nregion_name = RegionOne\n')
    rc, out = _run(capsys, _args(host, nova_conf=str(conf)))
    assert rc == 0 and 'nova_placement' not in out
    rc, out = _run(capsys, _args(host, nova_conf=str(conf), nova_credentials=True))
    assert rc == 0, out
    read = out['nova_placement']
    assert read['files'] == [str(conf)] and read['secrets'] == {'password': 's3cret'}
    assert read['options'] == {'auth_type': 'password', 'auth_url': 'http://k/v3', 'username': 'nova',
                               'region_name': 'RegionOne'}
    rc, out = _run(capsys, _args(host, nova_conf=str(tmp_path / 'none.conf'), nova_credentials=True))
    assert rc == 0 and out['nova_placement'] == {'missing': 'no nova.conf at %s' % (tmp_path / 'none.conf')}
