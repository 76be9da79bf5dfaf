# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The compute_nodes inventory plugin's names (issue 46): a host name Ansible cannot target is
refused naming its root; a source file that is no mapping is refused saying so in plain words."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.errors import AnsibleParserError
from ansible.parsing.dataloader import DataLoader

from ansible_collections.placement.upgrade.plugins.inventory import compute_nodes


def _node(name, uuid):
    return {'name': name, 'uuid': uuid, 'needs': [], 'state': 'plain', 'children': [], 'root_inventory': {},
            'source': 'placement'}


class _Plugin(object):
    """What _host_names uses of the plugin: its option and the expression evaluated on the node's vars
    (here the root name itself, as the default host_name does)."""

    def __init__(self, expression='placement_root_name'):
        self.expression = expression

    def get_option(self, name):
        assert name == 'host_name'
        return self.expression

    def _compose(self, expression, hostvars):
        return hostvars['placement_root_name']


@pytest.mark.parametrize('name, why', [
    ('cmp 01', 'white space'),
    ('cmp-01\t', 'white space'),
    ('cmp,01', "','"),
    ('cmp:01', "':'"),
    ('cmp*', "'*'"),
    ('cmp[1]', "'[' ']'"),
    ('!cmp', "starts with '!'"),
    ('~cmp', "starts with '~'"),
])
def test_a_host_name_ansible_cannot_target_is_refused_naming_the_root(name, why):
    nodes = [_node('cmp-00', 'u0'), _node(name, 'u1')]
    with pytest.raises(AnsibleParserError) as info:
        compute_nodes.InventoryModule._host_names(_Plugin(), nodes)
    text = str(info.value)
    assert "host_name 'placement_root_name' gives the host name %r for the root %s (u1): Ansible cannot target" \
        % (name, name) in text, text
    assert why in text, text


def test_plain_names_are_taken():
    nodes = [_node('cmp-01.dc1.example', 'u1'), _node('cmp_02', 'u2'), _node('10.0.0.3', 'u3')]
    hosts = compute_nodes.InventoryModule._host_names(_Plugin(), nodes)
    assert [host for host, _node_, _vars in hosts] == ['cmp-01.dc1.example', 'cmp_02', '10.0.0.3']


@pytest.mark.parametrize('body, shape', [('- plugin: placement.upgrade.compute_nodes\n', 'list'),
                                         ('placement.upgrade.compute_nodes\n', 'str')])
def test_a_source_that_is_no_mapping_is_refused_in_plain_words(tmp_path, body, shape):
    path = tmp_path / 'x.compute_nodes.yml'
    path.write_text(body)
    plugin = compute_nodes.InventoryModule()
    plugin.loader = DataLoader()
    plugin._redirected_names = [plugin.NAME, compute_nodes.SHORT_NAME]
    with pytest.raises(AnsibleParserError) as info:
        plugin._read_config_data(str(path))
    text = str(info.value)
    assert 'placement.upgrade.compute_nodes: %s must be a mapping of options' % path in text, text
    assert text.rstrip().endswith('got a %s' % shape), text
    assert 'Tagged' not in text
