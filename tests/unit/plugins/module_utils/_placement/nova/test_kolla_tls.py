# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pre-flight's check of nova's own Placement credentials over TLS (issue 42, 1, "TLS").

nova.conf's ``[placement]cafile`` is a path where nova-compute runs: under kolla-ansible a path in
its container.  Probed from the controller, a cafile the controller does not have raised an uncaught
OSError (a traceback), and one it has at that path holds another CA.  Now the node's pre-flight reads
the CA where nova gets it on the node (kolla's container paths mapped to the host's
/etc/kolla/<service>/...) and hands its text to the controller's probe; a CA found nowhere is a
clear message, never a traceback.  (A fake node tree under tmp_path stands in for the node's /.)"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement import errors
from ansible_collections.placement.upgrade.plugins.module_utils._placement.nova import placement_auth
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import novaconf

CA = '-----BEGIN CERTIFICATE-----\nMIIBkolla\n-----END CERTIFICATE-----\n'
OTHER = '-----BEGIN CERTIFICATE-----\nMIIBother\n-----END CERTIFICATE-----\n'

PLACEMENT = '''[placement]
auth_type = password
auth_url = https://127.0.0.1:9/identity/v3
username = nova
password = secret
project_name = service
user_domain_name = Default
project_domain_name = Default
valid_interfaces = internal
cafile = %s
'''


def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as handle:
        handle.write(text)
    return path


def _conf(tmp_path, cafile, service='nova-compute'):
    return _write(str(tmp_path / 'etc' / 'kolla' / service / 'nova.conf'), PLACEMENT % cafile)


def _section(path):
    return novaconf.placement_section(path, is_secret=lambda name: name == 'password')


def test_kollas_ca_certificates_are_the_ca_of_the_containers_system_bundle(tmp_path):
    # kolla_copy_ca_into_containers: /etc/kolla/<service>/ca-certificates/*.crt join the container's
    # system bundle, the cafile kolla's nova.conf names
    path = _conf(tmp_path, '/etc/ssl/certs/ca-certificates.crt')
    _write(str(tmp_path / 'etc' / 'kolla' / 'nova-compute' / 'ca-certificates' / 'root.crt'), CA)
    _write(str(tmp_path / 'etc' / 'ssl' / 'certs' / 'ca-certificates.crt'), OTHER)  # the host's: not nova's
    ca = _section(path)['ca']
    assert ca['cafile'] == '/etc/ssl/certs/ca-certificates.crt'
    assert ca['read'] == [str(tmp_path / 'etc' / 'kolla' / 'nova-compute' / 'ca-certificates' / 'root.crt')]
    assert ca['pem'] == CA


def test_a_cafile_kolla_copied_from_its_config_folder_is_read_there(tmp_path):
    # config.json copies /var/lib/kolla/config_files (the host's /etc/kolla/<service>) to /etc/nova
    path = _conf(tmp_path, '/etc/nova/certs/placement-ca.pem')
    _write(str(tmp_path / 'etc' / 'kolla' / 'nova-compute' / 'certs' / 'placement-ca.pem'), CA)
    ca = _section(path)['ca']
    assert ca['read'] == [str(tmp_path / 'etc' / 'kolla' / 'nova-compute' / 'certs' / 'placement-ca.pem')]
    assert ca['pem'] == CA


def test_outside_kolla_the_cafile_is_read_where_nova_reads_it(tmp_path):
    cafile = _write(str(tmp_path / 'ca.pem'), CA)
    path = _write(str(tmp_path / 'etc' / 'nova' / 'nova.conf'), PLACEMENT % cafile)
    ca = _section(path)['ca']
    assert (ca['read'], ca['pem']) == ([cafile], CA)


def test_a_ca_found_nowhere_on_the_node_says_where_it_was_looked_for(tmp_path):
    path = _conf(tmp_path, '/etc/ssl/certs/ca-certificates.crt')
    ca = _section(path)['ca']
    assert 'pem' not in ca
    assert ca['missing'] == (
        "[placement] cafile /etc/ssl/certs/ca-certificates.crt is a path in kolla's nova-compute container: "
        'no CA of it on the node (looked for %s/*.crt, the CA certificates kolla adds to the container\'s '
        'system bundle)' % (tmp_path / 'etc' / 'kolla' / 'nova-compute' / 'ca-certificates'))


def test_no_cafile_no_ca(tmp_path):
    path = _write(str(tmp_path / 'nova.conf'), (PLACEMENT % '').replace('cafile = \n', ''))
    assert 'ca' not in _section(path)


def test_a_cafile_the_controller_does_not_have_is_a_message_not_a_traceback(tmp_path):
    # as read on a node before: no CA text, the path only; the controller has no such file
    conf = _section(_write(str(tmp_path / 'nova.conf'), PLACEMENT % '/nonexistent/kolla/ca.crt'))
    conf.pop('ca', None)
    with pytest.raises(errors.PlacementError) as info:
        placement_auth.connect(conf)
    assert '/nonexistent/kolla/ca.crt' in str(info.value.detail)
    assert 'cafile' in str(info.value.detail)


def test_the_probe_verifies_with_the_ca_read_on_the_node(tmp_path):
    path = _conf(tmp_path, '/etc/ssl/certs/ca-certificates.crt')
    _write(str(tmp_path / 'etc' / 'kolla' / 'nova-compute' / 'ca-certificates' / 'root.crt'), CA)
    conf = _section(path)
    session, cleanup = placement_auth.session_for(conf, plugin=None)
    try:
        assert session.verify != '/etc/ssl/certs/ca-certificates.crt' and os.path.isfile(session.verify)
        with open(session.verify) as handle:
            assert handle.read() == CA
    finally:
        cleanup()
    assert not os.path.exists(session.verify)
    # a CA the node's pre-flight could not read stops the probe with its reason
    conf['ca'] = {'cafile': '/etc/ssl/certs/ca-certificates.crt', 'missing': 'no file of it on the node'}
    with pytest.raises(errors.ConfigurationError) as info:
        placement_auth.session_for(conf, plugin=None)
    assert 'no file of it on the node' in info.value.detail
