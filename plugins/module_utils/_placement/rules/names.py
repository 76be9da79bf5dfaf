# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Placement's naming rules: resource class, trait and consumer type names.

THE place for them: the embedded store, the operations behind the modules and
the layout policy all call these functions.  The standard names Placement seeds
(generated from os-resource-classes / os-traits) are data, not rules, and stay in
:mod:`..names`.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ..errors import BadRequest

CUSTOM_PREFIX = 'CUSTOM_'
#: placement.schemas.common: a resource class / trait name (and a consumer type) in a request.
NAME_PATTERN = re.compile(r'^[A-Z0-9_]+$')
#: A name that may be created: CUSTOM_ followed by [A-Z0-9_]+.
CUSTOM_PATTERN = re.compile(r'^CUSTOM_[A-Z0-9_]+$')
#: Longest resource class, trait or consumer type name.
NAME_MAX = 255


def matches_name(name):
    """The schema's pattern alone (a key of ``resources``, of ``inventories``): no length limit."""
    return isinstance(name, str) and bool(NAME_PATTERN.search(name))


def is_valid_name(name):
    """A resource class, trait or consumer type name Placement accepts: ``^[A-Z0-9_]+$``, at most 255."""
    return matches_name(name) and len(name) <= NAME_MAX


def is_custom(name):
    return isinstance(name, str) and name.startswith(CUSTOM_PREFIX)


def is_valid_custom_name(name):
    """A name that may be created (PUT /traits/{t}, PUT /resource_classes/{rc})."""
    return isinstance(name, str) and bool(CUSTOM_PATTERN.search(name)) and len(name) <= NAME_MAX


def validate_custom_name(name, kind='resource class'):
    """A new resource class or trait must be CUSTOM_ followed by [A-Z0-9_]+."""
    if not is_valid_custom_name(name):
        raise BadRequest("'%s' is not a valid custom %s name: it must match "
                         "^CUSTOM_[A-Z0-9_]+$" % (name, kind))
    return name


def validate_name(name, kind='resource class'):
    if not is_valid_name(name):
        raise BadRequest("'%s' is not a valid %s name: it must match ^[A-Z0-9_]+$"
                         % (name, kind))
    return name


def validate_consumer_type(value):
    if not is_valid_name(value):
        raise BadRequest("'%s' is not a valid consumer_type: it must match ^[A-Z0-9_]+$" % (value,))
    return value


def check_new_trait(name):
    """PUT /traits/{name}: Placement's 400 for a name that may not be created."""
    if not is_valid_custom_name(name):
        raise BadRequest('The trait is invalid. A valid trait must be no longer than 255 characters, '
                         'start with the prefix "CUSTOM_" and use following characters: "A"-"Z", '
                         '"0"-"9" and "_"')
    return name


def check_new_resource_class(name):
    """PUT /resource_classes/{name}: Placement's 400 for a name that may not be created."""
    if not is_valid_custom_name(name):
        raise BadRequest("JSON does not validate: %r does not match '^CUSTOM_[A-Z0-9_]+$'" % (name,))
    return name
