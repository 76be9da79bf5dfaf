# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""RestBackend without a network: a fake keystoneauth Adapter answers scripted responses."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import sys
import types

try:
    from urllib.parse import urlsplit
except ImportError:  # pragma: no cover - Python 2
    from urlparse import urlsplit

import pytest
import requests
from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import session as ks_session

from ansible_collections.placement.upgrade.plugins.module_utils._placement import errors
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.rest import RestBackend

ENDPOINT = 'https://placement.example.test/placement'


class FakeResponse(object):
    def __init__(self, status, body=None, headers=None, text=None, reason=None):
        self.status_code = status
        self.headers = dict(headers or {})
        self.reason = reason
        if text is not None:
            self.text = text
        elif body is not None:
            self.text = json.dumps(body)
        else:
            self.text = ''
        self.content = self.text.encode('utf-8')

    def json(self):
        return json.loads(self.text)


def root_doc(max_version='1.39', min_version='1.0'):
    return FakeResponse(200, {'versions': [{'id': 'v1.0', 'max_version': max_version,
                                            'min_version': min_version, 'status': 'CURRENT',
                                            'links': [{'rel': 'self', 'href': ''}]}]})


def placement_error(status, code, detail, request_id='req-body-1', title=None, headers=None):
    explanation = {404: 'The resource could not be found.',
                   409: 'There was a conflict when trying to complete your request.',
                   400: 'The server could not comply with the request since it is either '
                        'malformed or otherwise incorrect.',
                   403: 'Access was denied to this resource.'}.get(status, '')
    err = {'status': status, 'title': title or 'Error', 'code': code,
           'detail': '%s\n\n %s  ' % (explanation, detail)}
    if request_id:
        err['request_id'] = request_id
    return FakeResponse(status, {'errors': [err]}, headers=headers)


class _Scripted(requests.adapters.BaseAdapter):
    """requests' transport under a REAL keystoneauth Session: each send answers from the script."""

    def __init__(self, fake):
        requests.adapters.BaseAdapter.__init__(self)
        self.fake = fake

    def send(self, request, **_kwargs):
        url = urlsplit(request.url)
        path = url.path[len(urlsplit(ENDPOINT).path):] or '/'
        method = request.method
        self.fake.calls.append((method, path, self.fake.sending))
        answers = self.fake.script.get((method, path))
        if not answers:
            raise AssertionError('unexpected call %s %s' % (method, path))
        answer = answers.pop(0) if len(answers) > 1 else answers[0]
        # keystoneauth's own errors come from what requests raises
        if isinstance(answer, ks_exc.ConnectTimeout):
            raise requests.exceptions.Timeout(str(answer))
        if isinstance(answer, ks_exc.ConnectFailure):
            raise requests.exceptions.ConnectionError(str(answer))
        if isinstance(answer, Exception):
            raise answer
        resp = requests.Response()
        resp.status_code = answer.status_code
        resp.headers = requests.structures.CaseInsensitiveDict(answer.headers)
        resp.reason = answer.reason
        resp._content = answer.content
        resp.encoding = 'utf-8'
        resp.url = request.url
        resp.request = request
        return resp

    def close(self):
        pass


class FakeAdapter(object):
    """Answers (method, path) from a script: a list of responses or exceptions per key.

    Each call goes through a real keystoneauth Adapter and Session (its retries, when the backend
    asks for them, are keystoneauth's); each request it sends is one entry of ``calls``, with the
    arguments the backend gave the call.
    """

    def __init__(self, root=None, script=None):
        self.calls = []
        self.sending = {}
        self.script = {('GET', '/'): [root or root_doc()]}
        for key, answers in (script or {}).items():
            self.script[key] = list(answers)
        http = requests.Session()
        http.mount('https://', _Scripted(self))
        self._adapter = ks_adapter.Adapter(session=ks_session.Session(session=http), service_type='placement',
                                           endpoint_override=ENDPOINT)

    def get_endpoint(self):
        return ENDPOINT

    def request(self, url, method, **kwargs):
        self.sending = dict(kwargs)
        return self._adapter.request(url, method, **kwargs)

    def count(self, method, url):
        return len([c for c in self.calls if c[0] == method and c[1] == url])


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch):
    monkeypatch.setattr(RestBackend, 'backoff', 0)


# -- microversion negotiation -------------------------------------------------
def test_refuses_server_below_1_30_naming_both_versions():
    with pytest.raises(errors.UnsupportedVersion) as info:
        RestBackend(FakeAdapter(root=root_doc('1.29')))
    text = str(info.value)
    assert '1.29' in text and '1.30' in text and ENDPOINT in text
    assert info.value.status == 406


def test_refuses_server_whose_minimum_is_beyond_what_we_know():
    with pytest.raises(errors.UnsupportedVersion) as info:
        RestBackend(FakeAdapter(root=root_doc('1.50', min_version='1.40')))
    assert '1.40' in str(info.value) and '1.39' in str(info.value)


def test_refuses_unparseable_root_document():
    with pytest.raises(errors.UnsupportedVersion):
        RestBackend(FakeAdapter(root=FakeResponse(200, {'nothing': 'here'})))


@pytest.mark.parametrize('server_max, expected', [('1.30', '1.30'), ('1.36', '1.36'),
                                                  ('1.39', '1.39'), ('1.45', '1.39')])
def test_uses_min_of_server_max_and_1_39_on_every_call(server_max, expected):
    adapter = FakeAdapter(root=root_doc(server_max), script={
        ('GET', '/resource_providers'): [FakeResponse(200, {'resource_providers': []})],
        ('POST', '/reshaper'): [FakeResponse(204, headers={'x-openstack-request-id': 'req-204'})],
    })
    backend = RestBackend(adapter)
    assert backend.microversion == expected
    assert backend.list_providers() == []
    # Placement's answer, with its request id (the evidence a failed verification cites: issue 46)
    assert backend.reshape({'inventories': {}, 'allocations': {}}) == {'status': 204, 'request_id': 'req-204'}
    sent = [c for c in adapter.calls if c[1] != '/']
    # a reshape naming no consumer type goes at 1.37, where Placement keeps each consumer's type
    assert [c[2]['microversion'] for c in sent] == [expected, min(expected, '1.37')]
    assert all(c[2]['raise_exc'] is False for c in adapter.calls)


# -- error parsing ----------------------------------------------------------------
def backend_with(key, *answers):
    return RestBackend(FakeAdapter(script={key: list(answers)}))


def backend_and_adapter(key, *answers):
    adapter = FakeAdapter(script={key: list(answers)})
    return RestBackend(adapter), adapter


def test_concurrent_update_is_typed_with_code_detail_and_request_id():
    backend = backend_with(
        ('PUT', '/resource_providers/rp1/inventories'),
        placement_error(409, errors.CONCURRENT_UPDATE,
                        'resource provider generation conflict', request_id='req-abc'))
    with pytest.raises(errors.ConcurrentUpdate) as info:
        backend.set_inventories('rp1', 3, {'VGPU': {'total': 1}})
    exc = info.value
    assert (exc.status, exc.code, exc.request_id) == (409, errors.CONCURRENT_UPDATE, 'req-abc')
    assert exc.detail == 'resource provider generation conflict'
    assert (exc.method, exc.path) == ('PUT', '/resource_providers/rp1/inventories')
    assert str(exc).startswith('409 ')


@pytest.mark.parametrize('header', ['x-openstack-request-id', 'OpenStack-Request-ID'])
def test_request_id_from_header_when_body_has_none(header):
    backend = backend_with(('GET', '/resource_providers/rp1'),
                           placement_error(404, errors.DEFAULT, 'No resource provider with uuid rp1 found',
                                           request_id=None, headers={header: 'req-hdr'}))
    with pytest.raises(errors.NotFound) as info:
        backend.get_provider('rp1')
    assert info.value.request_id == 'req-hdr'
    assert info.value.detail == 'No resource provider with uuid rp1 found'


@pytest.mark.parametrize('code, cls', [
    (errors.DEFAULT, errors.CapacityExceeded),
    (errors.INVENTORY_INUSE, errors.InventoryInUse),
    (errors.DUPLICATE_NAME, errors.DuplicateName),
    (errors.PROVIDER_IN_USE, errors.ProviderInUse),
    (errors.PROVIDER_CANNOT_DELETE_PARENT, errors.CannotDeleteParent),
])
def test_409_codes_map_to_their_types(code, cls):
    backend = backend_with(('POST', '/allocations'), placement_error(409, code, 'nope'))
    with pytest.raises(cls) as info:
        backend.post_allocations({})
    assert info.value.code == code


def test_401_is_a_clear_auth_error():
    backend = backend_with(('GET', '/traits'), FakeResponse(401, text='Unauthorized'))
    with pytest.raises(errors.Unauthorized) as info:
        backend.list_traits()
    assert info.value.status == 401
    assert 'rejected the credentials' in info.value.detail and ENDPOINT in info.value.detail


def test_403_on_reshaper_names_the_service_role():
    backend = backend_with(('POST', '/reshaper'),
                           placement_error(403, errors.DEFAULT,
                                           'Policy does not allow placement:reshaper:reshape to be performed.'))
    with pytest.raises(errors.Forbidden) as info:
        backend.reshape({'inventories': {}, 'allocations': {}})
    detail = info.value.detail
    assert '`service` role' in detail and 'placement:reshaper:reshape' in detail
    assert 'Policy does not allow' in detail
    assert info.value.request_id == 'req-body-1'


def test_403_elsewhere_keeps_placement_detail_only():
    backend = backend_with(('GET', '/resource_classes'),
                           placement_error(403, errors.DEFAULT, 'Policy does not allow x'))
    with pytest.raises(errors.Forbidden) as info:
        backend.list_resource_classes()
    assert info.value.detail == 'Policy does not allow x'


def test_non_json_5xx_becomes_service_unavailable_with_status():
    backend, adapter = backend_and_adapter(('POST', '/resource_providers'),
                                           FakeResponse(502, text='<html>bad gateway</html>', reason='Bad Gateway'))
    with pytest.raises(errors.ServiceUnavailable) as info:
        backend.create_provider('n')
    assert info.value.status == 502 and info.value.title == 'Bad Gateway'
    assert ENDPOINT in info.value.detail and 'bad gateway' in info.value.detail
    assert adapter.count('POST', '/resource_providers') == 1   # a write is not retried


# -- retries ----------------------------------------------------------------------
def test_get_is_retried_on_503_then_succeeds():
    backend, adapter = backend_and_adapter(('GET', '/resource_classes'),
                                           FakeResponse(503, text='busy'),
                                           FakeResponse(200, {'resource_classes': [{'name': 'VGPU', 'links': []}]}))
    assert backend.list_resource_classes() == ['VGPU']
    assert adapter.count('GET', '/resource_classes') == 2


def test_get_retries_are_keystoneauths_and_logged_as_ours(caplog):
    """A GET's retries are keystoneauth's (connect_retries / status_code_retries on 502/503/504): its
    warning reaches keystoneauth's logger (the SDK log) and the backend's log says it as before."""
    adapter = FakeAdapter(script={('GET', '/resource_classes'): [
        FakeResponse(503, text='busy'), ks_exc.ConnectFailure('Unable to establish connection'),
        FakeResponse(200, {'resource_classes': []})]})
    logs = []
    backend = RestBackend(adapter, log=logs.append)
    caplog.set_level('WARNING', logger='keystoneauth')
    assert backend.list_resource_classes() == []
    sent = [c[2] for c in adapter.calls if c[1] == '/resource_classes']
    assert len(sent) == 3 and sent[0] is sent[-1]           # one call of ours, three sends of keystoneauth's
    assert (sent[0]['connect_retries'], sent[0]['status_code_retries'],
            sorted(sent[0]['retriable_status_codes'])) == (3, 3, [502, 503, 504])
    assert logs[0] == 'GET /resource_classes: Placement answered 503; retry 1 of 3 in 0.00 s'
    assert logs[1].startswith('GET /resource_classes: Placement at %s could not be reached' % ENDPOINT), logs
    assert 'connection retry 1 of 3 in 0.00 s' in logs[1] and len(logs) == 2
    warned = [r.getMessage() for r in caplog.records if r.name == 'keystoneauth.session']
    assert len(warned) == 2 and 'Retriable status code 503' in warned[0] and 'Retrying in' in warned[1], warned


def test_a_get_meeting_both_kinds_of_failure_has_two_bounds_each_numbered_once():
    """keystoneauth counts connection failures and 502/503/504 answers apart: a GET meeting both in
    turn is sent at most 1 + 3 + 3 times, and the log numbers each kind's retries on its own
    ("retry N of 3" after an answer, "connection retry N of 3"), so no number is said twice."""
    answers = []
    for _round in range(10):
        answers += [FakeResponse(503, text='busy'), ks_exc.ConnectFailure('Unable to establish connection')]
    adapter = FakeAdapter(script={('GET', '/resource_classes'): answers})
    logs = []
    backend = RestBackend(adapter, log=logs.append)
    backend.backoff = 0
    with pytest.raises(errors.ServiceUnavailable):
        backend.list_resource_classes()
    assert adapter.count('GET', '/resource_classes') == 1 + 2 * RestBackend.retries
    answered = [line.split('; retry ')[1].split(' in ')[0] for line in logs if '; retry ' in line]
    unreached = [line.split('; connection retry ')[1].split(' in ')[0] for line in logs if '; connection retry ' in line]
    assert answered == ['1 of 3', '2 of 3', '3 of 3'] and unreached == ['1 of 3', '2 of 3', '3 of 3'], logs


def test_a_get_waits_keystoneauths_own_delay_when_the_backend_has_a_backoff():
    """With a backoff (0.25 s, the default) a GET is sent with no delay of ours: keystoneauth's own
    exponential one (0.5 s, 1 s, 2 s) applies; with none (0), the shortest keystoneauth takes."""
    adapter = FakeAdapter(script={('GET', '/resource_classes'): [FakeResponse(200, {'resource_classes': []})]})
    backend = RestBackend(adapter, log=None)
    backend.backoff = 0.25
    backend.list_resource_classes()
    sent = [c[2] for c in adapter.calls if c[1] == '/resource_classes'][0]
    assert 'connect_retry_delay' not in sent and 'status_code_retry_delay' not in sent, sent
    backend.backoff = 0
    backend.list_resource_classes()
    sent = [c[2] for c in adapter.calls if c[1] == '/resource_classes'][-1]
    assert (sent['connect_retry_delay'], sent['status_code_retry_delay']) == (0.001, 0.001), sent


def test_writes_are_not_given_to_keystoneauths_retries():
    adapter = FakeAdapter(script={('PUT', '/traits/CUSTOM_A'): [FakeResponse(503, text='x'), FakeResponse(201)]})
    RestBackend(adapter).ensure_trait('CUSTOM_A')
    sent = [c[2] for c in adapter.calls if c[1] == '/traits/CUSTOM_A']
    assert len(sent) == 2 and sent[0] is not sent[1]        # two calls of ours (our loop resent it)
    assert not any(k in sent[0] for k in ('connect_retries', 'status_code_retries', 'retriable_status_codes'))


def test_get_retries_are_bounded():
    backend, adapter = backend_and_adapter(('GET', '/resource_classes'), FakeResponse(504, text='gw timeout'))
    with pytest.raises(errors.ServiceUnavailable):
        backend.list_resource_classes()
    assert adapter.count('GET', '/resource_classes') == 1 + RestBackend.retries


def test_connection_failure_on_get_is_retried_then_names_endpoint():
    backend, adapter = backend_and_adapter(('GET', '/resource_providers/rp1/usages'),
                                           ks_exc.ConnectFailure('Unable to establish connection'))
    with pytest.raises(errors.ServiceUnavailable) as info:
        backend.get_usages('rp1')
    assert ENDPOINT in str(info.value) and 'could not be reached' in str(info.value)
    assert adapter.count('GET', '/resource_providers/rp1/usages') == 1 + RestBackend.retries


def test_timeout_on_write_is_not_retried_and_says_it_may_have_applied():
    backend, adapter = backend_and_adapter(('PUT', '/allocations/c1'), ks_exc.ConnectTimeout('timed out'))
    with pytest.raises(errors.ServiceUnavailable) as info:
        backend.put_allocations('c1', {'allocations': {}})
    assert 'may or may not have been applied' in info.value.detail
    assert adapter.count('PUT', '/allocations/c1') == 1


@pytest.mark.parametrize('status', [409, 400])
def test_4xx_is_never_retried(status):
    backend, adapter = backend_and_adapter(('GET', '/allocations/c1'), placement_error(status, errors.DEFAULT, 'x'))
    with pytest.raises(errors.PlacementError):
        backend.get_allocations('c1')
    assert adapter.count('GET', '/allocations/c1') == 1


def test_idempotent_trait_and_class_puts_are_retried_and_report_creation():
    adapter = FakeAdapter(script={
        ('PUT', '/traits/CUSTOM_A'): [FakeResponse(503, text='x'), FakeResponse(201)],
        ('PUT', '/traits/CUSTOM_B'): [FakeResponse(204)],
        ('PUT', '/resource_classes/CUSTOM_R'): [ks_exc.ConnectFailure('refused'), FakeResponse(204)],
    })
    backend = RestBackend(adapter)
    assert backend.ensure_trait('CUSTOM_A') is True
    assert backend.ensure_trait('CUSTOM_B') is False
    assert backend.ensure_resource_class('CUSTOM_R') is False
    assert adapter.count('PUT', '/traits/CUSTOM_A') == 2
    assert adapter.count('PUT', '/resource_classes/CUSTOM_R') == 2


# -- shapes and request bodies -----------------------------------------------
def test_list_providers_is_one_get_with_params_and_strips_links():
    prov = {'uuid': 'u', 'name': 'n', 'generation': 0, 'parent_provider_uuid': None,
            'root_provider_uuid': 'u', 'links': [{'rel': 'self', 'href': '/x'}]}
    backend, adapter = backend_and_adapter(('GET', '/resource_providers'),
                                           FakeResponse(200, {'resource_providers': [prov]}))
    assert backend.list_providers(in_tree='u') == [dict((k, v) for k, v in prov.items() if k != 'links')]
    calls = [c for c in adapter.calls if c[1] == '/resource_providers']
    assert len(calls) == 1 and calls[0][2]['params'] == {'in_tree': 'u'}


def test_delete_inventory_with_stale_generation_does_not_delete():
    backend, adapter = backend_and_adapter(('GET', '/resource_providers/rp1/inventories'),
                                           FakeResponse(200, {'resource_provider_generation': 5, 'inventories': {}}))
    with pytest.raises(errors.ConcurrentUpdate) as info:
        backend.delete_inventory('rp1', 'VGPU', generation=4)
    assert info.value.code == errors.CONCURRENT_UPDATE
    assert adapter.count('DELETE', '/resource_providers/rp1/inventories/VGPU') == 0


def test_delete_inventories_with_generation_is_a_generation_checked_put():
    backend, adapter = backend_and_adapter(('PUT', '/resource_providers/rp1/inventories'),
                                           FakeResponse(200, {'resource_provider_generation': 8, 'inventories': {}}))
    backend.delete_inventories('rp1', generation=7)
    method, url, kwargs = adapter.calls[-1]
    assert kwargs['json'] == {'resource_provider_generation': 7, 'inventories': {}}


def test_update_provider_always_sends_the_parent():
    backend, adapter = backend_and_adapter(('PUT', '/resource_providers/rp1'),
                                           FakeResponse(200, {'uuid': 'rp1', 'name': 'm', 'links': []}))
    assert backend.update_provider('rp1', 'm') == {'uuid': 'rp1', 'name': 'm'}
    assert adapter.calls[-1][2]['json'] == {'name': 'm', 'parent_provider_uuid': None}


# -- from_options ----------------------------------------------------------------
def test_from_options_without_openstacksdk_says_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, 'openstack', None)   # import openstack -> ImportError
    with pytest.raises(errors.ConfigurationError) as info:
        RestBackend.from_options({'cloud': 'x'})
    assert 'openstacksdk' in str(info.value) and 'pip install' in str(info.value)


def _fake_openstack(monkeypatch, adapter, seen):
    class Conn(object):
        placement = adapter
        closed = False

        def close(self):
            Conn.closed = True

    def connect(**kwargs):
        seen.update(kwargs)
        return Conn()

    mod = types.ModuleType('openstack')
    mod.connect = connect
    mod.exceptions = types.SimpleNamespace(SDKException=type('SDKException', (Exception,), {}))
    monkeypatch.setitem(sys.modules, 'openstack', mod)
    return Conn


def test_from_options_maps_openstack_cloud_names(monkeypatch):
    seen = {}
    conn_cls = _fake_openstack(monkeypatch, FakeAdapter(), seen)
    backend = RestBackend.from_options({
        'cloud': 'prod', 'auth': None, 'auth_type': None, 'region_name': 'RegionTwo',
        'validate_certs': False, 'ca_cert': '/ca.pem', 'client_cert': '/c.pem',
        'client_key': '/k.pem', 'interface': 'internal', 'api_timeout': 30})
    assert seen == {'cloud': 'prod', 'region_name': 'RegionTwo', 'verify': False, 'cacert': '/ca.pem',
                    'cert': '/c.pem', 'key': '/k.pem', 'interface': 'internal', 'api_timeout': 30}
    assert backend.microversion == '1.39'
    backend.close()
    backend.close()
    assert conn_cls.closed is True


def test_from_options_closes_connection_when_negotiation_fails(monkeypatch):
    conn_cls = _fake_openstack(monkeypatch, FakeAdapter(root=root_doc('1.28')), {})
    with pytest.raises(errors.UnsupportedVersion):
        RestBackend.from_options({'auth_type': 'admin_token', 'auth': {'token': 't', 'endpoint': ENDPOINT}})
    assert conn_cls.closed is True


def test_closed_backend_refuses_calls():
    backend = RestBackend(FakeAdapter())
    backend.close()
    with pytest.raises(errors.ConfigurationError):
        backend.list_traits()


# -- set_inventory: Placement's PUT of one class only updates ------------------------
INV_PATH = '/resource_providers/rp1/inventories'
VCPU = {'total': 8, 'reserved': 0, 'min_unit': 1, 'max_unit': 8, 'step_size': 1, 'allocation_ratio': 1.0}


def test_set_inventory_updates_an_existing_class_in_one_call():
    backend, adapter = backend_and_adapter(('PUT', INV_PATH + '/VCPU'),
                                           FakeResponse(200, dict(VCPU, resource_provider_generation=4)))
    assert backend.set_inventory('rp1', 'VCPU', 3, {'total': 8, 'max_unit': 8}) == dict(
        VCPU, resource_provider_generation=4)
    assert adapter.calls[-1][2]['json'] == {'total': 8, 'max_unit': 8, 'resource_provider_generation': 3}
    assert adapter.count('GET', INV_PATH) == 0


def test_set_inventory_creates_a_missing_class_with_a_generation_checked_put_all():
    mem = dict(VCPU, total=2048, max_unit=2048)
    adapter = FakeAdapter(script={
        ('PUT', INV_PATH + '/MEMORY_MB'): [placement_error(
            400, errors.DEFAULT, 'No inventory record with resource class for resource provider rp1')],
        ('GET', INV_PATH): [FakeResponse(200, {'resource_provider_generation': 3, 'inventories': {'VCPU': VCPU}})],
        ('PUT', INV_PATH): [FakeResponse(200, {'resource_provider_generation': 4,
                                               'inventories': {'VCPU': VCPU, 'MEMORY_MB': mem}})],
    })
    backend = RestBackend(adapter)
    assert backend.set_inventory('rp1', 'MEMORY_MB', 3, {'total': 2048, 'max_unit': 2048}) == dict(
        mem, resource_provider_generation=4)
    assert adapter.calls[-1][2]['json'] == {
        'resource_provider_generation': 3,
        'inventories': {'VCPU': VCPU, 'MEMORY_MB': {'total': 2048, 'max_unit': 2048}}}


def test_set_inventory_create_with_stale_generation_is_a_conflict():
    adapter = FakeAdapter(script={
        ('PUT', INV_PATH + '/MEMORY_MB'): [placement_error(400, errors.DEFAULT, 'No inventory record')],
        ('GET', INV_PATH): [FakeResponse(200, {'resource_provider_generation': 5, 'inventories': {}})],
    })
    with pytest.raises(errors.ConcurrentUpdate):
        RestBackend(adapter).set_inventory('rp1', 'MEMORY_MB', 3, {'total': 1})
    assert adapter.count('PUT', INV_PATH) == 0


def test_set_inventory_bad_values_on_an_existing_class_stay_bad_request():
    adapter = FakeAdapter(script={
        ('PUT', INV_PATH + '/VCPU'): [placement_error(400, errors.DEFAULT, 'reserved greater than total')],
        ('GET', INV_PATH): [FakeResponse(200, {'resource_provider_generation': 3, 'inventories': {'VCPU': VCPU}})],
    })
    with pytest.raises(errors.BadRequest) as info:
        RestBackend(adapter).set_inventory('rp1', 'VCPU', 3, {'total': 1, 'reserved': 2})
    assert info.value.detail == 'reserved greater than total'
    assert adapter.count('PUT', INV_PATH) == 0


def test_placements_500_for_a_lost_trait_race_is_a_generation_conflict():
    """Placement 16's PUT .../traits lets ResourceProviderConcurrentUpdateDetected (another
    worker's write between its generation check and its bump) escape as a 500; the transaction
    was rolled back, so it is a generation conflict, not an unknown outcome."""
    race = placement_error(500, 'placement.undefined_code', 'Another thread concurrently updated the resource '
                           'provider data. Please retry your update', title='Internal Server Error')
    adapter = FakeAdapter(script={('PUT', '/resource_providers/rp1/traits'): [race]})
    backend = RestBackend(adapter)
    with pytest.raises(errors.ConcurrentUpdate) as info:
        backend.set_provider_traits('rp1', 3, ['CUSTOM_A'])
    assert info.value.status == 409
    assert 'answered 500 to PUT /resource_providers/rp1/traits' in str(info.value)
    assert 'the write was rolled back' in str(info.value)
    # sent once: a generation conflict is the caller's to re-read and retry
    assert adapter.count('PUT', '/resource_providers/rp1/traits') == 1


def test_a_deadlock_500_to_a_traits_put_is_a_generation_conflict():
    deadlock = placement_error(500, 'placement.undefined_code', "(pymysql.err.OperationalError) (1213, 'Deadlock found "
                               "when trying to get lock; try restarting transaction')", title='Internal Server Error')
    adapter = FakeAdapter(script={('PUT', '/resource_providers/rp1/traits'): [deadlock]})
    backend = RestBackend(adapter)
    with pytest.raises(errors.ConcurrentUpdate):
        backend.set_provider_traits('rp1', 3, ['CUSTOM_A'])
    assert adapter.count('PUT', '/resource_providers/rp1/traits') == 1


def test_any_other_500_to_a_traits_put_stays_an_unknown_answer():
    other = placement_error(500, 'placement.undefined_code', 'database is locked', title='Internal Server Error')
    adapter = FakeAdapter(script={('PUT', '/resource_providers/rp1/traits'): [other]})
    backend = RestBackend(adapter)
    with pytest.raises(errors.ServiceUnavailable):
        backend.set_provider_traits('rp1', 3, ['CUSTOM_A'])


def test_a_gets_retries_reach_the_sdk_log(tmp_path):
    """sdk_log_path: keystoneauth's warning of a GET's retry is written there (its logger's handlers)."""
    import logging

    from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends import factory
    path = tmp_path / 'sdk.log'
    levels = dict((name, logging.getLogger(name).level) for name in factory.SDK_LOGGERS)
    factory.sdk_logging(str(path), 'INFO', set())
    try:
        adapter = FakeAdapter(script={('GET', '/resource_classes'): [
            FakeResponse(502, text='bad gateway'), FakeResponse(200, {'resource_classes': []})]})
        assert RestBackend(adapter).list_resource_classes() == []
    finally:
        for name in factory.SDK_LOGGERS:
            logger = logging.getLogger(name)
            for handler in [h for h in logger.handlers if getattr(h, 'placement_upgrade_path', None)]:
                logger.removeHandler(handler)
                handler.close()
            logger.setLevel(levels[name])
    text = path.read_text()
    assert 'WARNING keystoneauth.session: Retriable status code 502. Retrying in' in text, text
