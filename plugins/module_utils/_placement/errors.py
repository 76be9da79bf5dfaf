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

Every code an error carries is one entry of :data:`CATALOG` (code, HTTP status, the error types
that carry it, meaning): Placement's codes and the collection's own (``placement_upgrade.*``),
each a constant of this module that the error types and the raise sites name; the table of
docs/operator-guide.md ("Error codes") is generated from it (.ci/error-catalog.py) and a unit
test fails when they differ.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import math

# -- the error catalog: every code an error of the collection carries, in one place ------

#: one code of the catalog: ``code``, ``status`` (the HTTP status, as text: ``none`` when the error
#: has no HTTP status, status 0), ``raised_as`` (the error types that carry it), ``meaning``
ErrorCode = collections.namedtuple('ErrorCode', 'code status raised_as meaning')

_CATALOG = []


def _code(code, status, raised_as, meaning):
    """Register one code in :data:`CATALOG` and return it (the constant's value)."""
    _CATALOG.append(ErrorCode(code, status, raised_as, meaning))
    return code


# Placement's error codes (placement/errors.py in openstack-placement 16.0.0): the embedded store
# raises them as the real service answers them, the REST backend keeps the code Placement sent.
DEFAULT = _code('placement.undefined_code', '409 (or any)', 'CapacityExceeded; any error without a code of its own',
                'Placement\'s catch-all code; on a 409 an allocation does not fit (capacity, min/max unit, step '
                'size). Never shown in a message, kept in the error\'s fields')
CONCURRENT_UPDATE = _code('placement.concurrent_update', '409', 'ConcurrentUpdate',
                          'a generation did not match: re-read and retry (bounded: conflict_retries)')
INVENTORY_INUSE = _code('placement.inventory.inuse', '409', 'InventoryInUse',
                        'a class still allocated on the provider would be removed from its inventory')
DUPLICATE_NAME = _code('placement.duplicate_name', '409', 'DuplicateName',
                       'a provider of that name exists (provider names are globally unique)')
PROVIDER_IN_USE = _code('placement.resource_provider.inuse', '409', 'ProviderInUse',
                        'the provider has allocations: it cannot be deleted')
PROVIDER_CANNOT_DELETE_PARENT = _code('placement.resource_provider.cannot_delete_parent', '409', 'CannotDeleteParent',
                                      'the provider has children: delete them first')
RESOURCE_PROVIDER_NOT_FOUND = _code('placement.resource_provider.not_found', '404 (400 in POST /reshaper)',
                                    'NotFound, BadRequest', 'no provider of that uuid or name')
ILLEGAL_DUPLICATE_QUERYPARAM = _code('placement.query.duplicate_key', '400', 'BadRequest (as Placement answered)',
                                     'a query parameter given twice')
QUERYPARAM_BAD_VALUE = _code('placement.query.bad_value', '400', 'BadRequest (as Placement answered)',
                             'a query parameter\'s value is not valid')
QUERYPARAM_MISSING_VALUE = _code('placement.query.missing_value', '400', 'BadRequest (as Placement answered)',
                                 'a query parameter without a value')

# The collection's own codes (no HTTP status unless said: the failure is not Placement's answer).
IDENTITY = _code('placement_upgrade.identity', '401, 503, another Keystone status, or none',
                 'Unauthorized, ServiceUnavailable, NoAnswer, ConfigurationError, the type of Keystone\'s status',
                 'the identity service (Keystone) failed: credentials rejected, a token it '
                 'does not know, unreachable, 5xx, no version discovery; Placement was not contacted')
NO_ANSWER = _code('placement_upgrade.no_answer', 'none', 'NoAnswer',
                  'no HTTP answer at all: the connection was refused, timed out or closed before an answer')
WAIT_TIMEOUT = _code('placement_upgrade.wait_timeout', 'none', 'WaitTimeout',
                     'a wait ran out of time: nova never showed the state waited for')
CONFIGURATION = _code('placement_upgrade.configuration', 'none', 'ConfigurationError',
                      'the backend options cannot be used (no database path and no cloud, no openstacksdk, no '
                      'Placement endpoint in the catalog, ...)')
STORE = _code('placement_upgrade.store', 'none', 'StoreError',
              'the embedded store\'s file cannot be used; nothing was written')
STORE_CORRUPT = _code('placement_upgrade.store.corrupt', 'none', 'StoreCorrupt',
                      'the embedded store fails SQLite\'s integrity check: restore it from a backup')
STORE_NOT_A_DATABASE = _code('placement_upgrade.store.not_a_database', 'none', 'StoreNotADatabase',
                             'the embedded_db file is empty (and may not be created) or is not SQLite')
STORE_FULL = _code('placement_upgrade.store.full', 'none', 'StoreFull',
                   'the disk of the embedded store is full: the write was rolled back')
STORE_IO = _code('placement_upgrade.store.io', 'none', 'StoreIOError',
                 'the embedded store cannot be opened, read or written: the write was rolled back')
BAD_INPUT = _code('placement_upgrade.bad_input', 'none', 'BadInput',
                  'a value given to the collection (an option, a device report, a snapshot, a record) has the '
                  'wrong shape; the message names the field')
DISCOVERY = _code('placement_upgrade.discovery', 'none', 'DiscoveryError',
                  'a sysfs file or a guest\'s domain XML of the node cannot be read or parsed; the message '
                  'names the file')
NOVA_CONF = _code('placement_upgrade.nova_conf', 'none', 'NovaConfError',
                  'the node\'s nova.conf cannot be read, or holds what nova would refuse')
LAYOUT = _code('placement_upgrade.layout', 'none', 'LayoutError',
               'the device report or the layout options cannot produce a layout')
MOVES = _code('placement_upgrade.moves', 'none', 'MovesError',
              'the move records (or the consumers\' split) cannot describe a reshape of this node')
PLAN = _code('placement_upgrade.plan', 'none', 'PlanError',
             'the reshape (or the rollback) cannot be planned: a consumer without an owner, capacity, nova\'s '
             'refusals, a consumer changed since the snapshot; nothing was changed')
SNAPSHOT = _code('placement_upgrade.snapshot', 'none', 'SnapshotError',
                 'a snapshot cannot be written, found or read, or a rollback must not apply it')
REPORT = _code('placement_upgrade.report', 'none', 'ReportError',
               'the fleet report cannot be written as asked (e.g. dest holds another run\'s records)')
REPORT_TEMPLATE = _code('placement_upgrade.report_template', 'none', 'TemplateError',
                        'a report template cannot be found, read or rendered')

#: every code, in the order above: the docs table (docs/operator-guide.md, .ci/error-catalog.py) is
#: generated from it
CATALOG = tuple(_CATALOG)


class PlacementError(Exception):
    """A failure with Placement's error fields.

    ``status`` is the HTTP status the real service answers with (the embedded
    store uses the same number), ``code`` Placement's error code.
    """

    status = 500
    default_code = DEFAULT
    #: the title when the raiser gives none (None: the status's title)
    default_title = None
    #: what an error of this type carries beside Placement's fields: keyword arguments, None when not given
    extra_fields = ()
    #: the message is the detail alone (an error with no HTTP status, whose detail says what happened)
    detail_is_message = False

    def __init__(self, detail, status=None, code=None, title=None, request_id=None, **extra):
        super(PlacementError, self).__init__(detail)
        unknown = sorted(set(extra) - set(self.extra_fields))
        if unknown:
            raise TypeError('%s() got unexpected keyword arguments: %s' % (type(self).__name__, ', '.join(unknown)))
        self.detail = detail
        if status is not None:
            self.status = status
        self.code = code or self.default_code
        self.title = title or self.default_title or _TITLES.get(self.status, 'Error')
        self.request_id = request_id
        for name in self.extra_fields:
            setattr(self, name, extra.get(name))

    def to_dict(self):
        return {
            'status': self.status,
            'code': self.code,
            'title': self.title,
            'detail': self.detail,
            'request_id': self.request_id,
        }

    def __str__(self):
        if self.detail_is_message:
            return self.detail
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
    default_code = NO_ANSWER
    default_title = 'No Answer'
    detail_is_message = True


class WaitTimeout(PlacementError):
    """A wait that ran out of time (nova never showed the state waited for): every request was
    answered, so it is no HTTP status; ``status`` is 0 and the message is the detail alone."""

    status = 0
    default_code = WAIT_TIMEOUT
    default_title = 'Timed Out'
    detail_is_message = True


class UnsupportedVersion(PlacementError):
    """The server's microversion is too old for what was asked."""

    status = 406


class LocalFileError(PlacementError):
    """A file of the node (sysfs, domain XML, nova.conf) that cannot be read or holds
    something the core refuses.  The message names the file; ``path`` carries it."""

    status = 0
    default_title = 'Error'
    extra_fields = ('path',)
    detail_is_message = True


class ConfigurationError(PlacementError):
    """Bad backend options (no database path and no cloud, missing openstacksdk, ...)."""

    status = 0
    default_code = CONFIGURATION


class StoreError(PlacementError):
    """The embedded store's file cannot be used: corrupt, not a database, disk full, I/O error.

    ``path`` is the database file, ``sqlite_error`` what SQLite said.  The message
    names both and says what to do; nothing was written (the transaction rolled
    back, or the file was refused before any write).
    """

    status = 0
    default_code = STORE
    default_title = 'Embedded Store Error'
    extra_fields = ('path', 'sqlite_error')
    detail_is_message = True


class StoreCorrupt(StoreError):
    """SQLite's integrity check fails or SQLite reports ``database disk image is malformed``."""

    default_code = STORE_CORRUPT


class StoreNotADatabase(StoreError, ConfigurationError):
    """The file is empty (and may not be created) or is not an SQLite database."""

    default_code = STORE_NOT_A_DATABASE


class StoreFull(StoreError):
    """``database or disk is full``: the write was rolled back."""

    default_code = STORE_FULL


class StoreIOError(StoreError):
    """``disk I/O error`` (or the file cannot be opened or written): the write was rolled back."""

    default_code = STORE_IO


class BadInput(PlacementError):
    """A value given to the collection (a module option, a device report, a snapshot, a node
    record) has the wrong shape.  The message names the field, what it must be and what it got.
    """

    status = 0
    default_code = BAD_INPUT
    default_title = 'Bad Input'
    extra_fields = ('field',)
    detail_is_message = True


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

#: a 409's type by its code (each type's own default_code)
_BY_CODE = dict((cls.default_code, cls)
                for cls in (ConcurrentUpdate, InventoryInUse, DuplicateName, ProviderInUse, CannotDeleteParent))

#: an answer's type by its HTTP status (each type's own status)
_BY_STATUS = dict((cls.status, cls)
                  for cls in (BadRequest, Unauthorized, Forbidden, NotFound, UnsupportedVersion, Conflict,
                              ServiceUnavailable))


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
