# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Typed errors of the placement core.

Every failure the core reports is a :class:`PlacementError` carrying the same
fields Placement puts in its error body (``status``, ``code``, ``title``,
``detail``, ``request_id``).  The embedded store raises them with exactly the
status and code the real service would return for the same operation, the REST
backend builds them from the server's error body, so callers (modules, the
planner, tests) never need to know which backend they talk to.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math

# Placement's error codes (placement/errors.py in openstack-placement 16.0.0).
DEFAULT = 'placement.undefined_code'
INVENTORY_INUSE = 'placement.inventory.inuse'
CONCURRENT_UPDATE = 'placement.concurrent_update'
DUPLICATE_NAME = 'placement.duplicate_name'
PROVIDER_IN_USE = 'placement.resource_provider.inuse'
PROVIDER_CANNOT_DELETE_PARENT = 'placement.resource_provider.cannot_delete_parent'
RESOURCE_PROVIDER_NOT_FOUND = 'placement.resource_provider.not_found'
ILLEGAL_DUPLICATE_QUERYPARAM = 'placement.query.duplicate_key'
QUERYPARAM_BAD_VALUE = 'placement.query.bad_value'
QUERYPARAM_MISSING_VALUE = 'placement.query.missing_value'


class PlacementError(Exception):
    """A failure with Placement's error fields.

    ``status`` is the HTTP status the real service answers with (the embedded
    store uses the same number), ``code`` Placement's error code.
    """

    status = 500
    default_code = DEFAULT

    def __init__(self, detail, status=None, code=None, title=None, request_id=None):
        super(PlacementError, self).__init__(detail)
        self.detail = detail
        if status is not None:
            self.status = status
        self.code = code or self.default_code
        self.title = title or _TITLES.get(self.status, 'Error')
        self.request_id = request_id

    def to_dict(self):
        return {
            'status': self.status,
            'code': self.code,
            'title': self.title,
            'detail': self.detail,
            'request_id': self.request_id,
        }

    def __str__(self):
        # Placement's catch-all code tells an operator nothing: it is kept in to_dict() only
        if self.code and self.code != DEFAULT:
            text = '%s %s (%s): %s' % (self.status, self.title, self.code, self.detail)
        else:
            text = '%s %s: %s' % (self.status, self.title, self.detail)
        if self.request_id:
            text += ' [request_id %s]' % self.request_id
        return text


class BadRequest(PlacementError):
    """400: the request is malformed or names something that does not exist."""

    status = 400


class Unauthorized(PlacementError):
    """401: the credentials were rejected (bad or expired token, wrong password) (REST only)."""

    status = 401


class Forbidden(PlacementError):
    """403: policy refuses the call (``POST /reshaper`` needs the service role)."""

    status = 403


class NotFound(PlacementError):
    """404: provider, consumer allocations, trait or resource class not found."""

    status = 404


class Conflict(PlacementError):
    """409: any conflict; ``code`` tells which one."""

    status = 409


class ConcurrentUpdate(Conflict):
    """409 placement.concurrent_update: a generation did not match."""

    default_code = CONCURRENT_UPDATE


class InventoryInUse(Conflict):
    """409 placement.inventory.inuse: an allocated class would be removed."""

    default_code = INVENTORY_INUSE


class DuplicateName(Conflict):
    """409 placement.duplicate_name: provider names are globally unique."""

    default_code = DUPLICATE_NAME


class ProviderInUse(Conflict):
    """409 placement.resource_provider.inuse: the provider has allocations."""

    default_code = PROVIDER_IN_USE


class CannotDeleteParent(Conflict):
    """409 placement.resource_provider.cannot_delete_parent."""

    default_code = PROVIDER_CANNOT_DELETE_PARENT


class CapacityExceeded(Conflict):
    """409 placement.undefined_code: an allocation does not fit."""

    default_code = DEFAULT


class ServiceUnavailable(PlacementError):
    """The service could not be reached or answered 5xx (REST backend only)."""

    status = 503


class NoAnswer(ServiceUnavailable):
    """No HTTP answer at all: the connection was refused, timed out or was closed before an
    answer (REST only).  Retried like a 503, but it is no HTTP status: ``status`` is 0 and the
    message is the detail alone, which says what happened ("refused the connection")."""

    status = 0
    default_code = 'placement_upgrade.no_answer'

    def __init__(self, detail, **kwargs):
        kwargs.setdefault('title', 'No Answer')
        super(NoAnswer, self).__init__(detail, **kwargs)

    def __str__(self):
        return self.detail


class WaitTimeout(PlacementError):
    """A wait that ran out of time (nova never showed the state waited for): every request was
    answered, so it is no HTTP status; ``status`` is 0 and the message is the detail alone."""

    status = 0
    default_code = 'placement_upgrade.wait_timeout'

    def __init__(self, detail, **kwargs):
        kwargs.setdefault('title', 'Timed Out')
        super(WaitTimeout, self).__init__(detail, **kwargs)

    def __str__(self):
        return self.detail


class UnsupportedVersion(PlacementError):
    """The server's microversion is too old for what was asked."""

    status = 406


class LocalFileError(PlacementError):
    """A file of the node (sysfs, domain XML, nova.conf) that cannot be read or holds
    something the core refuses.  The message names the file; ``path`` carries it."""

    status = 0
    default_title = 'Error'

    def __init__(self, detail, path=None, **kwargs):
        kwargs.setdefault('title', self.default_title)
        super(LocalFileError, self).__init__(detail, **kwargs)
        self.path = path

    def __str__(self):
        return self.detail


class ConfigurationError(PlacementError):
    """Bad backend options (no database path and no cloud, missing openstacksdk, ...)."""

    status = 0
    default_code = 'placement_upgrade.configuration'


class StoreError(PlacementError):
    """The embedded store's file cannot be used: corrupt, not a database, disk full, I/O error.

    ``path`` is the database file, ``sqlite_error`` what SQLite said.  The message
    names both and says what to do; nothing was written (the transaction rolled
    back, or the file was refused before any write).
    """

    status = 0
    default_code = 'placement_upgrade.store'

    def __init__(self, detail, path=None, sqlite_error=None, **kwargs):
        kwargs.setdefault('title', 'Embedded Store Error')
        super(StoreError, self).__init__(detail, **kwargs)
        self.path = path
        self.sqlite_error = sqlite_error

    def __str__(self):
        return self.detail


class StoreCorrupt(StoreError):
    """SQLite's integrity check fails or SQLite reports ``database disk image is malformed``."""

    default_code = 'placement_upgrade.store.corrupt'


class StoreNotADatabase(StoreError, ConfigurationError):
    """The file is empty (and may not be created) or is not an SQLite database."""

    default_code = 'placement_upgrade.store.not_a_database'


class StoreFull(StoreError):
    """``database or disk is full``: the write was rolled back."""

    default_code = 'placement_upgrade.store.full'


class StoreIOError(StoreError):
    """``disk I/O error`` (or the file cannot be opened or written): the write was rolled back."""

    default_code = 'placement_upgrade.store.io'


class BadInput(PlacementError):
    """A value given to the collection (a module option, a device report, a snapshot, a node
    record) has the wrong shape.  The message names the field, what it must be and what it got.
    """

    status = 0
    default_code = 'placement_upgrade.bad_input'

    def __init__(self, detail, field=None, **kwargs):
        kwargs.setdefault('title', 'Bad Input')
        super(BadInput, self).__init__(detail, **kwargs)
        self.field = field

    def __str__(self):
        return self.detail


#: the builtin types a message names a value by (bool before int: a bool is an int)
_PLAIN_TYPES = (bool, int, float, str, bytes, dict, list, tuple, set, frozenset)


def type_name(value):
    """What a wrongly shaped value is, for a message: ``str``, ``list``, ``null``, ``float nan``.

    A subclass of a builtin is named by the builtin: under ansible-core 2.19's data tagging a
    module argument or a templated value is an ``_AnsibleTaggedStr`` / ``_AnsibleTaggedList``
    / ``_AnsibleTaggedDict``, which an operator knows as str, list and dict.
    """
    if value is None:
        return 'null'
    if isinstance(value, float) and math.isnan(value):
        return 'float nan'
    if isinstance(value, float) and value in (float('inf'), float('-inf')):
        return 'float %s' % value
    for plain in _PLAIN_TYPES:
        if isinstance(value, plain):
            return plain.__name__
    return type(value).__name__


_TITLES = {
    0: 'Configuration Error',
    400: 'Bad Request',
    401: 'Unauthorized',
    403: 'Forbidden',
    404: 'Not Found',
    406: 'Not Acceptable',
    409: 'Conflict',
    500: 'Internal Server Error',
    503: 'Service Unavailable',
}

_BY_CODE = {
    CONCURRENT_UPDATE: ConcurrentUpdate,
    INVENTORY_INUSE: InventoryInUse,
    DUPLICATE_NAME: DuplicateName,
    PROVIDER_IN_USE: ProviderInUse,
    PROVIDER_CANNOT_DELETE_PARENT: CannotDeleteParent,
}

_BY_STATUS = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    406: UnsupportedVersion,
    409: Conflict,
    503: ServiceUnavailable,
}


def from_response(status, body, request_id=None):
    """Build the typed error for a Placement error response.

    ``body`` is the decoded JSON (``{"errors": [{...}]}``) or None/text when the
    server did not send Placement's error body.
    """
    err = {}
    if isinstance(body, dict) and body.get('errors'):
        err = body['errors'][0] or {}
    code = err.get('code') or DEFAULT
    detail = err.get('detail') or (body if isinstance(body, str) and body else 'HTTP %s' % status)
    title = err.get('title')
    request_id = err.get('request_id') or request_id
    if status == 409 and code == DEFAULT:
        cls = CapacityExceeded
    elif status == 409:
        cls = _BY_CODE.get(code, Conflict)
    else:
        cls = _BY_STATUS.get(status, PlacementError)
    return cls(detail, status=status, code=code, title=title, request_id=request_id)
