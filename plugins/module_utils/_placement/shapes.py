# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shapes of what the collection is given: module options, device reports, snapshots,
node records.  A wrong shape is :class:`.errors.BadInput` naming the field as a path
(``devices.gpus[0].address``).

Placement's rules are not here: each lives in one function of :mod:`.rules`.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from .errors import BadInput, type_name
from .rules.inventory import is_finite

_KINDS = {
    'mapping': (lambda v: isinstance(v, dict), 'a mapping'),
    'list': (lambda v: isinstance(v, list), 'a list'),
    'text': (lambda v: isinstance(v, str), 'a string'),
    'int': (lambda v: isinstance(v, int) and not isinstance(v, bool), 'an integer'),
    'number': (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and is_finite(v), 'a finite number'),
    'bool': (lambda v: isinstance(v, bool), 'true or false'),
    'scalar': (lambda v: isinstance(v, (str, int, float)) and not isinstance(v, bool), 'a string or a number'),
}


def shape_error(field, expected, value):
    """BadInput ``<field> must be <expected>, got <type>`` (the field as a path: ``devices.gpus[0].address``)."""
    return BadInput('%s must be %s, got %s' % (field, expected, type_name(value)), field=field)


def expect(value, kind, field, expected=None, optional=False):
    """``value`` when it is of ``kind`` (see :data:`_KINDS`; None too when ``optional``), else BadInput."""
    if value is None and optional:
        return value
    check, text = _KINDS[kind]
    if not check(value):
        raise shape_error(field, expected or text, value)
    return value


def expect_fields(record, field, kinds, expected='a mapping'):
    """Check a mapping's fields: ``kinds`` is ``{key: kind}``, a kind ending in ``?`` may be
    absent or null, one ending in ``!`` is required; other keys are not checked."""
    expect(record, 'mapping', field, expected)
    for key, kind in kinds.items():
        optional = not kind.endswith('!')
        kind = kind.rstrip('!?')
        if key not in record:
            if not optional:
                raise BadInput('%s.%s is required' % (field, key), field='%s.%s' % (field, key))
            continue
        expect(record[key], kind, '%s.%s' % (field, key), optional=optional)
    return record


def expect_list_of(value, kind, field, expected, item_expected=None, optional=True):
    """A list whose every item is of ``kind`` (``[i]`` in the field named on failure)."""
    if value is None and optional:
        return []
    expect(value, 'list', field, expected)
    for index, item in enumerate(value):
        expect(item, kind, '%s[%d]' % (field, index), item_expected)
    return value
