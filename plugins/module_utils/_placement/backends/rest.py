# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The REST backend: a real Placement API through openstacksdk / keystoneauth.

:class:`RestBackend` maps every :class:`~.backend.Backend` method onto one
Placement endpoint and returns Placement's own JSON (``links`` stripped).  Its
transport -- the connection (:meth:`RestBackend.from_options`, openstack.cloud's
option names), authentication and the run's shared tokens, the microversion
(``min(server max, 1.39)``, 1.30 at least), the typed errors and the retries of
safe calls -- is :class:`.rest_transport.RestTransport`, which it inherits; this
module holds Placement's calls (providers, inventories, traits and aggregates,
resource classes, allocations, the reshaper) and re-exports the transport's names
its callers know it by (:data:`IDENTITY_CODE`, :data:`RESHAPE_ROLE_HINT`,
:data:`REFUSED`, :func:`identity_error`, :func:`no_answer`: what a failure means is
:mod:`.rest_errors`').

* ``POST /resource_providers`` with the uuid given is retried like a GET (a 409 on a
  retry, for a provider that then reads back with that uuid, name and parent, is the
  provider the lost attempt created: it is returned); without a uuid it is not (a
  retry could create a second provider).
* ``POST /reshaper`` is sent at 1.37 unless a consumer names its type (1.38+ requires
  one and would relabel nova's untyped consumers).

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

try:
    from urllib.parse import quote as _quote
except ImportError:  # pragma: no cover - Python 2
    from urllib import quote as _quote

from .. import errors
from .base import SHARING_TRAIT, Backend
# re-exported (__all__): the names the backend's callers know it by
from .rest_errors import IDENTITY_CODE, REFUSED, identity_error, no_answer
from .rest_transport import RESHAPE_ROLE_HINT, RestTransport
from ..rules.allocations import CONSUMER_TYPE_MICROVERSION, names_consumer_type

__all__ = ['IDENTITY_CODE', 'KEEP_TYPE_MICROVERSION', 'REFUSED', 'RESHAPE_ROLE_HINT', 'RestBackend', 'identity_error',
           'no_answer']

#: the reshaper microversion that leaves each consumer's type as it is (1.38 requires one)
KEEP_TYPE_MICROVERSION = '1.37'


def _seg(value):
    """Quote one path segment (uuids and [A-Z0-9_] names pass unchanged)."""
    return _quote(str(value), safe='')


def _strip_links(obj):
    if isinstance(obj, dict):
        return dict((k, v) for k, v in obj.items() if k != 'links')
    return obj


class RestBackend(RestTransport, Backend):
    """Backend over a keystoneauth Adapter whose endpoint is Placement's root (the transport:
    :class:`.rest_transport.RestTransport`).

    ``RestBackend(adapter)`` negotiates the microversion at once (``GET /``).
    ``connection`` (an openstack Connection) is closed by :meth:`close` when given.
    """

    kind = 'rest'

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
