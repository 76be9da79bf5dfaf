# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: compute_nodes
short_description: Compute nodes from nova's hypervisors or Placement's roots, grouped by what their trees need
version_added: 1.0.0
author: placement.upgrade contributors (@placement-upgrade)
description:
  - Lists the compute nodes of a cloud as inventory hosts, from nova's hypervisors
    (C(GET /os-hypervisors/detail), compute microversion 2.53) or, without nova, from
    Placement's root providers; the embedded store (O(embedded_db)) is read the same way.
  - Reads each node's provider tree and groups the hosts by what it needs, from Placement
    alone; with the default O(group_prefix) the groups are C(placement_needs_reshape) (any of the
    next three), C(placement_needs_vgpu) (VGPU on the root), C(placement_needs_mem_encryption)
    (MEM_ENCRYPTION_CONTEXT on the root, AMD SEV), C(placement_needs_pci) (a PCI class such as
    C(CUSTOM_PCI_*), C(SRIOV_NET_VF) or C(PGPU) on the root), C(placement_reshaped) (those classes
    only on children) and C(placement_plain) (none of them), and C(placement_missing) for a
    hypervisor nova lists that has no root provider yet.
  - Whether the VCPU to PCPU reshape is due depends on the node's nova.conf, which Placement
    does not show; the P(placement.upgrade.rolling_reshape#role) role finds it on the node.
  - Every host is also in O(group) (C(compute), the group the rolling playbook rolls through by
    default) and gets C(rolling_reshape_provider_name), so the roll finds its root provider
    whatever the host is called.
  - The host name is O(host_name), a Jinja2 expression over the node's variables (for example
    C(placement_root_name.split('.')[0]) for short names, or C(nova_service_host)); O(compose),
    O(groups) and O(keyed_groups) work as in every constructed inventory.
  - The file must end in C(compute_nodes.yml) or C(compute_nodes.yaml).
  - With O(cache) on, the list of nodes and their trees is read from Placement (and nova) once
    per O(cache_timeout) and kept in the cache plugin's store (an AWX inventory sync that runs
    every few minutes then asks the cloud once per timeout); C(--flush-cache) reads it again.
extends_documentation_fragment:
  - constructed
  - inventory_cache
  - placement.upgrade.auth
options:
  plugin:
    description:
      - The name of this plugin; the short name V(compute_nodes) is accepted too (as
        C(openstack.cloud.openstack) accepts V(openstack)) when the plugin is enabled by its
        full name in C(enable_plugins).
    required: true
    type: str
    choices: ['placement.upgrade.compute_nodes', 'compute_nodes']
  source:
    description:
      - Where the list of compute nodes comes from.
      - V(auto) asks nova when the cloud's service catalog lists a compute endpoint (or
        O(compute_endpoint) is set), and Placement's root providers otherwise.
      - V(nova) fails when there is no compute endpoint; V(placement) never asks nova.
    type: str
    choices: [auto, nova, placement]
    default: auto
  compute_endpoint:
    description:
      - nova's compute API URL (ending in C(/v2.1)) when the service catalog does not list it. A value
        that is no C(http://) or C(https://) URL is refused before nova is asked.
    type: str
  host_name:
    description:
      - Jinja2 expression giving each host's inventory name from the node's variables
        (C(placement_root_name), C(placement_root_uuid), C(nova_service_host), ...).
      - Two nodes given the same name are refused, naming both roots (one would be dropped), and so
        is a name Ansible cannot target (white space, a comma, a colon, C(*?[]), or a leading
        C(!&~@)), naming its root; the source is then not parsed, which stops Ansible only with
        C(inventory_any_unparsed_is_failed).
    type: str
    default: placement_root_name
  group:
    description: The group every compute node is put in.
    type: str
    default: compute
  group_prefix:
    description: Prefix of the groups named after what the trees need.
    type: str
    default: placement_
'''

EXAMPLES = r'''
# compute.compute_nodes.yml -- nova's hypervisors of the cloud "overcloud", short host names
plugin: placement.upgrade.compute_nodes
cloud: overcloud
host_name: placement_root_name.split('.')[0]
compose:
  ansible_host: nova_service_host

# offline.compute_nodes.yml -- the embedded store of the demo
# plugin: placement.upgrade.compute_nodes
# embedded_db: out/demo/placement.db

# then roll only the nodes whose trees need it:
#   ansible-playbook -i compute.compute_nodes.yml placement.upgrade.rolling_reshape \
#     -e rolling_reshape_hosts=placement_needs_reshape
'''

from collections.abc import Mapping

from ansible.errors import AnsibleParserError
from ansible.plugins.inventory import BaseInventoryPlugin, Cacheable, Constructable

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends import factory
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import inventory as fleet_inventory
from ansible_collections.placement.upgrade.plugins.module_utils._placement.nova import compute as nova
from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import (
    ConfigurationError,
    PlacementError,
    type_name,
)


#: what O(plugin) may also say
SHORT_NAME = 'compute_nodes'


#: characters a host pattern (hosts:, --limit) reads as its own syntax: a host named with one
#: cannot be targeted by its name
_PATTERN_CHARACTERS = ',:*?[]'
#: what a pattern starting with it means instead (exclude, intersect, regex, a limit file)
_PATTERN_PREFIXES = '!&~@'


def untargetable(host):
    """Why Ansible cannot target a host named ``host`` (None when it can)."""
    if any(c.isspace() for c in host):
        return 'it holds white space (a pattern ends at it)'
    if any(ord(c) < 32 or ord(c) == 127 for c in host):
        return 'it holds a control character'
    bad = sorted(set(c for c in host if c in _PATTERN_CHARACTERS))
    if bad:
        return 'it holds %s, which host patterns read as their own syntax' % ' '.join(repr(c) for c in bad)
    if host[0] in _PATTERN_PREFIXES:
        return 'it starts with %r, which makes a host pattern mean something else' % host[0]
    return None


def _message(exc):
    if isinstance(exc, ConfigurationError) or not exc.status:
        return exc.detail
    return str(exc)


def node_vars(node):
    """The host variables of one compute node."""
    hostvars = {
        'placement_root_name': node['name'],
        'placement_root_uuid': node['uuid'],
        'placement_needs': list(node['needs']),
        'placement_tree_state': node['state'],
        'placement_children': list(node['children']),
        'placement_root_inventory': dict(node['root_inventory']),
        'placement_source': node['source'],
        'rolling_reshape_provider_name': node['name'],
    }
    if node.get('nova'):
        hostvars.update({
            'nova_service_host': node['nova']['service_host'],
            'nova_hypervisor_status': node['nova']['status'],
            'nova_hypervisor_state': node['nova']['state'],
            'nova_hypervisor_type': node['nova']['hypervisor_type'],
        })
    return hostvars


class InventoryModule(BaseInventoryPlugin, Constructable, Cacheable):
    """Compute nodes from nova or Placement, grouped by what their provider trees need."""

    NAME = 'placement.upgrade.compute_nodes'

    def verify_file(self, path):
        return super(InventoryModule, self).verify_file(path) and \
            path.endswith(('compute_nodes.yml', 'compute_nodes.yaml'))

    def _nodes(self):
        options = dict((key, self.get_option(key)) for key in ('embedded_db',) + factory.AUTH_OPTIONS + factory.LOG_OPTIONS)
        source = self.get_option('source')
        try:
            backend = factory.get_backend(options, create=False)
            try:
                adapter = None
                if source != 'placement':
                    adapter = nova.compute_adapter(backend, endpoint_override=self.get_option('compute_endpoint'))
                if source == 'nova' and adapter is None:
                    raise ConfigurationError(
                        'source=nova, but there is no compute (nova) endpoint: %s; use source=auto or '
                        'placement, or set compute_endpoint'
                        % ('the embedded store has none' if getattr(backend, 'kind', None) != 'rest'
                           else 'the service catalog lists none'))
                return fleet_inventory.require_names(fleet_inventory.compute_nodes(backend, adapter))
            finally:
                backend.close()
        except PlacementError as exc:
            raise AnsibleParserError('placement.upgrade.compute_nodes: %s' % _message(exc))

    def _cached_nodes(self, path, cache):
        """The nodes, from the cache when O(cache) is on and Ansible allows reading it (``cache``
        is False with C(--flush-cache) and on a refresh), from the cloud otherwise; what was read
        from the cloud is stored when O(cache) is on."""
        if not self.get_option('cache'):
            return self._nodes()
        key = self.get_cache_key(path)
        if cache:
            try:
                return self._cache[key]
            except KeyError:
                pass
        nodes = self._nodes()
        self._cache[key] = nodes
        return nodes

    def _host_names(self, nodes):
        """``[(host, node, hostvars)]``: each node's host name from O(host_name); a name that fails,
        is empty, or is the name of another node too is refused (two nodes on one host would be
        merged into one, and the roll would reach only one of them)."""
        expression = self.get_option('host_name')
        hosts, seen = [], {}
        for node in nodes:
            hostvars = node_vars(node)
            try:
                host = self._compose(expression, hostvars)
            except Exception as exc:  # pylint: disable=broad-except
                raise AnsibleParserError('placement.upgrade.compute_nodes: host_name %r failed for %s: %s'
                                         % (expression, node['name'], exc))
            if not host or not isinstance(host, str):
                raise AnsibleParserError('placement.upgrade.compute_nodes: host_name %r gave %r for %s'
                                         % (expression, host, node['name']))
            host = str(host)
            why = untargetable(host)
            if why:
                raise AnsibleParserError(
                    'placement.upgrade.compute_nodes: host_name %r gives the host name %r for the root %s (%s): '
                    'Ansible cannot target a host so named, %s. Give host_name an expression that yields a plain '
                    'name, e.g. placement_root_name | regex_replace(\'[^A-Za-z0-9._-]\', \'-\')'
                    % (expression, host, node['name'], node['uuid'], why))
            if host in seen:
                raise AnsibleParserError(
                    'placement.upgrade.compute_nodes: host_name %r gives the same host name %r for the roots %s (%s) '
                    'and %s (%s); one of them would be dropped. Give host_name an expression that tells them apart '
                    '(placement_root_name, the default, is unique)'
                    % (expression, host, seen[host]['name'], seen[host]['uuid'], node['name'], node['uuid']))
            seen[host] = node
            hosts.append((host, node, hostvars))
        return hosts

    def _read_config_data(self, path):
        # ansible-core calls .get() on whatever the file holds before checking it is a mapping:
        # a list printed "'_AnsibleTaggedList' object has no attribute 'get'"
        try:
            config = self.loader.load_from_file(path, cache='none')
        except Exception:  # pylint: disable=broad-except
            config = None                       # ansible-core's own reading says what is wrong
        if config and not isinstance(config, Mapping):
            raise AnsibleParserError('placement.upgrade.compute_nodes: %s must be a mapping of options '
                                     '(plugin: placement.upgrade.compute_nodes, then the options), got a %s'
                                     % (path, type_name(config)))
        return super(InventoryModule, self)._read_config_data(path)

    def parse(self, inventory, loader, path, cache=True):
        super(InventoryModule, self).parse(inventory, loader, path, cache=cache)
        # the short name too (Ansible accepts the names the plugin was loaded under)
        self._redirected_names = list(getattr(self, '_redirected_names', None) or [self.NAME]) + [SHORT_NAME]
        self._read_config_data(path)
        strict = self.get_option('strict')
        prefix = self.get_option('group_prefix')
        hosts = self._host_names(self._cached_nodes(path, cache))   # every name checked before the inventory is touched
        group = self.inventory.add_group(self.get_option('group'))
        for host, node, hostvars in hosts:
            self.inventory.add_host(host, group=group)
            for key, value in hostvars.items():
                self.inventory.set_variable(host, key, value)
            groups = ['%s%s' % (prefix, node['state'])]
            groups += ['%sneeds_%s' % (prefix, need) for need in node['needs']]
            for name in groups:
                self.inventory.add_child(self.inventory.add_group(name), host)
            self._set_composite_vars(self.get_option('compose'), hostvars, host, strict=strict)
            self._add_host_to_composed_groups(self.get_option('groups'), hostvars, host, strict=strict)
            self._add_host_to_keyed_groups(self.get_option('keyed_groups'), hostvars, host, strict=strict)
