# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nova.py, the os-migrations reader, as an HTTP client: a tiny server on 127.0.0.1 answers
``GET /v2.1/os-migrations`` the way nova 34's MigrationsController does (host filter on the
source/dest compute, newest first, ``limit``/``marker`` paging with a ``migrations_links``
next link, uuid only at 2.59+), and fails on request.  nova's REAL API is exercised by the
nova oracle stage (tests/nova_oracle/test_nova_migrations.py).  Then the reshape module's
options nova_migrations / compute_host / migrations on an embedded placement."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import threading

try:
    from http.server import BaseHTTPRequestHandler, HTTPServer
    from urllib.parse import parse_qs, urlencode, urlparse
except ImportError:  # pragma: no cover
    pass

import pytest
from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import session as ks_session

from ansible_collections.placement.upgrade.plugins.module_utils._placement import errors
from ansible_collections.placement.upgrade.plugins.module_utils._placement.nova import compute as nova
from ansible_collections.placement.upgrade.plugins.modules import reshape

from module_runner import run_module_main
from test_reshaper_support import flat_gpu_node, gpu_report

NODE = 'compute-01'


def mig(n, status='running', source=NODE, dest='compute-02', kind='live-migration', source_compute=None,
        dest_compute=None):
    return {'id': n, 'uuid': '00000000-0000-4000-8000-%012d' % n, 'instance_uuid': '11111111-0000-4000-8000-%012d' % n,
            'status': status, 'migration_type': kind, 'source_node': source, 'dest_node': dest,
            'source_compute': source if source_compute is None else source_compute,
            'dest_compute': dest if dest_compute is None else dest_compute, 'dest_host': '192.0.2.2',
            'old_instance_type_id': 1, 'new_instance_type_id': 1, 'created_at': '2026-01-01T00:00:%02d.000000' % n,
            'updated_at': None, 'links': [{'rel': 'self', 'href': 'x'}]}


class FakeNova(object):
    """The os-migrations of nova 34, in memory; ``fail`` holds statuses answered first."""

    def __init__(self, records, max_limit=1000, links=True):
        self.records = list(records)
        self.max_limit = max_limit
        self.links = links
        self.fail = []
        self.drop = 0
        self.requests = []
        self.hide_hosts = False
        self.httpd = HTTPServer(('127.0.0.1', 0), self._handler())
        self.url = 'http://127.0.0.1:%d/v2.1' % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={'poll_interval': 0.05})
        self.thread.daemon = True
        self.thread.start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def answer(self, path, query, headers):
        base = self.url[:-len('/v2.1')]
        version = {'id': 'v2.1', 'status': 'CURRENT', 'version': '2.100', 'min_version': '2.1',
                   'links': [{'rel': 'self', 'href': base + '/v2.1/'}]}
        if path.rstrip('/') == '/v2.1':                     # version discovery (openstacksdk)
            return 200, {'version': version}
        if path == '/':
            return 300, {'versions': [version]}
        self.requests.append({'path': path, 'query': query, 'headers': headers})
        if self.fail:
            status = self.fail.pop(0)
            kind = {401: 'unauthorized', 403: 'forbidden', 404: 'itemNotFound'}.get(status, 'computeFault')
            return status, {kind: {'code': status, 'message': 'scripted %d' % status}}
        if path.rstrip('/') != '/v2.1/os-migrations':
            return 404, {'itemNotFound': {'code': 404, 'message': 'The resource could not be found.'}}
        version = headers.get('openstack-api-version') or ''
        new = version == 'compute 2.59'
        rows = sorted(self.records, key=lambda r: (r['created_at'], r['id']), reverse=True)
        if 'host' in query:
            rows = [r for r in rows if query['host'] in (r['source_compute'], r['dest_compute'])]
        if not new:
            return 200, {'migrations': [dict((k, v) for k, v in r.items() if k != 'uuid') for r in rows]}
        if 'marker' in query:
            at = [i for i, r in enumerate(rows) if r['uuid'] == query['marker']]
            if not at:
                return 400, {'badRequest': {'code': 400, 'message': 'Marker %s could not be found.' % query['marker']}}
            rows = rows[at[0] + 1:]
        limit = min(int(query.get('limit', self.max_limit)), self.max_limit)
        page = [dict(r) for r in rows[:limit]]
        if self.hide_hosts:
            for r in page:
                r.update(source_compute=None, dest_compute=None, source_node=None, dest_node=None)
        body = {'migrations': page}
        if self.links and page and len(page) == limit:
            params = dict(query)
            params['marker'] = page[-1]['uuid']
            body['migrations_links'] = [{'rel': 'next', 'href': 'http://nova.invalid/v2.1/os-migrations?'
                                         + urlencode(sorted(params.items()))}]
        return 200, body

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                if fake.drop:
                    fake.drop -= 1
                    fake.requests.append({'path': 'dropped'})
                    self.connection.close()
                    return
                url = urlparse(self.path)
                query = dict((k, v[-1]) for k, v in parse_qs(url.query).items())
                headers = dict((k.lower(), v) for k, v in self.headers.items())
                status, body = fake.answer(url.path, query, headers)
                data = json.dumps(body).encode('utf-8')
                self.send_response(status)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(data)))
                self.send_header('x-openstack-request-id', 'req-fake-%d' % len(fake.requests))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        return Handler


@pytest.fixture
def fake_nova():
    servers = []

    def make(records, **kwargs):
        server = FakeNova(records, **kwargs)
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.stop()


def adapter_for(url):
    return ks_adapter.Adapter(session=ks_session.Session(timeout=10), service_type='compute',
                              endpoint_override=url)


def read(server, **kwargs):
    kwargs.setdefault('backoff', 0)
    return nova.in_progress_migrations(adapter_for(server.url), **kwargs)


# -- the HTTP client -----------------------------------------------------------------------
def test_sends_the_microversion_and_the_host_filter_and_keeps_in_progress_records(fake_nova):
    server = fake_nova([mig(1), mig(2, status='confirmed'), mig(3, status='finished', kind='resize'),
                        mig(4, source='compute-03', dest='compute-04'), mig(5, status='error'),
                        mig(6, status='pre-migrating', source='compute-02', dest=NODE)])
    got = read(server, host=NODE, node=NODE)
    assert [r['id'] for r in got] == [6, 3, 1]               # newest first, as nova sorts
    first = server.requests[0]
    assert first['headers']['openstack-api-version'] == 'compute 2.59'
    assert first['headers']['x-openstack-nova-api-version'] == '2.59'
    assert first['query'] == {'host': NODE}
    assert set(got[0]) == set(nova.RECORD_KEYS)
    assert 'links' not in got[0] and 'old_instance_type_id' not in got[0]
    assert got[1] == dict((k, mig(3, status='finished', kind='resize')[k]) for k in nova.RECORD_KEYS)


@pytest.mark.parametrize('status', ['queued', 'preparing', 'running', 'post-migrating', 'migrating',
                                    'pre-migrating', 'post-migrating', 'finished', 'confirming',
                                    'reverting', 'accepted', 'Running'])
def test_every_status_nova_uses_for_a_move_in_flight_is_kept(fake_nova, status):
    assert len(read(fake_nova([mig(1, status=status)]), host=NODE)) == 1


@pytest.mark.parametrize('status', ['confirmed', 'reverted', 'error', 'failed', 'completed', 'cancelled',
                                    'done', 'Completed'])
def test_every_status_of_a_move_that_is_over_is_left_out(fake_nova, status):
    assert read(fake_nova([mig(1, status=status)]), host=NODE) == []


def test_node_filter_without_host_and_a_service_host_that_differs_from_the_node(fake_nova):
    server = fake_nova([mig(1, source='cn1.example.net', source_compute='cn1'),    # this node
                        mig(2, source='cn9', dest='cn1.example.net', source_compute='cn9',
                            dest_compute='cn1'),                                     # dest node
                        mig(3, source='cn7', source_compute='cn1'),                  # same service host
                        mig(4, source='cn5', dest='cn6')])
    assert [r['id'] for r in read(server, node='cn1.example.net')] == [2, 1]
    assert server.requests[0]['query'] == {}
    assert [r['id'] for r in read(server, node='cn1.example.net', host='cn1')] == [3, 2, 1]
    assert server.requests[-1]['query'] == {'host': 'cn1'}


def test_pages_are_followed_through_the_next_link(fake_nova):
    server = fake_nova([mig(n) for n in range(1, 8)], max_limit=3)
    got = read(server, host=NODE)
    assert [r['id'] for r in got] == [7, 6, 5, 4, 3, 2, 1]
    queries = [r['query'] for r in server.requests]
    assert queries == [{'host': NODE},
                       {'host': NODE, 'marker': mig(5)['uuid']},
                       {'host': NODE, 'marker': mig(2)['uuid']}]


def test_pages_by_limit_and_marker_when_nova_sends_no_link(fake_nova):
    server = fake_nova([mig(n) for n in range(1, 6)], links=False)
    got = read(server, host=NODE, limit=2)
    assert [r['id'] for r in got] == [5, 4, 3, 2, 1]
    # openstacksdk's rule without a link: a page of ``limit`` asks for the next one, any other page too
    # (so the last, short page is followed by one more request, answered with no records)
    assert [r['query'].get('marker') for r in server.requests] == [None, mig(4)['uuid'], mig(2)['uuid'],
                                                                   mig(1)['uuid']]
    assert all(r['query']['limit'] == '2' for r in server.requests)


def test_a_full_last_page_ends_on_the_empty_one(fake_nova):
    server = fake_nova([mig(n) for n in range(1, 5)], max_limit=2)
    assert [r['id'] for r in read(server, host=NODE)] == [4, 3, 2, 1]
    assert len(server.requests) == 3


def test_5xx_and_connection_failures_are_retried_and_logged(fake_nova):
    server = fake_nova([mig(1)])
    server.fail = [503, 500]
    server.drop = 0
    lines = []
    assert len(read(server, host=NODE, log=lines.append)) == 1
    assert len(server.requests) == 3
    assert len(lines) == 2 and 'on attempt 1 of 4, retrying' in lines[0] and server.url in lines[0]
    # the retries are keystoneauth's: its warning names the status (nova's message is in the error
    # a last failure raises: test_5xx_gives_up_after_the_retries)
    assert 'answered 503' in lines[0] and 'answered 500' in lines[1] and 'on attempt 2 of 4' in lines[1]


def test_a_dropped_connection_is_retried(fake_nova):
    server = fake_nova([mig(1)])
    server.drop = 1
    lines = []
    assert len(read(server, host=NODE, log=lines.append)) == 1
    assert lines and 'retrying' in lines[0]


def test_5xx_gives_up_after_the_retries(fake_nova):
    server = fake_nova([mig(1)])
    server.fail = [502] * 10
    with pytest.raises(errors.ServiceUnavailable) as info:
        read(server, host=NODE, retries=2)
    assert len(server.requests) == 3
    assert server.url in info.value.detail and 'gave up after 3 attempts' in info.value.detail
    assert info.value.request_id == 'req-fake-3'


@pytest.mark.parametrize('status,cls,words', [
    (401, errors.Unauthorized, ['rejected the credentials', 'admin']),
    (403, errors.Forbidden, ['refused', '`admin` role', 'os_compute_api:os-migrations:index:host',
                             'nova_migrations=never']),
    (404, errors.NotFound, ['has no GET /os-migrations', '/v2.1']),
    (406, errors.UnsupportedVersion, ['2.59']),
    (400, errors.PlacementError, ['answered 400']),
])
def test_errors_are_typed_and_name_novas_endpoint(fake_nova, status, cls, words):
    server = fake_nova([mig(1)])
    server.fail = [status]
    with pytest.raises(cls) as info:
        read(server, host=NODE)
    assert len(server.requests) == 1                         # never retried
    assert server.url in info.value.detail and 'scripted %d' % status in info.value.detail
    for word in words:
        assert word in info.value.detail
    assert info.value.status == status


def test_a_wrong_endpoint_is_a_404_naming_it(fake_nova):
    server = fake_nova([mig(1)])
    with pytest.raises(errors.NotFound) as info:
        nova.in_progress_migrations(adapter_for(server.url.replace('/v2.1', '/compute')), backoff=0)
    assert '/compute' in info.value.detail


def test_unreachable_nova_is_service_unavailable_after_retries():
    server = FakeNova([])
    url = server.url
    server.stop()                                            # nothing listens there any more
    lines = []
    with pytest.raises(errors.ServiceUnavailable) as info:
        nova.in_progress_migrations(adapter_for(url), retries=1, backoff=0, log=lines.append)
    assert 'could not be reached' in info.value.detail and url in info.value.detail
    assert len(lines) == 1


def test_an_unreachable_identity_service_is_named_not_nova(fake_nova):
    """Password auth against a Keystone that is down: the message names Keystone at its
    auth_url, not nova (which was never contacted)."""
    from keystoneauth1.identity import v3
    novas = fake_nova([])
    closed = FakeNova([])
    auth_url = closed.url + '/v3'
    closed.stop()                                            # nothing listens there any more
    auth = v3.Password(auth_url=auth_url, username='placement', password='pw', project_name='service',
                       user_domain_name='Default', project_domain_name='Default')
    adapter = ks_adapter.Adapter(session=ks_session.Session(auth=auth), service_type='compute',
                                 endpoint_override=novas.url)
    with pytest.raises(errors.ServiceUnavailable) as info:
        nova.in_progress_migrations(adapter, retries=0, backoff=0)
    assert 'The identity service (Keystone) at %s could not be reached' % auth_url in info.value.detail
    assert 'nova at' not in info.value.detail
    assert info.value.code == 'placement_upgrade.identity'
    assert novas.requests == []                              # nova was never asked


def test_records_without_hosts_mean_the_credentials_lack_the_admin_role(fake_nova):
    server = fake_nova([mig(1)])
    server.hide_hosts = True
    with pytest.raises(errors.Forbidden) as info:
        read(server)
    assert 'without its hosts' in info.value.detail and '`admin` role' in info.value.detail


def test_a_nova_that_ignores_the_microversion_is_refused():
    class OldNova(FakeNova):
        def answer(self, path, query, headers):
            headers = dict(headers, **{'openstack-api-version': 'compute 2.1'})
            return FakeNova.answer(self, path, query, headers)
    server = OldNova([mig(1)])
    try:
        with pytest.raises(errors.UnsupportedVersion):
            read(server)
    finally:
        server.stop()


def test_a_body_that_is_not_a_migration_list_is_an_error(fake_nova):
    class Odd(FakeNova):
        def answer(self, path, query, headers):
            return 200, {'servers': []}
    server = Odd([])
    try:
        with pytest.raises(errors.PlacementError) as info:
            read(server)
        assert 'without a migrations list' in info.value.detail
    finally:
        server.stop()


# -- which adapter ---------------------------------------------------------------------------
class _Backend(object):
    kind = 'rest'
    endpoint = 'http://placement.test/'

    def __init__(self, connection=None, session=None):
        self.connection = connection
        self.session = session


def test_no_compute_adapter_for_the_embedded_backend(embedded_backend):
    assert nova.compute_adapter(embedded_backend) is None
    assert nova.compute_adapter(embedded_backend, endpoint_override='http://127.0.0.1:9/v2.1') is None


def test_no_compute_adapter_for_a_backend_built_from_an_adapter_unless_an_endpoint_is_given():
    sess = ks_session.Session()
    assert nova.compute_adapter(_Backend(session=sess)) is None
    got = nova.compute_adapter(_Backend(session=sess), endpoint_override='http://127.0.0.1:9/v2.1',
                               additional_headers={'X-Roles': 'admin'})
    assert got.session is sess and got.get_endpoint() == 'http://127.0.0.1:9/v2.1'
    assert got.additional_headers == {'X-Roles': 'admin'}


def test_a_catalog_without_nova_is_no_compute_adapter():
    from keystoneauth1 import exceptions as ks_exc
    from openstack import exceptions as sdk_exc

    class Conn(object):
        def __init__(self, compute):
            self._compute = compute

        @property
        def compute(self):
            if isinstance(self._compute, Exception):
                raise self._compute
            return self._compute

    assert nova.compute_adapter(_Backend(Conn(ks_exc.EndpointNotFound('no compute')))) is None
    assert nova.compute_adapter(_Backend(Conn(sdk_exc.NotSupported('no versions')))) is None
    assert nova.compute_adapter(_Backend(Conn(object()))) is None              # openstacksdk's shim
    placement_itself = adapter_for('http://placement.test')
    assert nova.compute_adapter(_Backend(Conn(placement_itself))) is None
    with pytest.raises(errors.ServiceUnavailable) as info:
        nova.compute_adapter(_Backend(Conn(ks_exc.DiscoveryFailure('down'))))
    assert 'version discovery' in info.value.detail
    real = adapter_for('http://nova.test/v2.1')
    assert nova.compute_adapter(_Backend(Conn(real))) is real


@pytest.mark.real
def test_an_openstacksdk_connection_with_a_compute_endpoint(placement_server, fake_nova):
    """The REST backend built from module options: admin_token resolves every service to
    Placement's endpoint (no nova); a compute_endpoint_override in the cloud dict is nova."""
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.rest import RestBackend

    backend = RestBackend.from_options(placement_server.module_auth())
    try:
        assert nova.compute_adapter(backend) is None
        assert nova.node_migrations(backend, NODE)['source'] == 'none'
    finally:
        backend.close()
    server = fake_nova([mig(1), mig(2, status='reverted')])
    cloud = dict(placement_server.module_auth(), compute_endpoint_override=server.url, compute_api_version='2')
    backend = RestBackend.from_options({'cloud': cloud})
    try:
        proxy = nova.compute_adapter(backend)
        assert proxy is not None and proxy.get_endpoint().rstrip('/') == server.url
        found = nova.node_migrations(backend, NODE, mode='always')
        assert found['source'] == 'nova' and found['count'] == 1 and found['records'][0]['id'] == 1
    finally:
        backend.close()


# -- node_migrations ---------------------------------------------------------------------------
def test_node_migrations_modes_on_the_embedded_backend(embedded_backend):
    lines = []
    assert nova.node_migrations(embedded_backend, NODE, log=lines.append) == {
        'source': 'none', 'count': 0, 'records': []}
    assert 'embedded backend' in lines[0]
    assert nova.node_migrations(embedded_backend, NODE, mode='never')['source'] == 'none'
    with pytest.raises(errors.ConfigurationError) as info:
        nova.node_migrations(embedded_backend, NODE, mode='always')
    assert 'nova_migrations=always' in info.value.detail and 'embedded backend' in info.value.detail
    with pytest.raises(errors.ConfigurationError):
        nova.node_migrations(embedded_backend, NODE, mode='sometimes')


def test_given_records_are_filtered_to_this_node_and_in_flight(embedded_backend):
    given = [mig(1), mig(2, status='confirmed'), mig(3, source='cn8', dest='cn9'),
             mig(4, source='cn8', dest='cn9', dest_compute='svc-01')]
    found = nova.node_migrations(embedded_backend, NODE, mode='always', given=given)
    assert found['source'] == 'given' and [r['id'] for r in found['records']] == [1]
    found = nova.node_migrations(embedded_backend, NODE, host='svc-01', given=given)
    assert [r['id'] for r in found['records']] == [1, 4]
    assert nova.node_migrations(embedded_backend, NODE, given=[])['source'] == 'given'
    with pytest.raises(errors.ConfigurationError):
        nova.node_migrations(embedded_backend, NODE, given=['not a record'])


def test_node_migrations_asks_nova_with_the_host(fake_nova, monkeypatch):
    server = fake_nova([mig(1), mig(2, source='cn8', dest='cn9')])
    backend = _Backend(session=ks_session.Session(timeout=10))
    found = nova.node_migrations(backend, NODE, endpoint_override=server.url)
    assert found == {'source': 'nova', 'count': 1, 'records': [
        dict((k, mig(1)[k]) for k in nova.RECORD_KEYS)]}
    assert server.requests[0]['query'] == {'host': NODE}
    nova.node_migrations(backend, NODE, host='svc-01', endpoint_override=server.url)
    assert server.requests[-1]['query'] == {'host': 'svc-01'}


# -- the reshape module ----------------------------------------------------------------------
@pytest.fixture
def env(tmp_path, embedded_backend):
    db = str(tmp_path / 'placement.db')
    report = gpu_report(tmp_path / 'host', NODE)
    node = flat_gpu_node(embedded_backend, NODE, report)
    node.update(db=db, report=report, snapdir=str(tmp_path / 'snaps'))
    return node


@pytest.fixture
def run(capsys, env):
    def call(args, check=True):
        args = dict(args)
        args.setdefault('embedded_db', env['db'])
        args.setdefault('root_provider', NODE)
        args.setdefault('devices', env['report'])
        args.setdefault('snapshot_dir', env['snapdir'])
        return run_module_main(reshape.main, args, capsys, check=check)
    return call


def test_module_auto_on_the_embedded_backend_does_not_ask(run):
    rc, res = run({})
    assert rc == 0 and res['status'] == 'reshaped'
    assert res['migrations'] == {'source': 'none', 'count': 0, 'records': []}
    assert any('nova not asked' in line for line in res['log'])


def test_module_always_without_a_compute_endpoint_fails_clearly(run):
    rc, res = run({'nova_migrations': 'always'})
    assert rc == 1 and res['failed'] is True
    assert 'nova_migrations=always' in res['msg'] and 'exception' not in res


def test_module_given_migration_defers_the_node_by_uuid_and_instance(run, env):
    # the migration record's uuid holds this node's source allocations, as nova's does
    consumer = sorted(env['consumers'])[0]
    record = dict(mig(1, status='finished', kind='resize'), uuid=consumer)
    over = mig(2, status='confirmed')
    rc, res = run({'migrations': [record, over], 'nova_migrations': 'never'})
    assert rc == 0 and res['status'] == 'deferred' and res['changed'] is False
    assert res['migrations']['source'] == 'given' and res['migrations']['count'] == 1
    assert res['migrations']['records'][0]['uuid'] == consumer
    assert consumer in res['deferred_reason'] and record['instance_uuid'] in res['deferred_reason']


def test_module_asks_nova_and_defers_on_a_record_naming_the_node(run, fake_nova, monkeypatch):
    server = fake_nova([mig(7, status='running', source='compute-02', dest=NODE)])
    real = nova.compute_adapter
    monkeypatch.setattr(nova, 'compute_adapter',
                        lambda backend, **kw: adapter_for(server.url) if backend.kind == 'embedded'
                        else real(backend, **kw))
    rc, res = run({'compute_host': 'svc-01'})
    assert rc == 0 and res['status'] == 'reshaped'
    assert res['migrations']['source'] == 'nova' and res['migrations']['count'] == 0
    assert server.requests[0]['query'] == {'host': 'svc-01'}        # no record for that host
    rc, res = run({})
    assert res['status'] == 'deferred' and res['migrations']['count'] == 1
    assert mig(7)['uuid'] in res['deferred_reason']
    # auto: credentials nova refuses still roll, on what Placement and the host's domains show
    server.fail = [403]
    rc, res = run({}, check=True)
    assert rc == 0 and res['migrations']['source'] == 'none', res
    assert '`admin` role' in res['migrations']['error']
    # always: nova must answer
    server.fail = [403]
    rc, res = run({'nova_migrations': 'always'})
    assert rc == 1 and '`admin` role' in res['msg'] and res['error']['status'] == 403
    rc, res = run({'nova_migrations': 'never'})
    assert rc == 0 and res['status'] == 'reshaped' and res['migrations']['source'] == 'none'
