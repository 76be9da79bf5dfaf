# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Placement's rules for resource providers: names, uuids, trees, deletion.

THE place for them (placement/objects/resource_provider.py and the provider
schemas): the embedded store and the operations behind the modules call these
functions, with the status, code and words of the real service.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import uuid as _uuid

from ..errors import BadRequest, CannotDeleteParent, ProviderInUse

#: PUT /resource_providers/{uuid} may change (or clear) a parent from 1.37 on.
REPARENT_MICROVERSION = (1, 37)
#: Placement's limit on a provider name (POST/PUT_RP_SCHEMA: maxLength 200).
NAME_MAX = 200
#: A provider as Placement shows it (GET /resource_providers/{u} without links).
PROVIDER_FIELDS = ('uuid', 'name', 'generation', 'parent_provider_uuid', 'root_provider_uuid')


def provider_view(prov):
    """The :data:`PROVIDER_FIELDS` of a provider (a dict, or a store row with those columns)."""
    get = prov.get if isinstance(prov, dict) else prov.__getitem__
    return dict((key, get(key)) for key in PROVIDER_FIELDS)


def name_error(name):
    """What Placement's schema says about a provider name (a string of at most 200 characters), or None.

    An empty name passes the schema; creating a provider refuses it (``name is required``).
    """
    if not isinstance(name, str):
        return "%r is not of type 'string' (name)" % (name,)
    if len(name) > NAME_MAX:
        return '%r is too long (name: at most %d characters)' % (name, NAME_MAX)
    return None


def is_uuid_like(value):
    """oslo_utils.uuidutils.is_uuid_like: what Placement's 'uuid' format accepts.

    A string that is a UUID in any of the forms ``uuid.UUID`` reads (dashes or not,
    braces, ``urn:uuid:``, any case) and has nothing else in it.
    """
    if not isinstance(value, str):
        return False
    try:
        canon = str(_uuid.UUID(value)).replace('-', '')
    except (TypeError, ValueError, AttributeError):
        return False
    text = value.lower()
    for junk in ('urn:', 'uuid:', '{', '}', '-'):
        text = text.replace(junk, '')
    return canon == text


def normalize_uuid(value):
    """Return the canonical (lower-case, dashed) form of a UUID or raise BadRequest."""
    if isinstance(value, _uuid.UUID):
        return str(value)
    if not is_uuid_like(value):
        raise BadRequest("'%s' is not a 'uuid'" % (value,))
    return str(_uuid.UUID(value))


# -- trees -----------------------------------------------------------------------------
def subtree(pairs, top):
    """``top`` and all its descendants, ``pairs`` being ``(provider, parent)`` of a tree (ids or uuids)."""
    children = {}
    for provider, parent in pairs:
        if parent is not None:
            children.setdefault(parent, []).append(provider)
    found, seen, todo = [], set(), [top]
    while todo:
        cur = todo.pop()
        if cur in seen:
            continue
        seen.add(cur)
        found.append(cur)
        todo.extend(children.get(cur, ()))
    return found


def create_refused(name, uuid, reason):
    """Placement's 400 when the provider object refuses a create."""
    return BadRequest('Unable to create resource provider "%s", %s: Object action create '
                      'failed because: %s' % (name, uuid, reason))


def update_refused(uuid, reason, action='update'):
    """Placement's 400 when the provider object refuses a save."""
    return BadRequest('Unable to save resource provider %s: Object action %s failed '
                      'because: %s' % (uuid, action, reason))


def check_create_parent(name, uuid, parent_uuid):
    """A new provider cannot be its own parent."""
    if parent_uuid is not None and parent_uuid == uuid:
        raise create_refused(name, uuid, 'parent provider UUID cannot be same as UUID. Please set parent '
                                         'provider UUID to None if there is no parent.')


def check_new_parent(uuid, parent, descendants):
    """Re-parenting ``uuid`` under ``parent`` (an id or uuid) must not make a loop: ``descendants``
    is :func:`subtree` of the provider (itself included)."""
    if parent in descendants:
        raise update_refused(uuid, 'creating loop in the provider tree is not allowed.')


def check_delete(uuid, has_children, has_allocations):
    """DELETE /resource_providers/{u}: children are checked first, then allocations."""
    if has_children:
        raise CannotDeleteParent('Unable to delete parent resource provider %s: It has child '
                                 'resource providers.' % uuid)
    if has_allocations:
        raise ProviderInUse('Unable to delete resource provider %s: Resource provider has '
                            'allocations.' % uuid)
