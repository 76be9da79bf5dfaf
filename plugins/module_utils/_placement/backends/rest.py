# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The REST backend: a real Placement API through openstacksdk / keystoneauth.

:class:`RestBackend` maps every :class:`~.backend.Backend` method onto one
Placement endpoint and returns Placement's own JSON (``links`` stripped).

* Connection: :meth:`RestBackend.from_options` takes the openstack.cloud option
  names (``cloud``, ``auth``, ``auth_type``, ``region_name``, ``validate_certs``,
  ``ca_cert``, ``client_cert``, ``client_key``, ``interface``, ``api_timeout``) and
  uses ``conn.placement`` (a keystoneauth Adapter) for every call; one session is
  reused.  openstacksdk is imported there and only there, so importing this module
  costs nothing on a host that only uses the embedded backend.
* Microversion: ``GET /`` gives the server's maximum; the backend uses
  ``min(server max, 1.39)`` on every call and refuses a server below 1.30
  (``POST /reshaper``) with UnsupportedVersion.
* Errors: every non-2xx answer becomes the :mod:`.errors` type for its status and
  Placement error code, with ``detail`` (Placement's specific message, whitespace
  collapsed, webob's generic preamble dropped) and ``request_id``.  Messages name the
  service that failed: the identity service (Keystone) at ``auth_url`` when it
  rejects the credentials (401 -> Unauthorized), does not know a token (404 ->
  Unauthorized), cannot be reached or answers 5xx (ServiceUnavailable); Placement at
  its endpoint otherwise (401 -> Unauthorized; 403 on ``POST /reshaper`` says, once,
  that the credentials need the ``service`` role; unreachable / timed out / 5xx ->
  ServiceUnavailable).  Each message says what to check.  Each error also carries
  ``method`` and ``path`` attributes.
* Retries: only calls that are safe to repeat are retried, on connection failures and
  502/503/504, at most ``retries`` (3) times with a short exponential backoff, each
  retry written to the ``log`` callable when one was given: every GET (``GET /`` too,
  and the authentication and version discovery openstacksdk runs when the backend is
  built), ``PUT /traits/{name}``, ``PUT /resource_classes/{name}``, and
  ``POST /resource_providers`` when the uuid is given (a 409 on a retry, for a provider
  that then reads back with that uuid, name and parent, is the provider the lost
  attempt created: it is returned).  A generation-checked write is never retried here
  (see :mod:`.retry`), and a 409 is never retried.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import time

try:
    from urllib.parse import quote as _quote
except ImportError:  # pragma: no cover - Python 2
    from urllib import quote as _quote

from .. import errors
from .base import SHARING_TRAIT, Backend
from .secrets import secret_values
from .tokens import SessionTokens
from ..rules.microversions import MAX_MICROVERSION, MIN_MICROVERSION, version_str, version_tuple
from ..rules.allocations import CONSUMER_TYPE_MICROVERSION, names_consumer_type

_NOBODY = object()
#: the reshaper microversion that leaves each consumer's type as it is (1.38 requires one)
KEEP_TYPE_MICROVERSION = '1.37'
_RETRY_STATUSES = (502, 503, 504)
_REQUEST_ID_HEADERS = ('openstack-request-id', 'x-openstack-request-id')
_MAX_TEXT_DETAIL = 800

#: the code of an error that is the identity service's (Keystone), not Placement's
IDENTITY_CODE = 'placement_upgrade.identity'

#: said once, by this module, in the detail of a 403 on POST /reshaper (callers add nothing)
RESHAPE_ROLE_HINT = (
    'POST /reshaper was refused by policy: the credentials need the `service` role '
    '(the default policy of placement:reshaper:reshape is role:service), or the cloud\'s '
    'policy must grant placement:reshaper:reshape to one of their roles.')


def _seg(value):
    """Quote one path segment (uuids and [A-Z0-9_] names pass unchanged)."""
    return _quote(str(value), safe='')


def _strip_links(obj):
    if isinstance(obj, dict):
        return dict((k, v) for k, v in obj.items() if k != 'links')
    return obj


def _clean_detail(detail):
    """Placement's detail is webob's "explanation\\n\\n specific message  ": keep the specific part."""
    if not isinstance(detail, str):
        return detail
    head, sep, tail = detail.partition('\n\n')
    text = tail if sep and tail.strip() else detail
    text = ' '.join(text.split())
    return text


def _header(headers, name):
    if headers is None:
        return None
    try:
        value = headers.get(name)
    except AttributeError:
        return None
    if value is None:
        # plain dicts (fakes) are case-sensitive
        for key in headers:
            if str(key).lower() == name:
                return headers[key]
    return value


def _auth_url(conn):
    """The ``auth_url`` openstacksdk resolved (options, clouds.yaml or OS_AUTH_URL), or None."""
    try:
        auth = conn.config.config.get('auth') or {}
    except AttributeError:
        return None
    return auth.get('auth_url') or None


def _ks_exceptions():
    """keystoneauth's exception classes, or None when keystoneauth is not importable."""
    try:
        from keystoneauth1 import exceptions as ks_exc
    except ImportError:
        return None
    return ks_exc


def _names_url(exc, auth_url, endpoint):
    """True when keystoneauth's error is about ``auth_url`` (not Placement's endpoint).

    An HttpError carries the URL it came from; a connection error names it in its message.
    """
    if not auth_url:
        return False
    text = getattr(exc, 'url', None) or str(exc)
    base = auth_url.rstrip('/')
    if base not in text:
        return False
    return not (endpoint and endpoint.rstrip('/') in text and len(endpoint.rstrip('/')) > len(base))


def _text(exc, limit=400):
    """An exception as one sentence for a message (no trailing period, bounded)."""
    text = ' '.join(str(exc).split()).rstrip('.')
    return text if len(text) <= limit else text[:limit] + '...'


#: what a message says of a refused connection (nothing listens at the port: nothing was sent)
REFUSED = 'could not be reached: the connection was refused'


def _refused(exc):
    """True when a transport failure is a refused connection (nothing listens at the port)."""
    seen = 0
    todo = [exc]
    while todo and seen < 12:
        item = todo.pop()
        seen += 1
        if isinstance(item, ConnectionRefusedError):
            return True
        todo.extend(x for x in (getattr(item, '__cause__', None), getattr(item, '__context__', None),
                                getattr(item, 'reason', None)) if x is not None)
        todo.extend(a for a in getattr(item, 'args', ()) if isinstance(a, BaseException))
    text = str(exc)
    return 'Connection refused' in text or '[Errno 111]' in text


def _timed_out(exc, ks):
    if ks is not None and isinstance(exc, ks.ConnectTimeout):
        return True
    name = type(exc).__name__
    return name in ('ConnectTimeout', 'ReadTimeout', 'Timeout', 'timeout') or isinstance(exc, TimeoutError)


def no_answer(exc, ks=None):
    """What a request that got no HTTP answer met: :data:`REFUSED`, ``timed out`` or ``could
    not be reached`` (the verb phrase of a message naming the service)."""
    if _refused(exc):
        return REFUSED
    if _timed_out(exc, ks):
        return 'timed out'
    return 'could not be reached'


def _where(auth_url):
    return 'The identity service (Keystone) at %s' % (auth_url or '(auth_url not known)')


def identity_error(exc, auth_url, ks):
    """The typed error for a keystoneauth failure while authenticating (Placement not contacted).

    Its code is :data:`IDENTITY_CODE`: the failure is Keystone's, not Placement's.
    """
    err = _identity_error(exc, auth_url, ks)
    err.code = IDENTITY_CODE
    return err


def _identity_error(exc, auth_url, ks):
    where = _where(auth_url)
    text = _text(exc)
    request_id = getattr(exc, 'request_id', None)
    if isinstance(exc, ks.ConnectionError):
        return errors.NoAnswer(
            '%s %s: %s. Check auth_url (the auth option, clouds.yaml or OS_AUTH_URL), that Keystone '
            'is up, and that this host reaches it (proxy, firewall, TLS).' % (where, no_answer(exc, ks), text))
    if isinstance(exc, ks.HttpError):
        status = exc.http_status or 500
        if status == 401:
            return errors.Unauthorized(
                '%s rejected the credentials (401 Unauthorized): check the user name and password '
                '(or the application credential id and secret, or the token), the user and project '
                'domains and the project. Placement was not contacted.' % where, request_id=request_id)
        if status == 404 and 'token' in str(exc).lower():
            return errors.Unauthorized(
                '%s does not accept the token (%s): it is expired or revoked; get a new token, or use '
                'password or application credential auth.' % (where, text), request_id=request_id)
        if status in _RETRY_STATUSES or status >= 500:
            return errors.ServiceUnavailable(
                '%s answered %s while authenticating: %s. Check that Keystone (and its database) '
                'is healthy.' % (where, status, text), status=status, request_id=request_id)
        err = errors.from_response(status, None, request_id=request_id)
        err.detail = ('%s refused the authentication (%s): %s. Check the project, domain and scope '
                      'the credentials ask for.' % (where, status, text))
        err.args = (err.detail,)
        return err
    if isinstance(exc, ks.DiscoveryFailure):
        return errors.ConfigurationError(
            '%s did not answer identity version discovery: %s. Check auth_url (it should be the '
            'Keystone endpoint, for example https://keystone.example:5000/v3).' % (where, text))
    return errors.ConfigurationError(
        'Cannot authenticate with %s: %s. Check auth_type and the auth options.'
        % (where.replace('The identity', 'the identity'), text))


#: Placement's ResourceProviderConcurrentUpdateDetected, as its fault wrapper words a 500; and
#: MariaDB's deadlock (1213), which rolls the whole transaction back (the traits handler has no
#: oslo.db retry)
_RP_RACE = ('Another thread concurrently updated the resource provider data',
            'Deadlock found when trying to get lock')


def _lost_trait_race(status, method, path, detail):
    """Placement 16's ``PUT /resource_providers/{uuid}/traits`` checks the generation it is given,
    then bumps it in the same writer transaction; another worker's write in between makes the bump
    raise ResourceProviderConcurrentUpdateDetected, which that handler (unlike DELETE's, and the
    inventory, aggregate, allocation and reshaper handlers) does not turn into a 409: the fault
    wrapper answers 500.  The transaction was rolled back, so it is a generation conflict: re-read
    and retry, not an answer that may or may not have been applied.  Seen with several workers on
    MariaDB (docs/reliability.md (g)); SQLite behind one process serialises the two writes.  So is
    an InnoDB deadlock there: InnoDB rolled the transaction back, and nothing retries it."""
    return (status == 500 and method == 'PUT' and path.endswith('/traits')
            and any(words in (detail or '') for words in _RP_RACE))


class _Connector(object):
    """The two steps of :meth:`RestBackend.from_options`, each retried like a GET."""

    def __init__(self, conn, auth_url, ks, config_errors, log, retries, backoff):
        self.conn = conn
        self.auth_url = auth_url
        self.ks = ks
        self.config_errors = config_errors
        self.log = log
        self.attempts = 1 + retries
        self.backoff = backoff

    def _retry(self, what, attempt, why):
        delay = self.backoff * (2 ** (attempt - 1)) if self.backoff else 0
        if self.log is not None:
            self.log('%s: %s; retry %d of %d in %.2f s' % (what, _text(why, 200), attempt, self.attempts - 1, delay))
        if delay:
            time.sleep(delay)

    def _catalog_lacks(self, service_type):
        """True when the session's token came with a catalog that has no endpoint of
        ``service_type`` in this connection's region and interface (and the connection names
        none of its own for it)."""
        try:
            config = self.conn.config
            if config.get_endpoint(service_type):
                return False
            catalog = self.conn.session.auth.auth_ref.service_catalog
            return not catalog.get_urls(service_type=service_type, interface=config.get_interface(service_type),
                                        region_name=config.get_region_name(service_type))
        except Exception:  # pylint: disable=broad-except
            return True

    def authenticate(self, service_type='placement'):
        """Get a token (Keystone) before Placement is looked up, so a failure names Keystone.

        Within an ansible-playbook run, a token an earlier task of the run got with the same
        credentials is used instead of a new one while keystoneauth finds it good (tokens.py), and
        while the catalog it came with has an endpoint of ``service_type`` (placement; None: not
        checked) in this region and interface;
        returns the session's :class:`SessionTokens` (None when nothing is shared)."""
        session = getattr(self.conn, 'session', None)
        if self.ks is None or session is None:
            return None
        tokens = SessionTokens.of(session)
        if tokens is not None and tokens.restore() and service_type and self._catalog_lacks(service_type):
            # the catalog the shared token came with has no endpoint of the service here (a
            # region or an endpoint added since it was issued): a token of its own, with today's
            tokens.drop()
        for attempt in range(1, self.attempts + 1):
            try:
                session.get_auth_headers()
                if tokens is not None:
                    tokens.keep()
                return tokens
            except self.ks.ClientException as exc:
                err = identity_error(exc, self.auth_url, self.ks)
                if isinstance(err, errors.ServiceUnavailable) and attempt < self.attempts:
                    self._retry('authentication with %s' % (self.auth_url or 'the identity service'),
                                attempt, exc)
                    continue
                raise err

    def _endpoint(self):
        """Placement's endpoint for messages: the override, else the catalog's (no new request)."""
        try:
            override = self.conn.config.get_endpoint('placement')
            if override:
                return override
            config = self.conn.config
            return self.conn.session.get_endpoint(
                service_type='placement', interface=config.get_interface('placement'),
                region_name=config.get_region_name('placement')) or '(placement endpoint)'
        except Exception:  # pylint: disable=broad-except
            return '(placement endpoint)'

    def placement_endpoint(self):
        """Placement's endpoint from the override or the catalog (no request), or None when not found."""
        found = self._endpoint()
        return None if found == '(placement endpoint)' else found

    def _watch(self):
        """Record what the requests under openstacksdk's version discovery met (keystoneauth's
        DiscoveryFailure keeps neither the status nor the connection error): returns
        ``(seen, undo)``; ``seen`` gets ``response`` (the last answer) or ``error`` (the last
        transport failure).  Nothing is sent for it."""
        seen = {}
        inner = getattr(getattr(self.conn, 'session', None), 'session', None)
        orig = getattr(inner, 'request', None)
        if orig is None or not callable(orig):
            return seen, lambda: None
        had = 'request' in vars(inner)

        def request(*args, **kwargs):
            try:
                resp = orig(*args, **kwargs)
            except Exception as exc:
                seen.clear()
                seen['error'] = exc
                raise
            seen.clear()
            seen['response'] = resp
            return resp

        def undo():
            if had:
                inner.request = orig
            else:
                del inner.request

        inner.request = request
        return seen, undo

    def _discovery_error(self, exc, seen, attempts):
        """The error of a failed version discovery (GET /), from what its requests met."""
        endpoint = self._endpoint()
        check = ('Check that Placement is up and that its endpoint (catalog entry or endpoint option) '
                 'is right and reachable from this host.')
        if seen.get('error') is not None:
            return errors.NoAnswer(
                'Placement at %s %s (GET /, version discovery) after %d attempts: %s. %s'
                % (endpoint, no_answer(seen['error'], self.ks), attempts, _text(seen['error']), check))
        resp = seen.get('response')
        status = getattr(resp, 'status_code', None)
        if status is None:
            return errors.ServiceUnavailable(
                'Placement at %s could not be reached or did not answer version discovery (GET /) '
                'after %d attempts: %s. %s' % (endpoint, attempts, _text(exc), check))
        body = _text(' '.join((getattr(resp, 'text', '') or '').split()), 200) or '(no body)'
        reason = getattr(resp, 'reason', None) or ''
        if status == 401:
            return errors.Unauthorized(
                'Placement at %s answered 401 Unauthorized to GET / (version discovery): %s. Placement '
                'itself answers GET / without checking credentials, so the endpoint (catalog entry or '
                'endpoint option) may not be Placement\'s, or a proxy in front of it asks for credentials '
                'this run does not send.' % (endpoint, body))
        if status >= 500:
            return errors.ServiceUnavailable(
                'Placement at %s answered %d %s to GET / (version discovery) after %d attempts: %s. '
                'Check that Placement (and its database) is healthy.'
                % (endpoint, status, reason, attempts, body), status=status)
        if status >= 400:
            err = errors.from_response(status, None)
            err.detail = ('Placement at %s answered %d %s to GET / (version discovery): %s. Check that '
                          'the endpoint (catalog entry or endpoint option) is Placement\'s.'
                          % (endpoint, status, reason, body))
            err.args = (err.detail,)
            return err
        return errors.ServiceUnavailable(
            'Placement at %s answered GET / with %d but no version discovery document keystoneauth '
            'could read (%s): %s. %s' % (endpoint, status, body, _text(exc), check))

    def placement(self):
        """``conn.placement``: the catalog lookup and openstacksdk's version discovery (GET /)."""
        ks = self.ks
        for attempt in range(1, self.attempts + 1):
            seen, undo = self._watch()
            try:
                return self.conn.placement
            except self.config_errors as exc:
                if ks is not None and isinstance(exc, ks.EndpointNotFound):
                    raise errors.ConfigurationError(
                        'No Placement endpoint in the service catalog of %s (check region_name and '
                        'interface, and that the placement service is registered): %s'
                        % (self.auth_url or 'the identity service', exc))
                if ks is not None and isinstance(exc, ks.HttpError) and not isinstance(exc, ks.DiscoveryFailure):
                    raise identity_error(exc, self.auth_url, ks)
                if ks is not None and isinstance(exc, (ks.DiscoveryFailure, ks.ConnectionError)):
                    if isinstance(exc, ks.ConnectionError) and _names_url(exc, self.auth_url, None):
                        err = identity_error(exc, self.auth_url, ks)
                        if attempt < self.attempts:
                            self._retry('authentication with %s' % self.auth_url, attempt, exc)
                            continue
                        raise err
                    if isinstance(exc, ks.ConnectionError) and not seen:
                        seen['error'] = exc
                    # openstacksdk runs version discovery here: an unreachable or
                    # down Placement fails now, before any request of ours.
                    err = self._discovery_error(exc, seen, attempt)
                    if isinstance(err, errors.ServiceUnavailable) and attempt < self.attempts:
                        self._retry('GET / (version discovery) at Placement %s' % self._endpoint(), attempt, exc)
                        continue
                    raise err
                raise errors.ConfigurationError('Cannot find the Placement service: %s' % (exc,))
            finally:
                undo()
        raise errors.ConfigurationError('Cannot find the Placement service')  # pragma: no cover


def _one_cloud_or_named(kwargs):
    """No cloud named: openstacksdk (as openstack.cloud) takes ``OS_CLOUD``, the ``OS_*``
    variables, or the ONE cloud of the clouds.yaml it reads (AWX's OpenStack credential sets
    only ``OS_CLIENT_CONFIG_FILE``, with one cloud).  With several clouds and none named it
    would connect to none of them: say which there are."""
    if kwargs.get('auth') or os.environ.get('OS_CLOUD') or os.environ.get('OS_AUTH_URL'):
        return
    try:
        from openstack import config as sdk_config
        names = [n for n in sdk_config.OpenStackConfig().get_cloud_names() if n not in ('envvars', 'defaults')]
    except Exception:  # pylint: disable=broad-except  # openstacksdk reports a bad file itself
        return
    if len(names) > 1:
        raise errors.ConfigurationError(
            'No cloud named, and the clouds.yaml openstacksdk reads (%s) holds %d clouds: %s. Name '
            'one with the cloud option or OS_CLOUD.'
            % (os.environ.get('OS_CLIENT_CONFIG_FILE') or 'clouds.yaml', len(names), ', '.join(sorted(names))))


class RestBackend(Backend):
    """Backend over a keystoneauth Adapter whose endpoint is Placement's root.

    ``RestBackend(adapter)`` negotiates the microversion at once (``GET /``).
    ``connection`` (an openstack Connection) is closed by :meth:`close` when given.
    """

    kind = 'rest'

    #: How many times a safe call is retried after a connection failure or 502/503/504.
    retries = 3
    #: Seconds before the first retry; doubled each time.
    backoff = 0.25

    def __init__(self, adapter, connection=None, log=None, auth_url=None, endpoint=None):
        self._adapter = adapter
        self._connection = connection
        self._log = log
        self._auth_url = auth_url
        self._closed = False
        self._endpoint = None
        self._version = None
        self._ks = _ks_exceptions()
        # the run's shared Keystone tokens, for this backend's session (from_options; tokens.py)
        self._tokens = None
        if adapter is None:
            # opened for nova alone (from_options(placement=False)): Placement is not looked up;
            # ``endpoint`` is where the catalog (or the auth's one endpoint) puts it, read without a
            # request: nova/compute.py tells a compute endpoint that is only Placement's by it
            self._endpoint = endpoint
            return
        self._endpoint = self._find_endpoint()
        self._version = self._negotiate()

    # -- construction -------------------------------------------------------
    @classmethod
    def from_options(cls, opts, log=None, placement=True):
        """Connect with openstack.cloud-style options and negotiate the microversion.

        ``opts``: ``cloud`` (name in clouds.yaml, or a dict of connection
        arguments), ``auth`` (dict), ``auth_type``, ``region_name``,
        ``validate_certs`` (-> verify), ``ca_cert`` (-> cacert), ``client_cert``
        (-> cert), ``client_key`` (-> key), ``interface``, ``api_timeout``.
        ``None`` values are left to clouds.yaml / the environment / defaults.
        ``log``: optional callable taking one message (retries are written to it).

        Two steps, each retried like a GET and each failing with a message naming its
        service: authentication with the identity service (Keystone at ``auth_url``;
        nothing to do for ``admin_token``), then Placement's endpoint (from the catalog
        or the options) and its version discovery.

        ``placement=False``: authentication only, for a caller that talks to nova alone through
        :attr:`session` / :attr:`connection` (the compute_service module): Placement is neither
        looked up nor asked (two requests fewer), and any Placement call fails.
        """
        opts = dict(opts or {})
        try:
            import openstack
        except ImportError:
            raise errors.ConfigurationError(
                'The REST backend needs the openstacksdk Python library on the host that runs '
                'the module (pip install "openstacksdk>=1.0.0"), or use embedded_db instead.')
        cloud = opts.get('cloud')
        mapping = (('auth', 'auth'), ('auth_type', 'auth_type'), ('region_name', 'region_name'),
                   ('validate_certs', 'verify'), ('ca_cert', 'cacert'), ('client_cert', 'cert'),
                   ('client_key', 'key'), ('interface', 'interface'), ('api_timeout', 'api_timeout'))
        kwargs = dict((sdk_name, opts[name]) for name, sdk_name in mapping if opts.get(name) is not None)
        if isinstance(cloud, dict):
            if 'auth' in kwargs or 'auth_type' in kwargs:
                raise errors.ConfigurationError(
                    'cloud was given as a dict of connection arguments: put auth and auth_type '
                    'inside it instead of passing them separately.')
            merged = dict(cloud)
            merged.update(kwargs)
            kwargs = merged
        elif cloud:
            kwargs['cloud'] = cloud
        else:
            _one_cloud_or_named(kwargs)
        ks_exc = _ks_exceptions()
        config_errors = (openstack.exceptions.SDKException,)
        if ks_exc is not None:
            config_errors += (ks_exc.ClientException,)
        try:
            conn = openstack.connect(**kwargs)
        except config_errors as exc:
            raise errors.ConfigurationError('Cannot set up the connection to Placement: %s' % (exc,))
        try:
            auth_url = _auth_url(conn)
            connector = _Connector(conn, auth_url, ks_exc, config_errors, log, cls.retries, cls.backoff)
            # (nova's endpoint may be given to the caller instead of found in the catalog: for it the
            # shared token's catalog is taken as it is)
            tokens = connector.authenticate('placement' if placement else None)
            if not placement:
                backend = cls(None, connection=conn, log=log, auth_url=auth_url,
                              endpoint=connector.placement_endpoint())
            else:
                backend = cls(connector.placement(), connection=conn, log=log, auth_url=auth_url)
            backend._tokens = tokens
            return backend
        except BaseException:
            conn.close()
            raise

    def secret_values(self):
        """The secrets of the cloud configuration openstacksdk resolved (clouds.yaml, OS_*).

        For the Ansible side to add to ``no_log_values``; empty when built from an Adapter.
        """
        try:
            return secret_values(self._connection.config.config)
        except AttributeError:
            return set()

    def _find_endpoint(self):
        getter = getattr(self._adapter, 'get_endpoint', None)
        if getter is None:
            return getattr(self._adapter, 'endpoint_override', None)
        try:
            return getter()
        except Exception as exc:  # keystoneauth: catalog / auth failures
            raise self._transport_error(exc, 'GET', '/')

    def _negotiate(self):
        body = self._call('GET', '/', retry=True, versioned=False)
        try:
            doc = body['versions'][0]
            server_max = version_tuple(doc.get('max_version') or '1.0')
            server_min = version_tuple(doc.get('min_version') or '1.0')
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            raise errors.UnsupportedVersion(
                'Placement at %s did not report its microversions in GET / (got %r); need %s or newer'
                % (self.endpoint, body, version_str(MIN_MICROVERSION)))
        if server_max < MIN_MICROVERSION:
            raise errors.UnsupportedVersion(
                'Placement at %s supports microversions up to %s, but placement.upgrade needs at '
                'least %s (POST /reshaper); upgrade Placement first'
                % (self.endpoint, version_str(server_max), version_str(MIN_MICROVERSION)))
        if server_min > MAX_MICROVERSION:
            raise errors.UnsupportedVersion(
                'Placement at %s supports microversions %s to %s, but placement.upgrade knows '
                'only up to %s; upgrade the collection'
                % (self.endpoint, version_str(server_min), version_str(server_max),
                   version_str(MAX_MICROVERSION)))
        return min(server_max, MAX_MICROVERSION)

    # -- session -----------------------------------------------------------
    @property
    def microversion(self):
        return version_str(self._version or MIN_MICROVERSION)

    @property
    def microversion_tuple(self):
        return tuple(self._version or MIN_MICROVERSION)

    @property
    def endpoint(self):
        return self._endpoint or '(placement endpoint)'

    @property
    def connection(self):
        """The openstack Connection the backend was built from (None when given an Adapter)."""
        return self._connection

    @property
    def session(self):
        """The keystoneauth Session of the backend's Adapter (nova.py reaches nova through it), or
        of its Connection when it was opened without Placement."""
        if self._adapter is None:
            return getattr(self._connection, 'session', None)
        return getattr(self._adapter, 'session', None)

    def close(self):
        if self._closed:
            return
        self._closed = True
        if self._tokens is not None:
            # a token keystoneauth renewed during the task (near its expiry, or refused with 401)
            self._tokens.keep()
        if self._connection is not None:
            try:
                self._connection.close()
            finally:
                self._connection = None

    # -- HTTP ----------------------------------------------------------------
    def _call(self, method, path, body=_NOBODY, params=None, retry=False, versioned=True,
              want=None, microversion=None):
        """One Placement call; returns the decoded body (None for no body).

        ``want``: optional dict filled with ``status`` of the answer and ``attempts``
        (how many times the call was sent).
        """
        if self._closed:
            raise errors.ConfigurationError('the REST backend was closed')
        if self._adapter is None:
            raise errors.ConfigurationError('the REST backend was opened for nova alone (placement=False): '
                                            'no Placement call (%s %s) can be made through it' % (method, path))
        kwargs = {'raise_exc': False, 'headers': {'Accept': 'application/json'}}
        if versioned:
            kwargs['microversion'] = microversion or self.microversion
        if body is not _NOBODY:
            kwargs['json'] = body
        if params:
            kwargs['params'] = params
        attempts = 1 + (self.retries if retry else 0)
        resp = None
        for attempt in range(1, attempts + 1):
            if want is not None:
                want['attempts'] = attempt
            try:
                resp = self._adapter.request(path, method, **kwargs)
            except Exception as exc:
                err = self._transport_error(exc, method, path)
                if isinstance(err, errors.ServiceUnavailable) and attempt < attempts:
                    self._retrying(method, path, attempt, attempts, err.detail)
                    continue
                raise err
            if resp.status_code in _RETRY_STATUSES and attempt < attempts:
                self._retrying(method, path, attempt, attempts, 'Placement answered %s' % resp.status_code)
                continue
            break
        if want is not None:
            want['status'] = resp.status_code
            want['request_id'] = self._request_id(resp)
        if resp.status_code >= 400:
            raise self._http_error(resp, method, path)
        return self._decode(resp)

    def _retrying(self, method, path, attempt, attempts, why):
        delay = self.backoff * (2 ** (attempt - 1)) if self.backoff else 0
        if self._log is not None:
            self._log('%s %s: %s; retry %d of %d in %.2f s' % (method, path, _text(why, 200), attempt, attempts - 1, delay))
        self._sleep(attempt)

    def _sleep(self, attempt):
        if self.backoff:
            time.sleep(self.backoff * (2 ** (attempt - 1)))

    @staticmethod
    def _decode(resp):
        if resp.status_code == 204:
            return None
        content = getattr(resp, 'content', None)
        if content is not None and not content:
            return None
        try:
            return resp.json()
        except ValueError:
            return getattr(resp, 'text', None) or None

    def _request_id(self, resp):
        headers = getattr(resp, 'headers', None)
        for name in _REQUEST_ID_HEADERS:
            value = _header(headers, name)
            if value:
                return value
        return None

    def _http_error(self, resp, method, path):
        status = resp.status_code
        try:
            body = resp.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            text = (getattr(resp, 'text', '') or '').strip()
            body = text[:_MAX_TEXT_DETAIL] if text else None
        request_id = self._request_id(resp)
        if status == 401:
            err = errors.Unauthorized(
                'Placement at %s rejected the credentials (401 Unauthorized) for %s %s: the token is '
                'missing, expired or revoked (a token given in auth.token is used as it is: get a '
                'fresh one, or use password or application credential auth), or Placement cannot '
                'validate tokens with the identity service (its [keystone_authtoken] settings).'
                % (self.endpoint, method, path), request_id=request_id)
            if isinstance(body, dict) and body.get('errors'):
                err.request_id = body['errors'][0].get('request_id') or request_id
        else:
            err = errors.from_response(status, body, request_id=request_id)
            if isinstance(body, dict):
                err.detail = _clean_detail(err.detail)
            if _lost_trait_race(status, method, path, err.detail):
                err = errors.ConcurrentUpdate(
                    'Placement at %s answered %s to %s %s: %s (its traits handler lets a generation conflict '
                    'between its check and its write escape as a 500; the write was rolled back)'
                    % (self.endpoint, status, method, path, err.detail), status=409, request_id=err.request_id)
            elif status >= 500 and not isinstance(err, errors.ServiceUnavailable):
                title = err.title if err.title != 'Error' else (getattr(resp, 'reason', None) or 'Error')
                err = errors.ServiceUnavailable(
                    'Placement at %s answered %s to %s %s: %s'
                    % (self.endpoint, status, method, path, err.detail),
                    status=status, code=err.code, title=title, request_id=err.request_id)
            elif status == 403 and path == '/reshaper':
                err.detail = '%s Placement said: %s' % (RESHAPE_ROLE_HINT, err.detail)
        err.args = (err.detail,)
        err.method = method
        err.path = path
        return err

    def _transport_error(self, exc, method, path):
        """Map an exception raised while sending a request to a typed error.

        Placement's own answers come back as responses (``raise_exc=False``); what
        keystoneauth raises is mostly the identity service's (a token expiring during the
        run is renewed on the next request): an HttpError or a connection error is
        Keystone's when it names ``auth_url`` (an HttpError without a URL was raised while
        authenticating), Placement's otherwise.
        """
        ks = self._ks
        if ks is None or not isinstance(exc, ks.ClientException):
            raise exc
        if isinstance(exc, (ks.HttpError, ks.ConnectionError)) and _names_url(exc, self._auth_url, self._endpoint):
            err = identity_error(exc, self._auth_url, ks)
        elif isinstance(exc, ks.HttpError) and not getattr(exc, 'url', None):
            err = identity_error(exc, self._auth_url, ks)   # raised while authenticating
        elif isinstance(exc, ks.HttpError):
            # keystoneauth's own discovery of Placement's microversions
            status = exc.http_status or 500
            text = 'Placement at %s answered %s to %s %s: %s' % (self.endpoint, status, method, path, exc)
            request_id = getattr(exc, 'request_id', None)
            if status >= 500:
                err = errors.ServiceUnavailable(text, status=status, request_id=request_id)
            else:
                err = errors.from_response(status, None, request_id=request_id)
                err.detail = text
                err.args = (text,)
        elif isinstance(exc, ks.ConnectionError):
            what = no_answer(exc, ks)
            # a reset or a read timeout can come after the server applied a write
            sent = '' if method in ('GET', 'HEAD') or what == REFUSED else (
                ' The %s may or may not have been applied: re-read before retrying.' % method)
            err = errors.NoAnswer(
                'Placement at %s %s (%s %s): %s. Check that Placement is up and that this host '
                'reaches its endpoint.%s' % (self.endpoint, what, method, path, exc, sent))
        elif isinstance(exc, ks.EndpointNotFound):
            err = errors.ConfigurationError(
                'No Placement endpoint in the service catalog (check region_name and '
                'interface): %s' % (exc,))
        else:
            err = identity_error(exc, self._auth_url, ks)
        err.method = method
        err.path = path
        return err

    # -- resource providers -------------------------------------------------
    def list_providers(self, name=None, uuid=None, in_tree=None):
        params = {}
        if name is not None:
            params['name'] = name
        if uuid is not None:
            params['uuid'] = uuid
        if in_tree is not None:
            params['in_tree'] = in_tree
        body = self._call('GET', '/resource_providers', params=params, retry=True)
        return [_strip_links(p) for p in body['resource_providers']]

    def get_provider(self, uuid):
        return _strip_links(self._call('GET', '/resource_providers/%s' % _seg(uuid), retry=True))

    def sharing_providers(self, aggregates):
        aggregates = sorted(set(aggregates or ()))
        if not aggregates:
            return []
        # member_of (1.3, in: form) and required (1.18): one request, whatever the cloud's size
        params = {'member_of': 'in:' + ','.join(aggregates), 'required': SHARING_TRAIT}
        body = self._call('GET', '/resource_providers', params=params, retry=True)
        return [_strip_links(p) for p in body['resource_providers']]

    def create_provider(self, name, uuid=None, parent_provider_uuid=None):
        body = {'name': name}
        if uuid is not None:
            body['uuid'] = uuid
        if parent_provider_uuid is not None:
            body['parent_provider_uuid'] = parent_provider_uuid
        if uuid is None:
            # Placement picks the uuid: a retry could create a second provider
            return _strip_links(self._call('POST', '/resource_providers', body=body))
        # With the uuid given, a retry cannot create a second provider: retry it like a GET.
        # A 409 after a lost answer may be the provider the lost attempt created.
        sent = {}
        try:
            return _strip_links(self._call('POST', '/resource_providers', body=body, retry=True, want=sent))
        except errors.Conflict as exc:
            if sent.get('attempts', 1) < 2:
                raise
            try:
                found = self.get_provider(uuid)
            except errors.NotFound:
                raise exc
            if found.get('name') != name or found.get('parent_provider_uuid') != parent_provider_uuid:
                raise exc
            if self._log is not None:
                self._log('POST /resource_providers: provider %s (%s) was created by an attempt whose '
                          'answer was lost; read back' % (name, uuid))
            return found

    def update_provider(self, uuid, name, parent_provider_uuid=None):
        # A PUT: the parent is always sent, so None un-parents (1.37+) and a
        # caller that only renames passes the current parent.
        body = {'name': name, 'parent_provider_uuid': parent_provider_uuid}
        return _strip_links(self._call('PUT', '/resource_providers/%s' % _seg(uuid), body=body))

    def delete_provider(self, uuid):
        self._call('DELETE', '/resource_providers/%s' % _seg(uuid))

    # -- inventories ------------------------------------------------------
    def get_inventories(self, uuid):
        return self._call('GET', '/resource_providers/%s/inventories' % _seg(uuid), retry=True)

    def set_inventories(self, uuid, generation, inventories):
        body = {'resource_provider_generation': generation, 'inventories': inventories}
        return self._call('PUT', '/resource_providers/%s/inventories' % _seg(uuid), body=body)

    def set_inventory(self, uuid, resource_class, generation, inventory):
        body = dict(inventory)
        body['resource_provider_generation'] = generation
        path = '/resource_providers/%s/inventories/%s' % (_seg(uuid), _seg(resource_class))
        try:
            return self._call('PUT', path, body=body)
        except errors.BadRequest as exc:
            # Placement's PUT of one class only UPDATES (a class the provider
            # does not have is 400 "No inventory record ..."), and its POST
            # /inventories ignores the generation.  Create with a
            # generation-checked PUT of the whole set instead.
            current = self.get_inventories(uuid)
            if resource_class in current['inventories']:
                raise exc
        if current['resource_provider_generation'] != generation:
            raise errors.ConcurrentUpdate('resource provider generation conflict',
                                          status=409, code=errors.CONCURRENT_UPDATE)
        wanted = dict(current['inventories'])
        wanted[resource_class] = dict(inventory)
        done = self.set_inventories(uuid, generation, wanted)
        record = dict(done['inventories'][resource_class])
        record['resource_provider_generation'] = done['resource_provider_generation']
        return record

    def _check_generation(self, uuid, generation, what):
        current = self.get_inventories(uuid)['resource_provider_generation']
        if current != generation:
            err = errors.ConcurrentUpdate(
                'resource provider generation conflict: %s of resource provider %s expected '
                'generation %s, the provider is at %s. Please retry your request.'
                % (what, uuid, generation, current))
            err.method = 'DELETE'
            err.path = '/resource_providers/%s/inventories' % uuid
            raise err

    def delete_inventory(self, uuid, resource_class, generation=None):
        # DELETE has no body: Placement checks against the generation IT reads,
        # so a caller's generation can only be compared before (a small window
        # remains between that read and the DELETE).
        if generation is not None:
            self._check_generation(uuid, generation, 'deleting the %s inventory' % resource_class)
        self._call('DELETE', '/resource_providers/%s/inventories/%s' % (_seg(uuid), _seg(resource_class)))

    def delete_inventories(self, uuid, generation=None):
        if generation is None:
            self._call('DELETE', '/resource_providers/%s/inventories' % _seg(uuid))
        else:
            # PUT of an empty set is DELETE-all with a real compare-and-update
            # (same InventoryInUse, same +1), so no read-then-delete window.
            self.set_inventories(uuid, generation, {})

    def get_usages(self, uuid):
        return self._call('GET', '/resource_providers/%s/usages' % _seg(uuid), retry=True)

    # -- traits and aggregates -------------------------------------------
    def list_traits(self, name=None):
        params = {'name': name} if name is not None else None
        return self._call('GET', '/traits', params=params, retry=True)['traits']

    def ensure_trait(self, name):
        want = {}
        self._call('PUT', '/traits/%s' % _seg(name), retry=True, want=want)
        return want['status'] == 201

    def get_provider_traits(self, uuid):
        return self._call('GET', '/resource_providers/%s/traits' % _seg(uuid), retry=True)

    def set_provider_traits(self, uuid, generation, traits):
        body = {'resource_provider_generation': generation, 'traits': list(traits)}
        return self._call('PUT', '/resource_providers/%s/traits' % _seg(uuid), body=body)

    def get_aggregates(self, uuid):
        return self._call('GET', '/resource_providers/%s/aggregates' % _seg(uuid), retry=True)

    def set_aggregates(self, uuid, generation, aggregates):
        body = {'resource_provider_generation': generation, 'aggregates': list(aggregates)}
        return self._call('PUT', '/resource_providers/%s/aggregates' % _seg(uuid), body=body)

    # -- resource classes -------------------------------------------------
    def list_resource_classes(self):
        body = self._call('GET', '/resource_classes', retry=True)
        return [rc['name'] for rc in body['resource_classes']]

    def ensure_resource_class(self, name):
        want = {}
        self._call('PUT', '/resource_classes/%s' % _seg(name), retry=True, want=want)
        return want['status'] == 201

    # -- allocations -----------------------------------------------------
    def get_allocations(self, consumer_uuid):
        return self._call('GET', '/allocations/%s' % _seg(consumer_uuid), retry=True)

    def put_allocations(self, consumer_uuid, body):
        self._call('PUT', '/allocations/%s' % _seg(consumer_uuid), body=body)

    def post_allocations(self, body):
        self._call('POST', '/allocations', body=body)

    def delete_allocations(self, consumer_uuid):
        self._call('DELETE', '/allocations/%s' % _seg(consumer_uuid))

    def get_provider_allocations(self, uuid):
        return self._call('GET', '/resource_providers/%s/allocations' % _seg(uuid), retry=True)

    # -- reshaper -------------------------------------------------------------
    def reshape(self, body):
        # No consumer naming a type: send it at 1.37, where Placement keeps each consumer's
        # type (1.38+ requires one and would relabel nova's untyped consumers).
        # returns Placement's answer: {"status": 204, "request_id": its x-openstack-request-id}
        typed = names_consumer_type(body.get('allocations') if isinstance(body, dict) else None)
        want = {}
        if typed or self.microversion_tuple < CONSUMER_TYPE_MICROVERSION:
            self._call('POST', '/reshaper', body=body, want=want)
        else:
            self._call('POST', '/reshaper', body=body, microversion=KEEP_TYPE_MICROVERSION, want=want)
        return {'status': want.get('status'), 'request_id': want.get('request_id')}
