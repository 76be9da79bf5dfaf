# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection version the code reports is the one galaxy.yml publishes."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import yaml

from ansible_collections.placement.upgrade.plugins.module_utils._placement.version import COLLECTION_VERSION

ROOT_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_collection_version_is_galaxy_version():
    with open(os.path.join(ROOT_DIR, 'galaxy.yml')) as handle:
        galaxy = yaml.safe_load(handle)
    assert COLLECTION_VERSION == str(galaxy['version'])
