# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Placement microversions this core speaks, and how they are written and compared.

What each feature needs lives with its rule (for example
:data:`.allocations.CONSUMER_TYPE_MICROVERSION`); the range here bounds what the
backends negotiate.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

MIN_MICROVERSION = (1, 30)   # POST /reshaper
MAX_MICROVERSION = (1, 39)   # the newest this core knows (Placement 16.0.0)


def version_tuple(text):
    """'1.39' -> (1, 39)."""
    major, minor = str(text).split('.', 1)
    return int(major), int(minor)


def version_str(ver):
    return '%d.%d' % tuple(ver)
