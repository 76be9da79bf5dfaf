# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What nova's failures are called (issue 46): an ambiguous service host is refused naming both
records, a refused connection is no HTTP status; Placement's catch-all code is not shown."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

try:
    from urllib.parse import urlsplit
except ImportError:  # pragma: no cover - Python 2
    from urlparse import urlsplit

import pytest
import requests
from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import session as ks_session

from ansible_collections.placement.upgrade.plugins.module_utils._placement import errors
from ansible_collections.placement.upgrade.plugins.module_utils._placement.nova import services as nova_services

URL = 'http://nova.example:8774/v2.1'


class _Answer(requests.adapters.BaseAdapter):
    """requests' transport under a real keystoneauth Session: nova's GET /os-services answering
    the adapter's ``services`` (whatever the query)."""

    def __init__(self, owner):
        requests.adapters.BaseAdapter.__init__(self)
        self.owner = owner

    def send(self, request, **_kwargs):
        url = urlsplit(request.url)
        self.owner.requests.append((request.method, url.path, url.query, request.body))
        resp = requests.Response()
        resp.status_code = 200
        resp.headers = requests.structures.CaseInsensitiveDict({'Content-Type': 'application/json'})
        resp._content = json.dumps({'services': self.owner.services}).encode('utf-8')
        resp.url, resp.request = request.url, request
        return resp

    def close(self):
        pass


class _Adapter(ks_adapter.Adapter):
    """A keystoneauth Adapter on nova at URL whose GET /os-services answers ``services``."""

    def __init__(self, services):
        http = requests.Session()
        http.mount('http://', _Answer(self))
        ks_adapter.Adapter.__init__(self, session=ks_session.Session(session=http), service_type='compute',
                                    endpoint_override=URL)
        self.services = services
        self.requests = []


def _service(sid, host='cmp-01', zone='nova', updated='2026-11-28T00:00:00.000000'):
    return {'id': sid, 'binary': 'nova-compute', 'host': host, 'zone': zone, 'status': 'enabled', 'state': 'up',
            'updated_at': updated, 'disabled_reason': None, 'forced_down': False}


def test_one_service_of_the_host_is_read():
    adapter = _Adapter([_service('a1'), _service('b2', host='cmp-02')])
    assert nova_services.get_service(adapter, 'cmp-01')['id'] == 'a1'


def test_two_nova_compute_services_on_one_host_are_refused_naming_both():
    """A host re-added in another cell: nova lists two nova-compute records for it; the first one
    was taken (and disabled, enabled) whichever the node runs."""
    first = _service('9a0e3c1e-0000-4000-8000-000000000001', zone='nova')
    second = _service('9a0e3c1e-0000-4000-8000-000000000002', zone='cell2-az', updated='2026-11-28T00:01:00.000000')
    adapter = _Adapter([first, second])
    with pytest.raises(errors.ConfigurationError) as info:
        nova_services.get_service(adapter, 'cmp-01')
    detail = info.value.detail
    assert "lists 2 nova-compute services on host 'cmp-01'" in detail, detail
    assert first['id'] in detail and second['id'] in detail and 'cell2-az' in detail
    assert URL in detail
    assert all(method == 'GET' for method, _p, _q, _b in adapter.requests)   # nothing was changed


def test_placements_catch_all_code_is_not_shown_to_operators():
    err = errors.from_response(409, {'errors': [{'status': 409, 'code': 'placement.undefined_code',
                                                 'title': 'Conflict', 'detail': 'Unable to allocate'}]})
    assert str(err) == '409 Conflict: Unable to allocate'
    assert err.to_dict()['code'] == 'placement.undefined_code'          # kept for scripts
    named = errors.from_response(409, {'errors': [{'code': 'placement.concurrent_update', 'detail': 'gen'}]})
    assert str(named) == '409 Conflict (placement.concurrent_update): gen'


def test_nova_refusing_the_connection_is_no_503():
    """Nothing listens at nova's port: no HTTP status was answered, so none is printed."""
    import socket
    from keystoneauth1 import adapter as ks_adapter
    from keystoneauth1 import session as ks_session
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    url = 'http://127.0.0.1:%d/v2.1' % sock.getsockname()[1]
    sock.close()                                             # nothing listens there
    adapter = ks_adapter.Adapter(session=ks_session.Session(), service_type='compute', endpoint_override=url)
    with pytest.raises(errors.ServiceUnavailable) as info:     # retried like a 503 all the same
        nova_services.get_service(adapter, 'cmp-01', retries=0, backoff=0)
    text = str(info.value)
    assert 'refused' in text and url in text, text
    assert '503' not in text and 'Service Unavailable' not in text, text
    assert info.value.status == 0


@pytest.mark.parametrize('endpoint', ['nova', 'nova.example:8774/v2.1', 'ftp://nova.example/v2.1', 'http:///v2.1',
                                      'http://nova example/v2.1'])
def test_a_compute_endpoint_that_is_no_url_is_refused_before_anything_is_sent(endpoint):
    """The inventory plugin's (and every caller's) compute_endpoint: sent as it was, it read as nova
    being down ("503 Service Unavailable", then "could not be reached")."""
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.nova import compute as nova

    class _Rest(object):
        kind = 'rest'
        session = object()

    with pytest.raises(errors.BadInput) as info:
        nova.compute_adapter(_Rest(), endpoint_override=endpoint)
    assert str(info.value) == ("compute_endpoint must be the URL of nova's compute API (http:// or https://, "
                               "usually ending in /v2.1), got %r" % endpoint)
