# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nova's compute API, read only: the migrations in flight on a compute node.

:func:`in_progress_migrations` reads ``GET /os-migrations`` at compute microversion
2.59 (the first whose records carry their ``uuid``, the consumer that holds a move's
source allocations in Placement) over a keystoneauth Adapter; no novaclient.

* Filter: ``host`` is sent as nova's ``host`` query (nova matches it against
  ``source_compute`` or ``dest_compute``, the nova-compute SERVICE host); ``node`` (the
  hypervisor hostname, the root provider's name) is matched here, since 2.59 accepts no
  ``node`` query: a record is kept when its ``source_node``/``dest_node`` is ``node`` or its
  ``source_compute``/``dest_compute`` is ``host``.  Only records still in flight
  (:func:`.migrations.in_progress`) are returned.
* Pages: nova answers at most ``[api]max_limit`` (1000) records and a ``migrations_links``
  ``next`` link; openstacksdk's compute resource (:func:`list_records`, the list
  ``conn.compute.migrations()`` runs) follows it (its query, on the endpoint asked: nova's
  link may name another host) until a page ends the list; given a ``limit``, it asks again
  after any page without a link, marked by the page's last uuid, until one comes back empty.
* Policy: listing every project's migrations with their hosts needs
  ``os_compute_api:os-migrations:index:all_projects`` and ``...:index:host``, both
  ``admin`` by default (the ``manager`` role may list but sees no hosts).  A 401/403, or
  records whose hosts nova blanked out, fail with a message saying so.
* Retries: like the REST backend's GETs, a connection failure or a 5xx is retried at most
  ``retries`` (3) times, ``backoff`` seconds apart: by keystoneauth for the lists
  (``connect_retries`` / ``status_code_retries``), by :func:`request` for one GET or PUT; each
  retry logged.  Every other failure is an :mod:`.errors` type naming nova's endpoint.

:func:`compute_adapter` finds the compute endpoint of a backend: the REST backend's
openstacksdk Connection (``conn.compute``, when the catalog has one), or an explicit
``endpoint_override`` on the backend's session; None for the embedded backend or a
catalog without nova.  :func:`node_migrations` is what the reshape module runs.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import logging
import time
import warnings

try:
    from urllib.parse import urlparse
except ImportError:  # pragma: no cover - Python 2
    from urlparse import urlparse

from .. import errors, resources as ops
from .. import request as _request
from ..backends import rest_errors as _rest_errors
from ..rules import providers as provider_rules
from .migrations import in_progress

#: the compute microversion whose os-migrations records carry ``uuid`` (and paging)
MICROVERSION = '2.59'
PATH = '/os-migrations'
#: the keys of a record kept in results (nova 2.59 sends these and a few more)
RECORD_KEYS = ('uuid', 'id', 'instance_uuid', 'status', 'migration_type', 'source_node', 'dest_node',
               'source_compute', 'dest_compute', 'dest_host', 'created_at', 'updated_at')
_HOST_KEYS = ('source_compute', 'dest_compute', 'source_node', 'dest_node')
_RETRY_STATUSES = (500, 502, 503, 504)

MODE_AUTO, MODE_ALWAYS, MODE_NEVER = 'auto', 'always', 'never'
MODES = (MODE_AUTO, MODE_ALWAYS, MODE_NEVER)
SOURCE_NOVA, SOURCE_GIVEN, SOURCE_NONE = 'nova', 'given', 'none'

ADMIN_ROLE_HINT = (
    'listing the migrations of every project with their hosts (GET /os-migrations) needs the '
    '`admin` role under nova\'s default policy (os_compute_api:os-migrations:index:all_projects '
    'and os_compute_api:os-migrations:index:host), or a policy granting both to one of the '
    'credentials\' roles; or set nova_migrations=never (and pass migrations yourself) to plan '
    'without asking nova')


def _ks_exceptions():
    try:
        from keystoneauth1 import exceptions as ks_exc
    except ImportError:  # pragma: no cover - keystoneauth comes with openstacksdk
        return None
    return ks_exc


def _endpoint(adapter):
    try:
        endpoint = adapter.get_endpoint()
    except Exception:  # keystoneauth: catalog / auth failures show up on the request
        endpoint = None
    return endpoint or getattr(adapter, 'endpoint_override', None) or '(compute endpoint)'


def _body_detail(resp):
    """nova's error message: ``{"<kind>": {"message": ...}}``, or the text."""
    try:
        body = resp.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and len(body) == 1:
        inner = list(body.values())[0]
        if isinstance(inner, dict) and inner.get('message'):
            return ' '.join(str(inner['message']).split())
    text = ' '.join((getattr(resp, 'text', '') or '').split())
    return text[:400] or 'HTTP %s' % resp.status_code


def _request_id(resp):
    headers = getattr(resp, 'headers', None) or {}
    for name in ('x-openstack-request-id', 'x-compute-request-id', 'openstack-request-id'):
        try:
            value = headers.get(name)
        except AttributeError:
            value = None
        if value:
            return value
    return None


def _http_error(resp, endpoint, what, path=PATH, hint=ADMIN_ROLE_HINT, microversion=MICROVERSION):
    status = resp.status_code
    detail = _body_detail(resp)
    request_id = _request_id(resp)
    if status == 401:
        err = errors.Unauthorized(
            'nova at %s rejected the credentials (401 Unauthorized) for %s: the token is missing, '
            'invalid or expired, check the cloud/auth options; once it is accepted, %s. nova said: %s'
            % (endpoint, what, hint, detail), request_id=request_id)
    elif status == 403:
        err = errors.Forbidden('nova at %s refused %s (403 Forbidden): %s. nova said: %s'
                               % (endpoint, what, hint, detail), request_id=request_id)
    elif status == 404:
        err = errors.NotFound(
            'nova at %s has no %s (404 Not Found): is this nova\'s compute endpoint (it ends in '
            '/v2.1)? nova said: %s' % (endpoint, what, detail), request_id=request_id)
    elif status == 406:
        err = errors.UnsupportedVersion(
            'nova at %s does not accept compute microversion %s for %s (nova before Queens): %s'
            % (endpoint, microversion, what, detail), request_id=request_id)
    elif status >= 500:
        err = errors.ServiceUnavailable('nova at %s answered %s to %s: %s'
                                        % (endpoint, status, what, detail), status=status,
                                        request_id=request_id)
    else:
        err = errors.PlacementError('nova at %s answered %s to %s: %s' % (endpoint, status, what, detail),
                                    status=status, request_id=request_id)
    err.method, err.path = 'GET', path
    return err


def auth_url_of(adapter):
    """The identity service URL the adapter's session authenticates against (None: no Keystone)."""
    auth = getattr(getattr(adapter, 'session', None), 'auth', None)
    return getattr(auth, 'auth_url', None)


def _transport_error(exc, endpoint, what, path=PATH, auth_url=None):
    """A typed error for an exception raised while sending; None when it is not keystoneauth's.

    A failure of the identity service at ``auth_url`` (authenticating, or re-authenticating
    when the token expired) is said to be Keystone's, as the REST backend says it, not nova's.
    """
    ks = _ks_exceptions()
    if ks is None or not isinstance(exc, ks.ClientException):
        return None
    if _rest_errors.names_url(exc, auth_url, endpoint):
        err = _rest_errors.identity_error(exc, auth_url, ks)
        err.method, err.path = 'GET', path
        return err
    if isinstance(exc, ks.ConnectionError):
        # no HTTP answer at all (refused, timed out, unreachable): no 503 of nova's
        err = errors.NoAnswer('nova at %s %s (%s): %s' % (endpoint, _rest_errors.no_answer(exc, ks), what, exc))
    elif isinstance(exc, ks.DiscoveryFailure):
        err = errors.NoAnswer('nova at %s could not be reached (%s): %s' % (endpoint, what, exc))
    elif isinstance(exc, ks.EndpointNotFound):
        err = errors.ConfigurationError(
            'No compute (nova) endpoint in the service catalog (check region_name and interface), '
            'needed for %s: %s' % (what, exc))
    elif isinstance(exc, ks.HttpError) and exc.http_status == 401:
        err = errors.Unauthorized('The identity service rejected the credentials (401 Unauthorized) '
                                  'for %s: %s' % (what, exc))
    elif isinstance(exc, ks.HttpError):
        err = errors.PlacementError('Authentication for nova failed (%s): %s' % (what, exc),
                                    status=exc.http_status or 500)
    else:
        err = errors.ConfigurationError('Cannot authenticate to reach nova (%s): %s' % (what, exc))
    err.method, err.path = 'GET', path
    return err


class CallOptions(_request.Request):
    """The options of one call to nova's API (:func:`request`): the query ``params``, the JSON
    ``body``, the ``microversion``, the ``hint`` a 401/403 names; :func:`_get` takes its ``path``."""

    FIELDS = (('params', None), ('body', None), ('microversion', MICROVERSION), ('hint', ADMIN_ROLE_HINT),
              ('path', PATH))


def _get(adapter, params, endpoint, retries, backoff, log, **options):
    """One GET page of nova's API (os-migrations by default); the decoded body.  ``options``:
    ``path``, ``microversion``, ``hint`` (:class:`CallOptions`)."""
    opts = CallOptions(**options)
    if opts.body is not None or opts.params is not None:
        raise TypeError('_get takes its query as params and sends no body')
    return request(adapter, 'GET', opts.path, endpoint, retries, backoff, log, params=params,
                   microversion=opts.microversion, hint=opts.hint)


def request(adapter, method, path, endpoint, retries, backoff, log, **options):
    """One call to nova's API, retried on connection failures and 5xx (callers send only
    idempotent ones: GETs, a PUT of a service's status); the decoded body.  Failures are
    :mod:`.errors` types naming nova's endpoint (or Keystone, when it failed).  ``options``:
    ``params``, ``body``, ``microversion``, ``hint`` (:class:`CallOptions`)."""
    opts = CallOptions(**options)
    params, body, microversion, hint = opts.params, opts.body, opts.microversion, opts.hint
    what = '%s %s%s' % (method, path, '?' + '&'.join('%s=%s' % kv for kv in sorted(params.items()))
                        if params else '')
    kwargs = {'raise_exc': False, 'headers': {'Accept': 'application/json'}, 'microversion': microversion,
              'microversion_service_type': 'compute'}
    if params:
        kwargs['params'] = dict(params)
    if body is not None:
        kwargs['json'] = body
    attempts = 1 + max(0, retries)
    # a GET's connection failures and 5xx are retried by keystoneauth; what it does not retry (the
    # identity service failing while the token is renewed) and a PUT's, by the loop below
    handler = None
    if method in ('GET', 'HEAD') and retries > 0:
        handler = _RetryLog(log, what, endpoint, max(0, retries))
        kwargs.update(_ks_retries(retries, backoff, handler))
    for attempt in range(1, attempts + 1):
        failure = None
        try:
            resp = adapter.request(path, method, **kwargs)
        except Exception as exc:
            err = _transport_error(exc, endpoint, what, path, auth_url_of(adapter))
            if err is None:
                raise
            if not isinstance(err, errors.ServiceUnavailable):
                raise err
            failure = err
            if handler is not None and _ks_took(exc, endpoint, auth_url_of(adapter)):
                raise _gave_up(failure, handler)
        else:
            if resp.status_code < 400:
                try:
                    return resp.json()
                except ValueError:
                    raise errors.PlacementError(
                        'nova at %s answered %s with something that is not JSON: %.200s'
                        % (endpoint, what, getattr(resp, 'text', '')), status=502)
            failure = _http_error(resp, endpoint, what, path, hint, microversion)
            failure.method = method
            if resp.status_code not in _RETRY_STATUSES:
                raise failure
            if handler is not None:
                raise _gave_up(failure, handler)
        if attempt == attempts:
            if attempts > 1:
                failure.detail = '%s (gave up after %d attempts)' % (failure.detail, attempts)
                failure.args = (failure.detail,)
            raise failure
        if log is not None:
            log('nova %s: %s on attempt %d of %d, retrying' % (what, failure.detail, attempt, attempts))
        if backoff:
            time.sleep(backoff * (2 ** (attempt - 1)))
    raise AssertionError('unreachable')  # pragma: no cover


def _ks_retries(retries, backoff, handler):
    """The arguments that have keystoneauth retry a request (connection failures, 5xx), its
    warnings written through ``handler`` (and, as ever, to keystoneauth's logger: the SDK log)."""
    logger = logging.Logger('keystoneauth.session')
    logger.parent = logging.getLogger('keystoneauth.session')
    logger.addHandler(handler)
    kwargs = {'connect_retries': max(0, retries), 'status_code_retries': max(0, retries),
              'retriable_status_codes': list(_RETRY_STATUSES), 'logger': logger}
    if not backoff:        # none asked: the shortest keystoneauth takes (0 means its own exponential one)
        kwargs.update(connect_retry_delay=0.001, status_code_retry_delay=0.001)
    return kwargs       # else keystoneauth's own delay: 0.5 s, doubling


def _ks_took(exc, endpoint, auth_url):
    """Whether keystoneauth retried this failure already: a connection failure to nova (not to the
    identity service, reached while the token is renewed)."""
    ks = _ks_exceptions()
    return (ks is not None and isinstance(exc, ks.RetriableConnectionFailure)
            and not _rest_errors.names_url(exc, auth_url, endpoint))


#: nova's paged lists and the openstacksdk resource each is read with (what conn.compute.migrations(),
#: services() and hypervisors() list)
LISTS = ('migrations', 'services', 'hypervisors')
#: the path each list is read from
LIST_PATHS = {'migrations': PATH, 'services': '/os-services', 'hypervisors': '/os-hypervisors/detail'}
_LIST_CLASSES = {}


def _list_class(kind):
    """openstacksdk's compute resource for ``kind``, with nova's next link read as this client
    always read it: its query (marker, limit, filters) on the endpoint the first page came from
    (nova writes its own host into the link, which need not be the one reached: a proxy), and the
    marker of a page without a link nova's ``uuid`` where the records have one (os-migrations'
    ``id`` is a number, its marker the uuid)."""
    if kind not in _LIST_CLASSES:
        from openstack.compute.v2 import hypervisor, migration, service
        base = {'migrations': migration.Migration, 'services': service.Service,
                'hypervisors': hypervisor.Hypervisor}[kind]

        class NovaList(base):
            @classmethod
            def _get_next_link(cls, uri, response, data, marker, limit, total_yielded):
                page = data.get(cls.resources_key) if isinstance(data, dict) else None
                if page and isinstance(page[-1], dict) and page[-1].get('uuid'):
                    marker = page[-1]['uuid']
                link, params = super(NovaList, cls)._get_next_link(uri, response, data, marker, limit,
                                                                   total_yielded)
                return (uri.split('?')[0] if link else link), params

        _LIST_CLASSES[kind] = NovaList
    return _LIST_CLASSES[kind]


class _RetryLog(logging.Handler):
    """keystoneauth's retry warnings of one list, written to ``log`` as this client wrote its own."""

    def __init__(self, log, what, endpoint, retries):
        logging.Handler.__init__(self, logging.WARNING)
        self.log, self.what, self.endpoint, self.retries = log, what, endpoint, retries
        self.count = 0

    def emit(self, record):
        args = record.args if isinstance(record.args, dict) else {}
        if 'retries' not in args:
            return
        self.count += 1
        if 'code' in args:
            why = 'nova at %s answered %s' % (self.endpoint, args['code'])
        else:
            err = _transport_error(args.get('e'), self.endpoint, self.what)
            why = err.detail if err is not None else str(args.get('e'))
        if self.log is not None:
            # keystoneauth counts connection failures and answers apart (up to ``retries`` of each)
            self.log('nova %s: %s on %sattempt %d of %d, retrying'
                     % (self.what, why, '' if 'code' in args else 'connection ',
                        self.retries - int(args['retries']) + 1, self.retries + 1))


def _lister(adapter, endpoint, retries, backoff, handler):
    """A keystoneauth Adapter on ``adapter``'s session and endpoint, as openstacksdk's resources
    list with it: keystoneauth retries connection failures and 5xx (``retries`` times,
    keystoneauth's own delay, none when ``backoff`` is 0), and answers come back to be read (no raise)."""
    from keystoneauth1 import adapter as ks_adapter
    override = getattr(adapter, 'endpoint_override', None)
    if not override and endpoint != '(compute endpoint)':
        override = endpoint
    lister = ks_adapter.Adapter(
        session=adapter.session, service_type='compute', service_name=getattr(adapter, 'service_name', None),
        interface=getattr(adapter, 'interface', None), region_name=getattr(adapter, 'region_name', None),
        endpoint_override=override, auth=getattr(adapter, 'auth', None),
        additional_headers=dict(getattr(adapter, 'additional_headers', None) or {}), raise_exc=False,
        **_ks_retries(retries, backoff, handler))
    # openstacksdk hands each record the Connection of its Proxy: there is none to hand here
    lister._get_connection = lambda: None
    return lister


def list_records(adapter, kind, params, microversion, hint, retries=3, backoff=0.25, log=None):
    """Every record of one of nova's paged lists (``kind``: migrations, services, hypervisors, read
    from :data:`LIST_PATHS`) as nova sent it, through openstacksdk's compute resource (the list ``conn.compute.<kind>()``
    runs: it sends ``params``, follows nova's next links and stops at the end), at
    ``microversion``.  Failures are :mod:`.errors` types naming nova's endpoint, as for one GET."""
    endpoint = _endpoint(adapter)
    path = LIST_PATHS[kind]
    what = 'GET %s%s' % (path, '?' + '&'.join('%s=%s' % kv for kv in sorted(params.items())) if params else '')
    handler = _RetryLog(log, what, endpoint, max(0, retries))
    lister = _lister(adapter, endpoint, retries, backoff, handler)
    try:
        import openstack.exceptions as sdk_exc
    except ImportError:  # pragma: no cover - keystoneauth's session comes with openstacksdk
        raise errors.ConfigurationError('reading nova\'s %s needs the openstacksdk Python library' % kind)
    try:
        for value in _list_class(kind).list(lister, paginated=True, base_path=path, microversion=microversion,
                                            **dict(params or {})):
            yield dict(value._body.attributes)
    except sdk_exc.HttpException as exc:
        resp = exc.response
        if resp is None or getattr(resp, 'status_code', None) is None:
            raise errors.PlacementError('nova at %s answered %s: %s' % (endpoint, what, exc), status=502)
        raise _gave_up(_http_error(resp, endpoint, what, path, hint, microversion), handler)
    except sdk_exc.SDKException as exc:        # openstacksdk's endless-pages guard, an answer without the list
        raise errors.ServiceUnavailable('nova at %s answered %s with pages that do not end or hold no %s: %s'
                                        % (endpoint, what, kind, exc))
    except ValueError as exc:                  # an answer that is not JSON
        raise errors.PlacementError('nova at %s answered %s with something that is not JSON: %s'
                                    % (endpoint, what, exc), status=502)
    except KeyError as exc:                    # a page without its list
        raise errors.PlacementError('nova at %s answered %s without a %s list (%s)' % (endpoint, what, kind, exc),
                                    status=502)
    except Exception as exc:
        err = _transport_error(exc, endpoint, what, path, auth_url_of(adapter))
        if err is None:
            raise
        raise _gave_up(err, handler)


def _gave_up(err, handler):
    if handler.count and isinstance(err, errors.ServiceUnavailable):
        err.detail = '%s (gave up after %d attempts)' % (err.detail, handler.count + 1)
        err.args = (err.detail,)
    return err


def touches(record, node=None, host=None):
    """Whether a record names ``node`` (source/dest node) or ``host`` (source/dest compute)."""
    if node is None and host is None:
        return True
    if node is not None and node in (record.get('source_node'), record.get('dest_node')):
        return True
    return host is not None and host in (record.get('source_compute'), record.get('dest_compute'))


def _keep(record):
    return dict((k, record.get(k)) for k in RECORD_KEYS if k in record)


def in_progress_migrations(adapter, host=None, node=None, limit=None, retries=3, backoff=0.25,
                           log=None):
    """nova's in-progress migration records for a compute host / node (os-migrations shape).

    ``adapter``: a keystoneauth Adapter (an openstacksdk compute Proxy is one) on nova's
    compute endpoint.  ``host``: nova's service host (query ``host``); ``node``: the
    hypervisor hostname; see the module doc for the matching.  ``limit``: page size sent
    to nova (None: nova's ``[api]max_limit``).  ``log``: callable taking one message per
    retry.  Returns the records (keys of :data:`RECORD_KEYS`), newest first as nova sorts.
    """
    endpoint = _endpoint(adapter)
    params = {}
    if host:
        params['host'] = host
    if limit:
        params['limit'] = int(limit)
    records, seen = [], set()
    for record in list_records(adapter, 'migrations', params, MICROVERSION, ADMIN_ROLE_HINT,
                               retries=retries, backoff=backoff, log=log):
        if 'uuid' not in record:
            raise errors.UnsupportedVersion(
                'nova at %s sent migration records without uuid: it did not honour compute '
                'microversion %s (nova before Queens?)' % (endpoint, MICROVERSION))
        if all(record.get(k) is None for k in _HOST_KEYS):
            err = errors.Forbidden(
                'nova at %s listed migration %s without its hosts (the credentials may list '
                'migrations but not see where they run): %s' % (endpoint, record['uuid'], ADMIN_ROLE_HINT))
            err.method, err.path = 'GET', PATH
            raise err
        if record['uuid'] in seen:
            continue
        seen.add(record['uuid'])
        if in_progress(record) and touches(record, node=node, host=host):
            records.append(_keep(record))
    return records


SERVERS_HINT = ('reading an instance of any project (GET /servers/{id}) needs the `admin` role under nova\'s '
                'default policy')


def orphaned(adapter, consumers, migrations=(), retries=3, backoff=0.25, log=None):
    """The consumers that nova knows neither as an instance nor as a migration in flight.

    ``consumers``: uuids holding allocations on a node that no guest domain there is.  Each
    is looked up with ``GET /servers/{uuid}`` (any project; a soft-deleted instance is still
    an instance); a 404 whose uuid is not one of ``migrations`` (in-progress records) is an
    orphaned allocation, what ``nova-manage placement audit`` finds.
    """
    moving = set(str(m.get('uuid')).lower() for m in migrations or () if isinstance(m, dict))
    found = set()
    for consumer in sorted(set(consumers)):
        if str(consumer).lower() in moving:
            continue
        try:
            _get(adapter, {}, _endpoint(adapter), retries, backoff, log, path='/servers/%s' % consumer,
                 hint=SERVERS_HINT)
        except errors.NotFound:
            found.add(consumer)
    _log(log, 'nova: %d of %d consumer(s) without a guest domain on the node are orphaned allocations%s'
         % (len(found), len(set(consumers)), (': ' + ', '.join(sorted(found))) if found else ''))
    return found


def _same_endpoint(one, other):
    return bool(one and other) and str(one).rstrip('/') == str(other).rstrip('/')


def _catalog_endpoint(conn, service_type):
    """The endpoint the connection's configuration or catalog gives ``service_type``, without a
    request (the token is already there), or None."""
    try:
        config = conn.config
        return config.get_endpoint(service_type) or conn.session.get_endpoint(
            service_type=service_type, interface=config.get_interface(service_type),
            region_name=config.get_region_name(service_type))
    except Exception:  # pylint: disable=broad-except  # no catalog entry, no token: the proxy says
        return None


def check_endpoint(value, field='compute_endpoint'):
    """Refuse a ``compute_endpoint`` that is no http(s) URL naming a host (BadInput): sent as it is,
    it was "could not be reached", as if nova were down."""
    text = str(value)
    parts = urlparse(text.strip())
    if parts.scheme not in ('http', 'https') or not parts.hostname or any(c.isspace() for c in text):
        raise errors.BadInput('%s must be the URL of nova\'s compute API (http:// or https://, usually ending in '
                              '/v2.1), got %r' % (field, value), field=field)
    return text


def compute_adapter(backend, endpoint_override=None, additional_headers=None):
    """The keystoneauth Adapter of nova's compute API for ``backend``, or None.

    None for the embedded backend, for a REST backend built from an Adapter (no
    openstacksdk Connection) unless ``endpoint_override`` is given, and for a catalog
    without a compute endpoint (with ``admin_token``/``none`` auth every service resolves
    to the one endpoint given, Placement's: that is no compute endpoint either).
    ``endpoint_override``: nova's compute URL (``.../v2.1``), used with the backend's
    session (tests, or a nova the catalog does not list).  Raises ServiceUnavailable when
    the catalog names nova but its version discovery fails.
    """
    if getattr(backend, 'kind', None) != 'rest':
        return None
    ks = _ks_exceptions()
    if endpoint_override:
        check_endpoint(endpoint_override)
        session = getattr(backend, 'session', None)
        if session is None:
            raise errors.ConfigurationError('the backend has no keystoneauth session to reach nova at %s'
                                            % endpoint_override)
        from keystoneauth1 import adapter as ks_adapter
        return ks_adapter.Adapter(session=session, service_type='compute', endpoint_override=endpoint_override,
                                  additional_headers=dict(additional_headers or {}))
    conn = getattr(backend, 'connection', None)
    if conn is None:
        return None
    if _same_endpoint(_catalog_endpoint(conn, 'compute'), getattr(backend, 'endpoint', None)):
        return None                             # the auth's one endpoint: Placement's (no request sent)
    no_endpoint = ()
    try:
        import openstack.exceptions as sdk_exc
        no_endpoint += (sdk_exc.NotSupported, sdk_exc.ServiceDisabledException)
        discovery = (sdk_exc.ServiceDiscoveryException,)
    except ImportError:  # pragma: no cover - a Connection means openstacksdk is there
        discovery = ()
    if ks is not None:
        no_endpoint += (ks.EndpointNotFound, ks.CatalogException)
        discovery += (ks.DiscoveryFailure, ks.ConnectionError)
    try:
        with warnings.catch_warnings():
            # openstacksdk warns when the endpoint it found has no compute version document
            warnings.simplefilter('ignore')
            proxy = conn.compute
            from keystoneauth1 import adapter as ks_adapter
            if not isinstance(proxy, ks_adapter.Adapter):
                return None                     # openstacksdk's shim for a service not in the catalog
            endpoint = proxy.get_endpoint()
    except no_endpoint:
        return None
    except discovery as exc:
        raise errors.ServiceUnavailable(
            'nova\'s compute endpoint in the service catalog did not answer version discovery '
            '(needed to read its migrations in flight): %s' % (exc,))
    if not endpoint or _same_endpoint(endpoint, getattr(backend, 'endpoint', None)):
        return None
    return proxy


def _root_name(backend, root):
    """The root provider's name (nova's hypervisor hostname) for a name or a uuid."""
    if not provider_rules.is_uuid_like(root):
        return root
    return ops.resolve_provider(backend, root, 'Compute node root provider')['name']


def node_migrations(backend, root, mode=MODE_AUTO, host=None, given=None, endpoint_override=None,
                    additional_headers=None, log=None):
    """The migrations in flight on one node, as the reshape module reports them.

    ``root``: the root provider's name or uuid (its name is nova's node).
    ``given`` (records, e.g. from an earlier query): used instead of asking nova.
    ``mode``: ``auto`` asks nova when the backend has a compute endpoint, ``always`` fails
    when it has none, ``never`` does not ask.  ``host``: nova's service host (default: the
    node's name).  ``log``: callable taking one message.
    Returns ``{"source": "nova"|"given"|"none", "count": N, "records": [...]}``: the
    in-progress records that touch the node (the records the plan is given).
    """
    if mode not in MODES:
        raise errors.ConfigurationError('nova_migrations must be one of %s, got %r' % (', '.join(MODES), mode))
    if given is not None:
        if not isinstance(given, (list, tuple)) or not all(isinstance(r, dict) for r in given):
            raise errors.ConfigurationError('migrations must be a list of migration records (dicts)')
        node = _root_name(backend, root)
        host = host or node
        records = [dict(r) for r in given if in_progress(r) and touches(r, node=node, host=host)]
        _log(log, 'migrations given: %d of %d in flight on node %s / host %s'
             % (len(records), len(given), node, host))
        return {'source': SOURCE_GIVEN, 'count': len(records), 'records': records}
    if mode == MODE_NEVER:
        return {'source': SOURCE_NONE, 'count': 0, 'records': []}
    adapter = compute_adapter(backend, endpoint_override=endpoint_override,
                              additional_headers=additional_headers)
    if adapter is None:
        where = ('the embedded backend' if getattr(backend, 'kind', None) != 'rest'
                 else 'no compute endpoint in the service catalog')
        if mode == MODE_ALWAYS:
            raise errors.ConfigurationError(
                'nova_migrations=always, but there is no compute (nova) endpoint to read the '
                'migrations in flight from (%s): use cloud/auth options whose service catalog '
                'lists nova, pass migrations explicitly, or set nova_migrations to auto or never'
                % where)
        _log(log, 'nova not asked for migrations in flight (%s)' % where)
        return {'source': SOURCE_NONE, 'count': 0, 'records': []}
    node = _root_name(backend, root)
    host = host or node
    try:
        records = in_progress_migrations(adapter, host=host, node=node, log=log)
    except (errors.Forbidden, errors.Unauthorized) as exc:
        if mode == MODE_ALWAYS:
            raise
        # auto: credentials without nova's admin role still roll; the moves in flight are then
        # found from Placement and the host's guest domains only (inflight.py)
        _log(log, 'nova_migrations=auto: nova refused os-migrations, going on without it (moves '
                  'in flight found from Placement and the host\'s domains only): %s' % exc.detail)
        return {'source': SOURCE_NONE, 'count': 0, 'records': [], 'error': exc.detail}
    _log(log, 'nova at %s: %d migration(s) in flight on node %s / host %s'
         % (_endpoint(adapter), len(records), node, host))
    return {'source': SOURCE_NOVA, 'count': len(records), 'records': records}


def _log(log, message):
    if log is not None:
        log(message)
