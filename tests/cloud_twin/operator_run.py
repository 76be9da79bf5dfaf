# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The operator's side of the cloud twin: the nodes, guests through nova-api, the roll, Placement's state.

* :func:`start_nodes`: node directories (tests/cloud_twin/nodes.py), each node's nova-compute started with
  novactl (tests/cloud_twin/novactl.py) on the given release, then ``nova-manage cell_v2 discover_hosts``,
  then every node up in nova's os-services and its root provider in Placement;
* :func:`boot`: a guest booted through nova-api with openstacksdk (``networks: none``: no Neutron here);
* :func:`run_roll`: ``playbooks/rolling_reshape.yml`` by the project venv's ansible-playbook on an
  inventory of the nodes (local connection, discovery paths, novactl as the node's service manager,
  the switch to nova 34 as the role's post hook) with ``placement_backend: {cloud: twin}`` and a
  clouds.yaml (``OS_CLIENT_CONFIG_FILE``): password auth, endpoints from Keystone's catalog;
  :func:`start_roll` starts the same in a session of its own (the fault cases kill its process group),
  both on this tree's collection (:func:`collections_path`);
* :func:`placement_state`: every provider, its inventories and allocations (as the admin), and
  :func:`consumer_totals` (consumer -> resource class -> amount, over all providers).
"""

import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
for _path in (os.path.join(REPO, 'tools'), HERE):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import nodes  # noqa: E402
import novactl  # noqa: E402

MAIN_VENV = os.path.join(REPO, '.venv')
ANSIBLE_PLAYBOOK = os.path.join(MAIN_VENV, 'bin', 'ansible-playbook')
PLACEMENT_VERSION = 'placement 1.39'


def node_placement_auth(cloud):
    """The [placement] options of a node's nova.conf: the nova service user, the catalog's internal URL."""
    return {'auth_type': 'password', 'auth_url': cloud.auth_url, 'username': 'nova',
            'password': cloud.passwords['nova'], 'project_name': 'service', 'user_domain_name': 'Default',
            'project_domain_name': 'Default', 'region_name': 'RegionOne', 'valid_interfaces': 'internal'}


def start_nodes(cloud, specs, release='33', timeout=600):
    """``specs``: [(kind, hostname)]; returns {hostname: node_dir} once all are up and reported."""
    made = {}
    for kind, hostname in specs:
        node = nodes.create(cloud.path('nodes', hostname), kind, hostname, cloud.broker.transport_url,
                            node_placement_auth(cloud))
        made[hostname] = node
        cloud.started_nodes.append(node)
    for hostname, node in made.items():
        novactl.start(node, release)
    for hostname, node in made.items():
        novactl.wait(node, timeout)
    return register_nodes(cloud, made, timeout)


def register_nodes(cloud, made, timeout=600):
    """``made``: {hostname: node_dir} whose nova-compute started: ``nova-manage cell_v2 discover_hosts``,
    then every node up in nova's os-services and its root provider in Placement; returns ``made``."""
    cloud.nova_manage('cell_v2', 'discover_hosts', '--verbose')
    cloud.wait_services(('nova-compute',), timeout=timeout, hosts=list(made))
    deadline = time.monotonic() + timeout
    while True:
        names = set(p['name'] for p in placement_get(cloud, '/resource_providers')['resource_providers'])
        if set(made) <= names:
            return made
        if time.monotonic() > deadline:
            raise AssertionError('providers of %s not in Placement after %ss' % (sorted(set(made) - names), timeout))
        time.sleep(1)


def stop_nodes(cloud):
    for node in list(cloud.started_nodes):
        novactl.stop(node)


# -- Placement, as the admin -------------------------------------------------------
def placement_get(cloud, path):
    resp = cloud.admin_session().get(cloud.placement.url + path, headers={'OpenStack-API-Version': PLACEMENT_VERSION},
                                     raise_exc=True)
    return resp.json()


def placement_state(cloud):
    """{provider uuid: {'name', 'parent', 'root', 'inventories': {rc: total}, 'allocations': {consumer: {rc: n}}}}."""
    state = {}
    for rp in placement_get(cloud, '/resource_providers')['resource_providers']:
        inv = placement_get(cloud, '/resource_providers/%s/inventories' % rp['uuid'])['inventories']
        allocs = placement_get(cloud, '/resource_providers/%s/allocations' % rp['uuid'])['allocations']
        state[rp['uuid']] = {
            'name': rp['name'], 'parent': rp['parent_provider_uuid'], 'root': rp['root_provider_uuid'],
            'generation': rp['generation'],
            'inventories': dict((rc, v['total']) for rc, v in inv.items()),
            'allocations': dict((c, dict(a['resources'])) for c, a in allocs.items())}
    return state


def consumer_totals(state):
    """consumer -> resource class -> amount, summed over every provider."""
    totals = {}
    for rp in state.values():
        for consumer, resources in rp['allocations'].items():
            mine = totals.setdefault(consumer, {})
            for rc, amount in resources.items():
                mine[rc] = mine.get(rc, 0) + amount
    return totals


def consumer_providers(state, consumer):
    """{resource class: [provider name, ...]} of ``consumer``'s allocation."""
    found = {}
    for rp in state.values():
        for rc in rp['allocations'].get(consumer, {}):
            found.setdefault(rc, []).append(rp['name'])
    return dict((rc, sorted(names)) for rc, names in found.items())


def _nova_node_writes(cloud, state, hostnames, since, probes):
    """[(hostname, (method, uri with the node's root as ``{root}``), the request)] of nova's writes (see
    :func:`nova_writes`), in the log's order."""
    roots = dict((rp['name'], uuid) for uuid, rp in state.items() if rp['parent'] is None)
    found = []
    for write in cloud.placement_requests(user='nova', since=since, writes_only=True):
        if probes is not None and (write['method'], write['uri'], write['status']) == ('POST', '/reshaper', 400):
            probes.append(write['line'])
            continue
        target = write['uri'].split('?')[0].split('/')
        owner = state[target[2]]['name'] if len(target) > 2 and target[2] in state else None
        node = [h for h in hostnames if owner and (owner == h or owner.startswith(h + '_'))]
        if owner and not node:
            continue
        assert node, 'a write by nova outside the nodes %s: %s' % (', '.join(sorted(hostnames)), write['line'])
        found.append((node[0], (write['method'], write['uri'].replace(roots.get(node[0], '?'), '{root}')), write))
    return found


def nova_writes(cloud, state, hostnames, since, probes=None):
    """The nova service user's writes to Placement after ``since`` (an offset of Placement's request
    log), by node: ({hostname: [(method, uri with the node's root as ``{root}``)]}, the lines counted).

    ``state`` is a :func:`placement_state` naming the providers (a node's: its root, or a child named
    ``<hostname>_...``).  A write to a provider of another node is left out (``make cloud-twin`` runs
    every file in one session: other tests' nodes run on); a write of nova's to no provider of
    ``state`` fails (AssertionError with the log line).  With a list as ``probes``, the roll's own
    probes of nova's credentials (a ``POST /reshaper`` that changed nothing, status 400:
    device_info's nova_credentials, when the node's nova.conf holds nova's [placement] options) go
    there instead of being counted."""
    by_node = dict((hostname, []) for hostname in hostnames)
    counted = []
    for host, seen, write in _nova_node_writes(cloud, state, hostnames, since, probes):
        by_node[host].append(seen)
        counted.append(write['line'])
    return by_node, counted


ROOT_TRAITS = ('PUT', '/resource_providers/{root}/traits')


def nova_writes_by_release(cloud, state, hostnames, since, new_started, probes=None):
    """:func:`nova_writes` split at each node's start on the new release: ({hostname: {'old': [...],
    'new': [...]}}, the lines counted).  ``new_started`` is {hostname: epoch seconds the node's
    nova-compute was started on the new release} (the old one was stopped before it); a write whose
    time in Placement's log is earlier is the old release's."""
    split = dict((h, {'old': [], 'new': []}) for h in hostnames)
    counted = []
    for host, seen, write in _nova_node_writes(cloud, state, hostnames, since, probes):
        split[host]['old' if write['at'] < new_started[host] else 'new'].append(seen)
        counted.append(write['line'])
    return split, counted


def started_on(made, release, since):
    """{hostname: epoch seconds novactl last started the node on ``release`` after ``since``} (its journal)."""
    found = {}
    for host, node in made.items():
        starts = [e['began'] for e in novactl.read_journal(node)
                  if e['action'] == 'start' and e.get('release') == release and e['began'] >= since]
        assert starts, '%s: novactl never started nova %s after %.0f: %s' % (host, release, since, novactl.read_journal(node))
        found[host] = starts[-1]
    return found


def check_status_answers(split, records):
    """The rule for nova's writes to Placement during a roll with the nova steps, per node (``split``
    from :func:`nova_writes_by_release`, ``records`` {hostname: the node's record}); returns the nodes
    where nova 33's status trait race was seen (docs/cloud-twin.md).

    - The old release: the PUT of the root's traits answering the disable (set_host_enabled adds
      COMPUTE_STATUS_DISABLED), and at most one more, its periodic report racing the disable (it read
      the service record before the disable was saved and took the trait off again); after that race
      the pass must have laid the trait again (its journal says it added it to the root).
    - The new release: exactly one PUT of the root's traits, the answer to the enable: its start
      wrote nothing (the role also fails a node whose generation moves between nova's start and its
      report)."""
    raced = []
    for host, seen in sorted(split.items()):
        assert seen['old'] in ([ROOT_TRAITS], [ROOT_TRAITS] * 2), (host, 'old release', seen)
        assert seen['new'] == [ROOT_TRAITS], (host, 'new release', seen)
        if len(seen['old']) == 2:
            raced.append(host)
            assert 'COMPUTE_STATUS_DISABLED' in root_traits_added(records[host]), (
                host, 'nova 33 raced: the pass added to the root only', root_traits_added(records[host]))
    return raced


def node_record(out, node, run_id='latest'):
    """The node's record of the roll run in ``out``: ``out/reports/<run_id>/nodes/<node>.json`` (the
    rolling role's report folder; ``latest`` is the last run's)."""
    with open(os.path.join(out, 'reports', run_id, 'nodes', '%s.json' % node)) as handle:
        return json.load(handle)


def root_traits_added(record):
    """The traits the record says its pass added to the node's root (its ``written``, from the journal)."""
    return sorted(t for w in ((record.get('written') or {}).get('traits') or [])
                  if w.get('provider') == record.get('provider') for t in w.get('added') or [])


# -- guests -----------------------------------------------------------------------
def flavor(conn, name, vcpus=1, ram=512, disk=1, extra_specs=None):
    made = conn.compute.create_flavor(name=name, ram=ram, vcpus=vcpus, disk=disk)
    if extra_specs:
        conn.compute.create_flavor_extra_specs(made, dict(extra_specs))
    return made


def boot(conn, name, flavor_id, image_id, wait=True, timeout=300, host=None):
    """Boot a guest through nova-api; returns (server, seconds until ACTIVE or ERROR)."""
    began = time.monotonic()
    attrs = {'name': name, 'flavor_id': flavor_id, 'image_id': image_id, 'networks': 'none'}
    if host:
        attrs['availability_zone'] = 'nova:%s' % host
    server = conn.compute.create_server(**attrs)
    if wait:
        server = conn.compute.wait_for_server(server, status='ACTIVE', failures=['ERROR'], interval=1, wait=timeout)
    return server, time.monotonic() - began


# -- the roll ---------------------------------------------------------------------
def inventory(made, out, python=None, release='34', host_vars=None):
    """The roll's inventory: every node a local-connection host of group ``compute`` (``host_vars``:
    {hostname: {variable: value}} added to a node's)."""
    python = python or os.path.join(MAIN_VENV, 'bin', 'python')
    hosts = {}
    for hostname, node in sorted(made.items()):
        host = {'ansible_connection': 'local', 'ansible_python_interpreter': python,
                'rolling_reshape_provider_name': hostname, 'rolling_reshape_compute_host': hostname}
        host.update(nodes.discovery_paths(node))
        host.update(novactl.role_vars(node, python=python, release=release))
        host.update((host_vars or {}).get(hostname) or {})
        hosts[hostname] = host
    path = os.path.join(out, 'inventory.json')
    with open(path, 'w') as handle:
        json.dump({'all': {'children': {'compute': {'hosts': hosts}}}}, handle, indent=1, sort_keys=True)
    return path


def run_roll(out, inventory_path, clouds_yaml, variables, timeout=1800, cloud_name='twin', env=None):
    """ansible-playbook playbooks/rolling_reshape.yml; returns (CompletedProcess, seconds)."""
    argv, child_env = roll_command(out, inventory_path, clouds_yaml, variables, cloud_name=cloud_name, env=env)
    began = time.monotonic()
    with open(os.path.join(out, 'ansible-playbook.log'), 'w') as log:
        result = subprocess.run(
            argv, env=child_env, cwd=out, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
            timeout=timeout, check=False)
        log.write(result.stdout)
    return result, time.monotonic() - began


def collections_path(out):
    """A collections path whose placement.upgrade is this tree (not the one .venv/collections links: a
    worktree's .venv may be another tree's), as tests/integration/test_fleet_playbook.py makes it."""
    parent = os.path.join(out, 'collections', 'ansible_collections', 'placement')
    os.makedirs(parent, exist_ok=True)
    link = os.path.join(parent, 'upgrade')
    if not os.path.islink(link):
        os.symlink(REPO, link)
    return os.path.join(out, 'collections')


def roll_command(out, inventory_path, clouds_yaml, variables, cloud_name='twin', env=None, vars_name='vars.json'):
    """(argv, env) of the roll's ansible-playbook; writes its extra vars to ``out/vars_name``."""
    extra = {'placement_backend': {'cloud': cloud_name}, 'rolling_reshape_become': False,
             'rolling_reshape_nova_service': 'always',
             'rolling_reshape_snapshot_dir': os.path.join(out, 'snapshots'),
             'rolling_reshape_report_dir': os.path.join(out, 'reports')}
    extra.update(variables)
    extra_path = os.path.join(out, vars_name)
    with open(extra_path, 'w') as handle:
        json.dump(extra, handle, indent=1, sort_keys=True)
    child_env = dict(os.environ)
    for key in [k for k in child_env if k.startswith(('ANSIBLE_', 'OS_', 'PYTHON'))] + ['VIRTUAL_ENV']:
        child_env.pop(key, None)
    child_env.update({
        'PATH': os.path.join(MAIN_VENV, 'bin') + os.pathsep + child_env.get('PATH', ''),
        'OS_CLIENT_CONFIG_FILE': clouds_yaml,
        'ANSIBLE_COLLECTIONS_PATH': collections_path(out),
        'ANSIBLE_CALLBACKS_ENABLED': 'placement.upgrade.rolling_progress',
        'ANSIBLE_NOCOLOR': '1', 'ANSIBLE_RETRY_FILES_ENABLED': '0',
        'ANSIBLE_HOME': os.path.join(out, '.ansible'),
        'ANSIBLE_LOCAL_TEMP': os.path.join(out, '.ansible', 'tmp'),
        'NO_PROXY': '127.0.0.1,localhost', 'no_proxy': '127.0.0.1,localhost',
    })
    child_env.update(env or {})
    argv = [ANSIBLE_PLAYBOOK, '-i', inventory_path, os.path.join(REPO, 'playbooks', 'rolling_reshape.yml'),
            '-e', '@' + extra_path]
    return argv, child_env


def start_roll(out, inventory_path, clouds_yaml, variables, log_name='ansible-playbook.log', cloud_name='twin',
               env=None):
    """The roll's ansible-playbook started in a session of its own (its process group can be killed as a
    controller dies), output to ``out/log_name`` as it goes; returns (Popen, log path)."""
    argv, child_env = roll_command(out, inventory_path, clouds_yaml, variables, cloud_name=cloud_name, env=env,
                                   vars_name=os.path.splitext(log_name)[0] + '.vars.json')
    log_path = os.path.join(out, log_name)
    with open(log_path, 'w') as log:
        proc = subprocess.Popen(argv, env=child_env, cwd=out, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    return proc, log_path
