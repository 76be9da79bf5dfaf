# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Request objects: what a core call is asked, as one object instead of a long parameter list.

A request class names its fields and their defaults in ``FIELDS`` (``((name, default), ...)``);
an instance holds every field as an attribute.  A field not named there is refused
(``TypeError``, as Python refuses an unknown keyword argument), so a misspelt option fails
where it is given, as it did when the options were parameters.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class Request(object):
    """The base of the core's request objects (see the module doc)."""

    FIELDS = ()

    def __init__(self, **fields):
        names = [name for name, _default in self.FIELDS]
        unknown = sorted(set(fields) - set(names))
        if unknown:
            raise TypeError('%s got unexpected field(s): %s (its fields: %s)'
                            % (type(self).__name__, ', '.join(unknown), ', '.join(names)))
        for name, default in self.FIELDS:
            setattr(self, name, fields.get(name, default))

    @classmethod
    def of(cls, request=None, **fields):
        """A request of ``fields`` when ``request`` is None; else ``request`` (one of this class) with
        the fields given that are not None (a caller's positional defaults) put in."""
        if request is None:
            return cls(**fields)
        if not isinstance(request, cls):
            raise TypeError('expected a %s, got %r' % (cls.__name__, request))
        given = dict((name, value) for name, value in fields.items() if value is not None)
        return request.replace(**given) if given else request

    def replace(self, **fields):
        """A copy with ``fields`` changed."""
        values = dict((name, getattr(self, name)) for name, _default in self.FIELDS)
        values.update(fields)
        return type(self)(**values)

    def __repr__(self):
        return '%s(%s)' % (type(self).__name__, ', '.join(
            '%s=%r' % (name, getattr(self, name)) for name, _default in self.FIELDS))
