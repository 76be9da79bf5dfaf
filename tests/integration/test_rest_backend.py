# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The REST backend against the REAL Placement (session fixture on 127.0.0.1).

The server's database is shared by the whole session: every test makes its own
providers with unique names and uuids.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import socket
import subprocess
import sys
import uuid
from urllib.request import urlopen

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement import errors
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.base import provider_tree_state
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.rest import RestBackend
from db_matrix import DB_MATRIX, on_db

pytestmark = pytest.mark.real

PROVIDER_KEYS = {'uuid', 'name', 'generation', 'parent_provider_uuid', 'root_provider_uuid'}
INV_DEFAULTS = {'reserved': 0, 'min_unit': 1, 'max_unit': 2147483647, 'step_size': 1,
                'allocation_ratio': 1.0}


@pytest.fixture(params=DB_MATRIX)
def placement_server(request, placement_sqlite):
    """Every test here on Placement on SQLite, then on MariaDB behind gunicorn (tests/db_matrix.py)."""
    return on_db(request, placement_sqlite)


def new_uuid():
    return str(uuid.uuid4())


def assert_typed(exc, cls, status, code):
    assert isinstance(exc, cls), repr(exc)
    assert exc.status == status
    assert exc.code == code
    assert exc.request_id and exc.request_id.startswith('req-')
    assert exc.detail


def alloc_body(rp_allocs, generation=None, project='p1', user='u1'):
    return {'allocations': dict((rp, {'resources': res}) for rp, res in rp_allocs.items()),
            'project_id': project, 'user_id': user, 'consumer_generation': generation,
            'consumer_type': 'INSTANCE'}


@pytest.fixture
def tree(rest_backend, unique_name):
    """A compute node root with VCPU + VGPU inventory and one GPU child."""
    root = rest_backend.create_provider(unique_name('cn'))
    child = rest_backend.create_provider(unique_name('cn_pci_0000_84_00_0'),
                                         parent_provider_uuid=root['uuid'])
    inv = rest_backend.set_inventories(root['uuid'], 0, {
        'VCPU': {'total': 16, 'allocation_ratio': 4.0}, 'VGPU': {'total': 4, 'max_unit': 4}})
    return {'root': root, 'child': child, 'root_gen': inv['resource_provider_generation']}


# -- server and session ----------------------------------------------------------
def test_server_answers_root_on_loopback(placement_server):
    assert placement_server.url.startswith('http://127.0.0.1:')
    with urlopen(placement_server.url + '/', timeout=5) as resp:
        doc = json.loads(resp.read().decode('utf-8'))
    assert doc['versions'][0]['max_version'] == '1.39'


def test_negotiates_1_39(rest_backend, placement_server):
    assert rest_backend.kind == 'rest'
    assert rest_backend.microversion == '1.39'
    assert rest_backend.endpoint == placement_server.url


def test_from_options_with_the_module_auth_options(placement_server, unique_name):
    opts = placement_server.module_auth()
    assert opts == {'auth_type': 'admin_token',
                    'auth': {'token': 'admin', 'endpoint': placement_server.url}}
    with RestBackend.from_options(opts) as backend:
        assert backend.microversion == '1.39'
        made = backend.create_provider(unique_name('opts'))
        assert backend.list_providers(uuid=made['uuid']) == [made]


def test_import_does_not_load_openstacksdk():
    code = ('import sys\n'
            'import ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.rest\n'
            'assert "openstack" not in sys.modules, "openstack imported"\n'
            'assert "keystoneauth1" not in sys.modules, "keystoneauth1 imported"\n')
    subprocess.check_call([sys.executable, '-c', code])


# -- providers --------------------------------------------------------------------
def test_provider_lifecycle_and_shapes(rest_backend, unique_name):
    name = unique_name('root')
    root_uuid = new_uuid()
    root = rest_backend.create_provider(name, uuid=root_uuid)
    assert root == {'uuid': root_uuid, 'name': name, 'generation': 0,
                    'parent_provider_uuid': None, 'root_provider_uuid': root_uuid}
    child = rest_backend.create_provider(unique_name('child'), parent_provider_uuid=root_uuid)
    assert set(child) == PROVIDER_KEYS
    assert child['parent_provider_uuid'] == root_uuid and child['root_provider_uuid'] == root_uuid

    assert rest_backend.get_provider(root_uuid) == root
    assert rest_backend.list_providers(name=name) == [root]
    assert rest_backend.list_providers(uuid=child['uuid']) == [child]
    in_tree = rest_backend.list_providers(in_tree=child['uuid'])
    assert sorted(p['uuid'] for p in in_tree) == sorted([root_uuid, child['uuid']])
    assert all(set(p) == PROVIDER_KEYS for p in in_tree)
    assert rest_backend.list_providers(in_tree=new_uuid()) == []

    renamed = rest_backend.update_provider(child['uuid'], child['name'] + '-x',
                                           parent_provider_uuid=root_uuid)
    assert renamed['name'] == child['name'] + '-x'
    assert renamed['parent_provider_uuid'] == root_uuid
    assert renamed['generation'] == child['generation']

    with pytest.raises(errors.CannotDeleteParent) as info:
        rest_backend.delete_provider(root_uuid)
    assert_typed(info.value, errors.CannotDeleteParent, 409, errors.PROVIDER_CANNOT_DELETE_PARENT)

    rest_backend.delete_provider(child['uuid'])
    rest_backend.delete_provider(root_uuid)
    with pytest.raises(errors.NotFound) as info:
        rest_backend.get_provider(root_uuid)
    assert_typed(info.value, errors.NotFound, 404, errors.DEFAULT)
    with pytest.raises(errors.NotFound):
        rest_backend.delete_provider(root_uuid)


def test_reparent_and_unparent_at_1_37_plus(rest_backend, unique_name):
    a = rest_backend.create_provider(unique_name('a'))
    b = rest_backend.create_provider(unique_name('b'))
    c = rest_backend.create_provider(unique_name('c'), parent_provider_uuid=a['uuid'])
    moved = rest_backend.update_provider(c['uuid'], c['name'], parent_provider_uuid=b['uuid'])
    assert moved['parent_provider_uuid'] == b['uuid'] and moved['root_provider_uuid'] == b['uuid']
    loose = rest_backend.update_provider(c['uuid'], c['name'])
    assert loose['parent_provider_uuid'] is None and loose['root_provider_uuid'] == c['uuid']
    rest_backend.update_provider(c['uuid'], c['name'], parent_provider_uuid=b['uuid'])
    with pytest.raises(errors.BadRequest) as info:       # under its own descendant
        rest_backend.update_provider(b['uuid'], b['name'], parent_provider_uuid=c['uuid'])
    assert_typed(info.value, errors.BadRequest, 400, errors.DEFAULT)


def test_create_conflicts_and_bad_parent(rest_backend, unique_name):
    first = rest_backend.create_provider(unique_name('dup'))
    with pytest.raises(errors.DuplicateName) as info:
        rest_backend.create_provider(first['name'])
    assert_typed(info.value, errors.DuplicateName, 409, errors.DUPLICATE_NAME)
    with pytest.raises(errors.Conflict) as info:
        rest_backend.create_provider(unique_name('dupuuid'), uuid=first['uuid'])
    assert info.value.status == 409
    with pytest.raises(errors.BadRequest) as info:
        rest_backend.create_provider(unique_name('orphan'), parent_provider_uuid=new_uuid())
    assert_typed(info.value, errors.BadRequest, 400, errors.DEFAULT)


# -- inventories and usages ------------------------------------------------------
def test_inventories(rest_backend, tree):
    root = tree['root']['uuid']
    got = rest_backend.get_inventories(root)
    assert got['resource_provider_generation'] == tree['root_gen'] == 1
    vcpu = dict(INV_DEFAULTS, total=16, allocation_ratio=4.0)
    assert got['inventories']['VCPU'] == vcpu

    same = rest_backend.set_inventories(root, 1, got['inventories'])
    assert same['resource_provider_generation'] == 2          # +1 even when identical

    one = rest_backend.set_inventory(root, 'MEMORY_MB', 2, {'total': 2048, 'reserved': 512})
    assert one == dict(INV_DEFAULTS, total=2048, reserved=512, resource_provider_generation=3)

    with pytest.raises(errors.ConcurrentUpdate) as info:
        rest_backend.set_inventories(root, 1, {})
    assert_typed(info.value, errors.ConcurrentUpdate, 409, errors.CONCURRENT_UPDATE)
    with pytest.raises(errors.ConcurrentUpdate) as info:
        rest_backend.set_inventory(root, 'VCPU', 0, {'total': 8})
    assert_typed(info.value, errors.ConcurrentUpdate, 409, errors.CONCURRENT_UPDATE)
    with pytest.raises(errors.BadRequest) as info:
        rest_backend.set_inventory(root, 'VCPU', 3, {'total': 4, 'reserved': 5})
    assert_typed(info.value, errors.BadRequest, 400, errors.DEFAULT)

    # delete one class: a stale generation is refused before anything is sent
    with pytest.raises(errors.ConcurrentUpdate) as info:
        rest_backend.delete_inventory(root, 'MEMORY_MB', generation=2)
    assert info.value.code == errors.CONCURRENT_UPDATE
    assert 'MEMORY_MB' in rest_backend.get_inventories(root)['inventories']
    rest_backend.delete_inventory(root, 'MEMORY_MB', generation=3)
    after = rest_backend.get_inventories(root)
    assert set(after['inventories']) == {'VCPU', 'VGPU'} and after['resource_provider_generation'] == 4
    with pytest.raises(errors.NotFound) as info:
        rest_backend.delete_inventory(root, 'MEMORY_MB')
    assert_typed(info.value, errors.NotFound, 404, errors.DEFAULT)

    usages = rest_backend.get_usages(root)
    assert usages == {'resource_provider_generation': 4, 'usages': {'VCPU': 0, 'VGPU': 0}}

    with pytest.raises(errors.ConcurrentUpdate):
        rest_backend.delete_inventories(root, generation=3)
    rest_backend.delete_inventories(root, generation=4)
    assert rest_backend.get_inventories(root) == {'resource_provider_generation': 5, 'inventories': {}}
    rest_backend.set_inventories(root, 5, {'VCPU': {'total': 1}})
    rest_backend.delete_inventories(root)
    assert rest_backend.get_inventories(root) == {'resource_provider_generation': 7, 'inventories': {}}


def test_unknown_resource_class_is_bad_request(rest_backend, tree):
    with pytest.raises(errors.BadRequest) as info:
        rest_backend.set_inventories(tree['root']['uuid'], tree['root_gen'], {'CUSTOM_NOPE_X': {'total': 1}})
    assert_typed(info.value, errors.BadRequest, 400, errors.DEFAULT)


# -- traits, aggregates, resource classes ------------------------------------------
def test_traits(rest_backend, tree):
    name = 'CUSTOM_PU_%s' % uuid.uuid4().hex[:8].upper()
    assert rest_backend.ensure_trait(name) is True
    assert rest_backend.ensure_trait(name) is False
    assert rest_backend.list_traits(name='startswith:%s' % name) == [name]
    assert rest_backend.list_traits(name='in:%s,HW_NUMA_ROOT' % name) == sorted([name, 'HW_NUMA_ROOT'])
    assert 'HW_NUMA_ROOT' in rest_backend.list_traits()

    child = tree['child']['uuid']
    assert rest_backend.get_provider_traits(child) == {'resource_provider_generation': 0, 'traits': []}
    done = rest_backend.set_provider_traits(child, 0, [name, 'HW_NUMA_ROOT'])
    assert done['resource_provider_generation'] == 1
    assert sorted(done['traits']) == sorted([name, 'HW_NUMA_ROOT'])
    assert sorted(rest_backend.get_provider_traits(child)['traits']) == sorted([name, 'HW_NUMA_ROOT'])
    with pytest.raises(errors.BadRequest) as info:
        rest_backend.set_provider_traits(child, 1, ['CUSTOM_NEVER_MADE_%s' % uuid.uuid4().hex[:6].upper()])
    assert_typed(info.value, errors.BadRequest, 400, errors.DEFAULT)
    with pytest.raises(errors.ConcurrentUpdate):
        rest_backend.set_provider_traits(child, 0, [])
    with pytest.raises(errors.BadRequest):
        rest_backend.ensure_trait('NOT_CUSTOM_%s' % uuid.uuid4().hex[:6].upper())


def test_aggregates(rest_backend, tree):
    child = tree['child']['uuid']
    assert rest_backend.get_aggregates(child) == {'resource_provider_generation': 0, 'aggregates': []}
    agg = new_uuid()
    done = rest_backend.set_aggregates(child, 0, [agg])
    assert done == {'resource_provider_generation': 1, 'aggregates': [agg]}
    assert rest_backend.get_aggregates(child)['aggregates'] == [agg]
    with pytest.raises(errors.ConcurrentUpdate):
        rest_backend.set_aggregates(child, 0, [])


def test_resource_classes(rest_backend):
    name = 'CUSTOM_PU_%s' % uuid.uuid4().hex[:8].upper()
    assert rest_backend.ensure_resource_class(name) is True
    assert rest_backend.ensure_resource_class(name) is False
    classes = rest_backend.list_resource_classes()
    assert name in classes and 'VGPU' in classes
    with pytest.raises(errors.BadRequest):
        rest_backend.ensure_resource_class('VGPU_NOT_CUSTOM')


# -- allocations --------------------------------------------------------------------
def test_allocations(rest_backend, tree):
    root = tree['root']['uuid']
    c1, c2 = new_uuid(), new_uuid()
    assert rest_backend.get_allocations(c1) == {'allocations': {}}

    rest_backend.put_allocations(c1, alloc_body({root: {'VCPU': 2, 'VGPU': 1}}))
    got = rest_backend.get_allocations(c1)
    assert got == {'allocations': {root: {'generation': 2, 'resources': {'VCPU': 2, 'VGPU': 1}}},
                   'consumer_generation': 1, 'project_id': 'p1', 'user_id': 'u1',
                   'consumer_type': 'INSTANCE'}
    with pytest.raises(errors.ConcurrentUpdate) as info:           # stale consumer generation
        rest_backend.put_allocations(c1, alloc_body({root: {'VCPU': 1}}, generation=None))
    assert_typed(info.value, errors.ConcurrentUpdate, 409, errors.CONCURRENT_UPDATE)
    with pytest.raises(errors.CapacityExceeded) as info:           # VGPU capacity 4
        rest_backend.put_allocations(c2, alloc_body({root: {'VGPU': 4}}))
    assert_typed(info.value, errors.CapacityExceeded, 409, errors.DEFAULT)
    with pytest.raises(errors.CapacityExceeded) as info:           # max_unit 4: also a 409
        rest_backend.put_allocations(c2, alloc_body({root: {'VGPU': 5}}))
    assert 'violate inventory constraints' in info.value.detail

    rest_backend.post_allocations({
        c1: alloc_body({root: {'VCPU': 4, 'VGPU': 1}}, generation=1),
        c2: alloc_body({root: {'VGPU': 2}}),
    })
    by_rp = rest_backend.get_provider_allocations(root)
    assert by_rp == {'resource_provider_generation': 3,
                     'allocations': {c1: {'resources': {'VCPU': 4, 'VGPU': 1}, 'consumer_generation': 2},
                                     c2: {'resources': {'VGPU': 2}, 'consumer_generation': 1}}}
    assert rest_backend.get_usages(root)['usages'] == {'VCPU': 4, 'VGPU': 3}

    with pytest.raises(errors.InventoryInUse) as info:
        rest_backend.set_inventories(root, 3, {'VCPU': {'total': 16}})
    assert_typed(info.value, errors.InventoryInUse, 409, errors.INVENTORY_INUSE)
    with pytest.raises(errors.InventoryInUse):
        rest_backend.delete_inventories(root)
    with pytest.raises(errors.ConcurrentUpdate):               # Placement's answer for one in-use class
        rest_backend.delete_inventory(root, 'VGPU', generation=3)
    rest_backend.delete_provider(tree['child']['uuid'])            # no allocations: fine
    with pytest.raises(errors.ProviderInUse) as info:
        rest_backend.delete_provider(root)
    assert_typed(info.value, errors.ProviderInUse, 409, errors.PROVIDER_IN_USE)

    rest_backend.delete_allocations(c2)
    with pytest.raises(errors.NotFound) as info:
        rest_backend.delete_allocations(c2)
    assert_typed(info.value, errors.NotFound, 404, errors.DEFAULT)
    rest_backend.put_allocations(c1, alloc_body({}, generation=2))
    assert rest_backend.get_allocations(c1) == {'allocations': {}}


# -- reshaper -----------------------------------------------------------------------
def _reshape_body(backend, root, child, consumer, consumer_gen):
    root_inv = backend.get_inventories(root)
    child_inv = backend.get_inventories(child)
    return {
        'inventories': {
            root: {'resource_provider_generation': root_inv['resource_provider_generation'],
                   'inventories': {'VCPU': root_inv['inventories']['VCPU']}},
            child: {'resource_provider_generation': child_inv['resource_provider_generation'],
                    'inventories': {'VGPU': {'total': 4, 'max_unit': 4}}},
        },
        'allocations': {
            consumer: alloc_body({root: {'VCPU': 2}, child: {'VGPU': 1}}, generation=consumer_gen),
        },
    }


def test_reshape_moves_vgpu_to_the_child(rest_backend, tree):
    root, child = tree['root']['uuid'], tree['child']['uuid']
    consumer = new_uuid()
    rest_backend.put_allocations(consumer, alloc_body({root: {'VCPU': 2, 'VGPU': 1}}))
    body = _reshape_body(rest_backend, root, child, consumer, 1)
    answer = rest_backend.reshape(body)
    assert answer['status'] == 204 and answer['request_id'].startswith('req-'), answer

    assert set(rest_backend.get_inventories(root)['inventories']) == {'VCPU'}
    assert rest_backend.get_inventories(child)['inventories']['VGPU']['total'] == 4
    got = rest_backend.get_allocations(consumer)
    assert dict((rp, e['resources']) for rp, e in got['allocations'].items()) == {
        root: {'VCPU': 2}, child: {'VGPU': 1}}
    assert got['consumer_generation'] == 2

    # the same body again: every generation is stale now -> nothing changes
    with pytest.raises(errors.ConcurrentUpdate) as info:
        rest_backend.reshape(body)
    assert_typed(info.value, errors.ConcurrentUpdate, 409, errors.CONCURRENT_UPDATE)

    state = provider_tree_state(rest_backend, root)
    assert set(state['providers']) == {root, child}
    assert state['providers'][child]['usages'] == {'VGPU': 1}
    assert state['allocations'][consumer]['allocations'][child]['resources'] == {'VGPU': 1}


def test_reshape_without_service_role_is_forbidden_with_the_role_named(make_rest_backend, rest_backend, tree):
    root, child = tree['root']['uuid'], tree['child']['uuid']
    consumer = new_uuid()
    rest_backend.put_allocations(consumer, alloc_body({root: {'VCPU': 2, 'VGPU': 1}}))
    body = _reshape_body(rest_backend, root, child, consumer, 1)

    operator = make_rest_backend(token='operator:proj', roles='member')
    assert operator.microversion == '1.39'          # GET / needs no role
    with pytest.raises(errors.Forbidden) as info:
        operator.reshape(body)
    exc = info.value
    assert_typed(exc, errors.Forbidden, 403, errors.DEFAULT)
    assert '`service` role' in exc.detail and 'placement:reshaper:reshape' in exc.detail
    assert '`service` role' in str(exc)
    # a member may not even read providers (admin or service only)
    with pytest.raises(errors.Forbidden):
        operator.list_providers()
    # nothing moved
    assert set(rest_backend.get_inventories(root)['inventories']) == {'VCPU', 'VGPU'}


def test_playbook_credentials_may_reshape_on_the_test_server(placement_server, rest_backend, tree):
    """module_auth() (token admin, role admin only) reshapes thanks to the server's policy file."""
    root, child = tree['root']['uuid'], tree['child']['uuid']
    consumer = new_uuid()
    rest_backend.put_allocations(consumer, alloc_body({root: {'VCPU': 1, 'VGPU': 2}}))
    with RestBackend.from_options(placement_server.module_auth()) as backend:
        body = _reshape_body(backend, root, child, consumer, 1)
        body['allocations'][consumer]['allocations'][child]['resources'] = {'VGPU': 2}
        backend.reshape(body)
    assert rest_backend.get_usages(child)['usages'] == {'VGPU': 2}


# -- auth and transport failures ----------------------------------------------------
def test_missing_token_is_unauthorized(placement_server):
    from keystoneauth1 import adapter as ks_adapter
    from keystoneauth1 import session as ks_session

    adapter = ks_adapter.Adapter(session=ks_session.Session(), service_type='placement',
                                 endpoint_override=placement_server.url)
    backend = RestBackend(adapter)              # GET / is open
    with pytest.raises(errors.Unauthorized) as info:
        backend.list_providers()
    assert info.value.status == 401 and 'rejected the credentials' in info.value.detail
    assert info.value.request_id and info.value.request_id.startswith('req-')


def test_unreachable_endpoint_is_service_unavailable_naming_it(monkeypatch):
    monkeypatch.setattr(RestBackend, 'backoff', 0)
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    port = sock.getsockname()[1]
    sock.close()                                 # nothing listens there now
    url = 'http://127.0.0.1:%d' % port
    with pytest.raises(errors.ServiceUnavailable) as info:
        RestBackend.from_options({'auth_type': 'admin_token', 'auth': {'token': 'admin', 'endpoint': url},
                                  'api_timeout': 5})
    assert url in str(info.value)


# -- retries through a fault-injecting front (issue 12, item 5 iii) -----------------------
class FaultyFront(object):
    """A small HTTP front on 127.0.0.1 that forwards to the real Placement, except for the
    requests a rule names: ``(method, path, action, times)`` with action a status such as ``'502'``,
    ``'503'`` or ``'401'`` (answered at once, Placement never sees it), ``'drop'`` (connection closed, never
    forwarded) or ``'drop-after'`` (forwarded, Placement applies it, then the connection is
    closed before the answer: a lost answer).  ``seen`` lists every (method, path, outcome).
    """

    def __init__(self, upstream, rules):
        import http.client
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from urllib.parse import urlsplit

        self.rules = [list(rule) for rule in rules]
        self.seen = []
        front = self
        target = urlsplit(upstream)

        class Handler(BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def log_message(self, fmt, *args):
                pass

            def _handle(self):
                length = int(self.headers.get('Content-Length') or 0)
                body = self.rfile.read(length) if length else None
                path = self.path.split('?')[0]
                action = front._take(self.command, path)
                if action and action.isdigit():
                    front.seen.append((self.command, path, action))
                    payload = b'{"errors": [{"status": %s, "title": "injected"}]}' % action.encode()
                    self.send_response(int(action))
                    self.send_header('Content-Type', 'application/json')
                    self.send_header('Content-Length', str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                if action == 'drop':
                    front.seen.append((self.command, path, 'drop'))
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                conn = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
                headers = dict((k, v) for k, v in self.headers.items() if k.lower() not in ('host', 'connection'))
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                conn.close()
                if action == 'drop-after':
                    front.seen.append((self.command, path, 'drop-after %s' % resp.status))
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                front.seen.append((self.command, path, resp.status))
                self.send_response(resp.status)
                for key, value in resp.getheaders():
                    if key.lower() not in ('connection', 'transfer-encoding', 'content-length'):
                        self.send_header(key, value)
                self.send_header('Content-Length', str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = _handle

        self.httpd = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.httpd.daemon_threads = True
        self.url = 'http://127.0.0.1:%d' % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={'poll_interval': 0.1})
        self.thread.daemon = True
        self.thread.start()

    def _take(self, method, path):
        for rule in self.rules:
            if rule[0] == method and rule[1] == path and rule[3] > 0:
                rule[3] -= 1
                return rule[2]
        return None

    def count(self, method, path):
        return len([s for s in self.seen if s[0] == method and s[1] == path])

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def faulty(placement_server, monkeypatch):
    monkeypatch.setattr(RestBackend, 'backoff', 0.01)
    made = []

    def make(*rules):
        front = FaultyFront(placement_server.url, rules)
        made.append(front)
        return front

    yield make
    for front in made:
        front.close()


def _backend_through(front, logs):
    from keystoneauth1 import adapter as ks_adapter
    from keystoneauth1 import session as ks_session
    from keystoneauth1 import token_endpoint

    sess = ks_session.Session(auth=token_endpoint.Token(front.url, 'admin'), timeout=30)
    adapter = ks_adapter.Adapter(session=sess, service_type='placement', endpoint_override=front.url,
                                 additional_headers={'X-Roles': 'admin,service'})
    return RestBackend(adapter, log=logs.append)


def test_version_discovery_is_retried_and_logged(faulty):
    """GET / 503 twice: openstacksdk's discovery in from_options is retried like any GET."""
    front = faulty(('GET', '/', '503', 2))
    logs = []
    with RestBackend.from_options({'auth_type': 'admin_token', 'auth': {'token': 'admin', 'endpoint': front.url}},
                                  log=logs.append) as backend:
        assert backend.microversion == '1.39'
        assert isinstance(backend.list_providers(), list)
    assert [s[2] for s in front.seen if s[:2] == ('GET', '/')][:2] == ['503', '503']
    assert len(logs) == 2 and all('version discovery' in line and front.url in line for line in logs), logs
    assert 'retry 1 of 3' in logs[0] and 'retry 2 of 3' in logs[1]


def test_version_discovery_retries_are_bounded(faulty):
    front = faulty(('GET', '/', '503', 50))
    logs = []
    with pytest.raises(errors.ServiceUnavailable) as info:
        RestBackend.from_options({'auth_type': 'admin_token', 'auth': {'token': 'admin', 'endpoint': front.url}},
                                 log=logs.append)
    assert front.count('GET', '/') == 4 and len(logs) == 3
    assert 'Placement at %s' % front.url in str(info.value) and 'after 4 attempts' in str(info.value)
    assert 'identity service' not in str(info.value)


def test_negotiation_get_root_is_retried(faulty):
    """Our own GET / (microversion negotiation) on a 502: retried and logged."""
    front = faulty(('GET', '/', '502', 1))
    logs = []
    backend = _backend_through(front, logs)
    assert backend.microversion == '1.39'
    assert [s[2] for s in front.seen] == ['502', 200]
    # a GET's delay is keystoneauth's own (0.5 s first) whenever the backend has a backoff
    assert logs == ['GET /: Placement answered 502; retry 1 of 3 in 0.50 s']


def test_create_with_uuid_whose_answer_was_lost_is_read_back(faulty, rest_backend, unique_name):
    root = rest_backend.create_provider(unique_name('cn'))
    front = faulty(('POST', '/resource_providers', 'drop-after', 1))
    logs = []
    backend = _backend_through(front, logs)
    name, rp = unique_name('cn_pci'), new_uuid()
    made = backend.create_provider(name, uuid=rp, parent_provider_uuid=root['uuid'])
    assert made['uuid'] == rp and made['name'] == name and made['parent_provider_uuid'] == root['uuid']
    assert set(made) == PROVIDER_KEYS
    # the first POST created it (answer lost), the retry got Placement's 409, the read-back found it
    assert [s[2] for s in front.seen if s[0] == 'POST'] == ['drop-after 200', 409]
    assert [p['uuid'] for p in rest_backend.list_providers(name=name)] == [rp]
    assert any('could not be reached' in line and 'retry 1 of 3' in line for line in logs), logs
    assert any('was created by an attempt whose answer was lost' in line for line in logs), logs


def test_create_with_uuid_is_retried_after_502(faulty, rest_backend, unique_name):
    front = faulty(('POST', '/resource_providers', '502', 2))
    logs = []
    backend = _backend_through(front, logs)
    name, rp = unique_name('cn'), new_uuid()
    made = backend.create_provider(name, uuid=rp)
    assert made['uuid'] == rp and made['generation'] == 0
    assert [s[2] for s in front.seen if s[0] == 'POST'] == ['502', '502', 200]
    assert len(logs) == 2


def test_create_without_uuid_is_never_retried(faulty, rest_backend, unique_name):
    """Placement would pick a new uuid on a retry: a lost answer is reported, not retried."""
    front = faulty(('POST', '/resource_providers', 'drop-after', 1))
    backend = _backend_through(front, [])
    name = unique_name('cn')
    with pytest.raises(errors.ServiceUnavailable) as info:
        backend.create_provider(name)
    assert front.count('POST', '/resource_providers') == 1
    assert 'may or may not have been applied' in str(info.value)
    assert len(rest_backend.list_providers(name=name)) == 1       # it was created: why no retry


def test_retry_conflict_with_another_provider_is_not_taken_for_ours(faulty, rest_backend, unique_name):
    rp = new_uuid()
    rest_backend.create_provider(unique_name('someone-else'), uuid=rp)
    front = faulty(('POST', '/resource_providers', '502', 1))
    backend = _backend_through(front, [])
    with pytest.raises(errors.Conflict) as info:
        backend.create_provider(unique_name('mine'), uuid=rp)
    assert info.value.status == 409 and info.value.code == errors.DUPLICATE_NAME


def test_first_attempt_conflict_is_never_read_back(rest_backend, unique_name):
    name, rp = unique_name('cn'), new_uuid()
    rest_backend.create_provider(name, uuid=rp)
    with pytest.raises(errors.Conflict):
        rest_backend.create_provider(name, uuid=rp)


# -- what a failed call says (issue 26): the status Placement answered, or that none came ------
def _closed_port_url():
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    port = sock.getsockname()[1]
    sock.close()                                 # nothing listens there now
    return 'http://127.0.0.1:%d' % port


def test_refused_connection_says_refused_not_503(monkeypatch):
    """A refused connection was reported as "503 Service Unavailable": no HTTP answer came."""
    from keystoneauth1 import adapter as ks_adapter
    from keystoneauth1 import session as ks_session

    monkeypatch.setattr(RestBackend, 'backoff', 0)
    url = _closed_port_url()
    with pytest.raises(errors.NoAnswer) as info:
        RestBackend.from_options({'auth_type': 'admin_token', 'auth': {'token': 'admin', 'endpoint': url}})
    text = str(info.value)
    assert text.startswith('Placement at %s could not be reached: the connection was refused (GET /, version '
                           'discovery) after 4 attempts' % url), text
    assert '503' not in text and info.value.status == 0
    # a call of ours (the negotiation's GET /) meets the same
    adapter = ks_adapter.Adapter(session=ks_session.Session(), service_type='placement', endpoint_override=url)
    with pytest.raises(errors.NoAnswer) as info:
        RestBackend(adapter)
    text = str(info.value)
    assert text.startswith('Placement at %s could not be reached: the connection was refused (GET /)' % url), text
    assert '503' not in text
    assert isinstance(info.value, errors.ServiceUnavailable)      # still retried like one


def test_401_on_version_discovery_says_401(faulty):
    """A 401 on GET / read "could not be reached or did not answer version discovery"."""
    front = faulty(('GET', '/', '401', 50))
    logs = []
    with pytest.raises(errors.Unauthorized) as info:
        RestBackend.from_options({'auth_type': 'admin_token', 'auth': {'token': 'admin', 'endpoint': front.url}},
                                 log=logs.append)
    text = str(info.value)
    assert text.startswith('401 Unauthorized') and 'answered 401 Unauthorized to GET / (version discovery)' in text, text
    assert 'could not be reached' not in text and front.url in text
    assert logs == []                            # a 401 is not retried (503s are: 4 attempts)
    assert front.count('GET', '/') <= 2          # keystoneauth's own discovery asks at most twice


def test_503_on_every_reshape_says_503(faulty, tmp_path, unique_name):
    """503 on every POST /reshaper ended as "409 ... the answer to POST /reshaper was lost"."""
    from test_reshaper_support import flat_gpu_node, gpu_report
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper

    front = faulty(('POST', '/reshaper', '503', 50))
    logs = []
    backend = _backend_through(front, logs)
    name = unique_name('cn')
    report = gpu_report(tmp_path / 'host', name)
    root = flat_gpu_node(backend, name, report)['root']
    with pytest.raises(errors.PlacementError) as info:
        reshaper.reshape_node(backend, name, report, snapshot_dir=str(tmp_path / 's'), settle_delays=(0.01,),
                              backoff=0.01)
    text = str(info.value)
    assert info.value.status == 503 and text.startswith('503 '), text
    assert 'POST /reshaper failed with 503' in text and 'was lost' not in text and '409' not in text, text
    assert 'a re-read showed it was not applied' in text and 'Nothing was reshaped' in text, text
    assert front.count('POST', '/reshaper') == 5
    assert 'VGPU' in backend.get_inventories(root)['inventories']
