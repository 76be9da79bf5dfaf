# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures of the cloud twin (tests/cloud_twin, `make cloud-twin`, docs/cloud-twin.md).

``cloud`` (session): the control plane of tests/cloud_twin/cloud.py (MariaDB, RabbitMQ, Keystone,
Placement, nova-api/-conductor/-scheduler 34), started once, stopped by pid at the end of the
session even when a test fails.  Its run folder (every service's config and log) is kept under
``tests/output/cloud-twin/<UTC time>-<pid>/`` (``CLOUD_TWIN_RUN_DIR`` names another).
``clouds_yaml`` (session): a clouds.yaml of the user ``operator`` (cloud ``twin``) in that folder.
"""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import cloud as cloud_mod  # noqa: E402


@pytest.fixture(scope='session')
def cloud(request):
    twin = cloud_mod.Cloud(cloud_mod.default_run_dir())
    request.addfinalizer(twin.stop)
    twin.start()
    return twin


@pytest.fixture(scope='session')
def clouds_yaml(cloud):
    return cloud.clouds_yaml(cloud.path('clouds.yaml'))
