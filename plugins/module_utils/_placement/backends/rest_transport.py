# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The REST backend's transport: session, authentication, microversion, errors, retries, tokens.

:class:`RestTransport` is what :class:`.rest.RestBackend` (Placement's calls, one method per
endpoint) sends every request through: ``_call(method, path, ...)`` returns the decoded body or
raises the typed error.  Nothing here knows Placement's nouns (providers, inventories, ...) but
the error a policy gives ``POST /reshaper`` and the 500 Placement's traits handler answers to a
generation race (both turned into what they mean).

* Connection: :meth:`RestTransport.from_options` takes the openstack.cloud option
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
  502/503/504, at most ``retries`` (3) times, each retry written to the ``log`` callable
  when one was given.  A GET (``GET /`` too) is retried by keystoneauth itself
  (``connect_retries``, ``status_code_retries``, ``retriable_status_codes`` of the request,
  keystoneauth's own delay; it counts connection failures and answers apart, up to ``retries``
  of each: rest_retries.py): its warnings go to the ``keystoneauth`` logger (the SDK log) and
  are written to ``log`` as before; a failure keystoneauth does not retry (the identity service
  unreachable while the token is renewed) is retried here.  Retried here, with a short
  exponential backoff: the authentication and version discovery openstacksdk runs when the
  backend is built, ``PUT /traits/{name}``, ``PUT /resource_classes/{name}``, and
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

from .. import errors
from .rest_errors import (
    REFUSED,
    RETRY_STATUSES,
    auth_url_of,
    clean_detail,
    header,
    identity_error,
    ks_exceptions,
    lost_trait_race,
    names_url,
    no_answer,
    text_of,
)
from .rest_retries import SAFE_METHODS, KsRetries
from .secrets import secret_values
from .tokens import SessionTokens
from ..rules.microversions import MAX_MICROVERSION, MIN_MICROVERSION, version_str, version_tuple

_NOBODY = object()
_REQUEST_ID_HEADERS = ('openstack-request-id', 'x-openstack-request-id')
_MAX_TEXT_DETAIL = 800

#: said once, by this module, in the detail of a 403 on POST /reshaper (callers add nothing)
RESHAPE_ROLE_HINT = (
    'POST /reshaper was refused by policy: the credentials need the `service` role '
    '(the default policy of placement:reshaper:reshape is role:service), or the cloud\'s '
    'policy must grant placement:reshaper:reshape to one of their roles.')


class _Connector(object):
    """The two steps of :meth:`RestTransport.from_options`, each retried like a GET."""

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
            self.log('%s: %s; retry %d of %d in %.2f s' % (what, text_of(why, 200), attempt, self.attempts - 1, delay))
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
                % (endpoint, no_answer(seen['error'], self.ks), attempts, text_of(seen['error']), check))
        resp = seen.get('response')
        status = getattr(resp, 'status_code', None)
        if status is None:
            return errors.ServiceUnavailable(
                'Placement at %s could not be reached or did not answer version discovery (GET /) '
                'after %d attempts: %s. %s' % (endpoint, attempts, text_of(exc), check))
        body = text_of(' '.join((getattr(resp, 'text', '') or '').split()), 200) or '(no body)'
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
            'could read (%s): %s. %s' % (endpoint, status, body, text_of(exc), check))

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
                    if isinstance(exc, ks.ConnectionError) and names_url(exc, self.auth_url, None):
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
        config = sdk_config.OpenStackConfig()
        names = [n for n in config.get_cloud_names() if n not in ('envvars', 'defaults')]
    except Exception:  # pylint: disable=broad-except  # openstacksdk reports a bad file itself
        return
    if len(names) > 1:
        raise errors.ConfigurationError(
            'No cloud named, and the clouds.yaml openstacksdk reads (%s) holds %d clouds: %s. Name '
            'one with the cloud option or OS_CLOUD.'
            % (config.config_filename or config.secure_config_filename or 'clouds.yaml', len(names),
               ', '.join(sorted(names))))


class RestTransport(object):
    """The transport of :class:`.rest.RestBackend`: a keystoneauth Adapter whose endpoint is Placement's root.

    ``RestTransport(adapter)`` (a subclass, as it is built) negotiates the microversion at once (``GET /``).
    ``connection`` (an openstack Connection) is closed by :meth:`close` when given.
    """

    #: How many times a safe call is retried after a connection failure or 502/503/504.
    retries = 3
    #: Seconds before the first retry, doubled each time (a GET's retries, keystoneauth's: this
    #: many seconds apart, every time; 0: a millisecond, since keystoneauth reads 0 as its own
    #: exponential delay from 0.5 s)
    backoff = 0.25

    def __init__(self, adapter, connection=None, log=None, auth_url=None, endpoint=None):
        self._adapter = adapter
        self._connection = connection
        self._log = log
        self._auth_url = auth_url
        self._closed = False
        self._endpoint = None
        self._version = None
        self._ks = ks_exceptions()
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
        ks_exc = ks_exceptions()
        config_errors = (openstack.exceptions.SDKException,)
        if ks_exc is not None:
            config_errors += (ks_exc.ClientException,)
        try:
            conn = openstack.connect(**kwargs)
        except config_errors as exc:
            raise errors.ConfigurationError('Cannot set up the connection to Placement: %s' % (exc,))
        try:
            auth_url = auth_url_of(conn)
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
        # a GET is retried by keystoneauth (connect_retries / status_code_retries); a write that is
        # safe to resend (retry=True) by the loop below, which can look before it sends again
        retries = None
        if retry and method in SAFE_METHODS and self.retries > 0:
            retries = KsRetries(self, method, path)
            kwargs.update(retries.kwargs())
        resp = None
        for attempt in range(1, attempts + 1):
            if want is not None:
                want['attempts'] = attempt
            try:
                resp = self._adapter.request(path, method, **kwargs)
            except Exception as exc:
                err = self._transport_error(exc, method, path)
                if (isinstance(err, errors.ServiceUnavailable) and attempt < attempts
                        and (retries is None or not retries.took(exc))):
                    self._retrying(method, path, attempt, attempts, err.detail)
                    continue
                raise err
            if resp.status_code in RETRY_STATUSES and attempt < attempts and retries is None:
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
            self._log('%s %s: %s; retry %d of %d in %.2f s' % (method, path, text_of(why, 200), attempt, attempts - 1, delay))
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
            value = header(headers, name)
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
                err.detail = clean_detail(err.detail)
            if lost_trait_race(status, method, path, err.detail):
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
        if isinstance(exc, (ks.HttpError, ks.ConnectionError)) and names_url(exc, self._auth_url, self._endpoint):
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
