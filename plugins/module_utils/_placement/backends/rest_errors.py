# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a failure of the REST backend's transport means, said as the typed error of :mod:`..errors`.

The identity service's failures (:func:`identity_error`: Keystone at ``auth_url`` rejects the
credentials, does not know a token, cannot be reached or answers 5xx), what a request that got no
answer met (:func:`no_answer`: refused, timed out, not reached), whether keystoneauth's error is
about ``auth_url`` or Placement's endpoint (:func:`names_url`), Placement's detail cleaned of
webob's preamble, and the 500 Placement's traits handler answers to a generation race
(:func:`lost_trait_race`).  :mod:`.rest_transport` raises them; nova/compute.py says nova's own
failures with them.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from .. import errors

#: the answers a safe call is retried on (and that, from Keystone, are its outage)
RETRY_STATUSES = (502, 503, 504)

#: the code of an error that is the identity service's (Keystone), not Placement's
IDENTITY_CODE = errors.IDENTITY


def clean_detail(detail):
    """Placement's detail is webob's "explanation\\n\\n specific message  ": keep the specific part."""
    if not isinstance(detail, str):
        return detail
    head, sep, tail = detail.partition('\n\n')
    text = tail if sep and tail.strip() else detail
    text = ' '.join(text.split())
    return text


def header(headers, name):
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


def auth_url_of(conn):
    """The ``auth_url`` openstacksdk resolved (options, clouds.yaml or OS_AUTH_URL), or None."""
    try:
        auth = conn.config.config.get('auth') or {}
    except AttributeError:
        return None
    return auth.get('auth_url') or None


def ks_exceptions():
    """keystoneauth's exception classes, or None when keystoneauth is not importable."""
    try:
        from keystoneauth1 import exceptions as ks_exc
    except ImportError:
        return None
    return ks_exc


def names_url(exc, auth_url, endpoint):
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


def text_of(exc, limit=400):
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
    text = text_of(exc)
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
        if status in RETRY_STATUSES or status >= 500:
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


def lost_trait_race(status, method, path, detail):
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
