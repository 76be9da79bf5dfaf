# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``sdk_log_path`` / ``sdk_log_level``, as openstack.cloud names them: openstacksdk's and
keystoneauth's log of the REST calls, against a real Keystone and the real Placement behind it,
with no secret in the file."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import logging
import os
import stat

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends import factory
from ansible_collections.placement.upgrade.plugins.modules import resource_provider_info

from keystone_server import shared_stack
from module_runner import run_module_main

pytestmark = [pytest.mark.real, pytest.mark.slow]


@pytest.fixture
def stack():
    return shared_stack()


@pytest.fixture(autouse=True)
def fresh_loggers():
    """Each test starts and ends with the SDK loggers as they were (handlers are per process)."""
    saved = dict((name, (list(logging.getLogger(name).handlers), logging.getLogger(name).level))
                 for name in factory.SDK_LOGGERS)
    yield
    for name, (handlers, level) in saved.items():
        logger = logging.getLogger(name)
        for handler in list(logger.handlers):
            if handler not in handlers:
                logger.removeHandler(handler)
                handler.close()
        logger.setLevel(level)


def test_debug_logs_every_request_and_no_secret(stack, tmp_path, capsys):
    log = tmp_path / 'sdk.log'
    args = dict(stack.password_auth('placement'), sdk_log_path=str(log), sdk_log_level='DEBUG')
    rc, result = run_module_main(resource_provider_info.main, args, capsys)
    assert rc == 0, result
    text = log.read_text()
    assert stat.S_IMODE(os.stat(str(log)).st_mode) == 0o600
    # the token request to Keystone and the calls to Placement, with their answers
    assert 'Making authentication request to %s/auth/tokens' % stack.auth_url in text, text[:2000]
    assert '%s/resource_providers' % stack.placement.url in text
    assert 'RESP' in text
    # no password, and no Fernet token (they begin gAAAAA): keystoneauth shows a digest
    assert stack.passwords['placement'] not in text
    assert 'gAAAAA' not in text
    assert 'X-Auth-Token: {SHA256}' in text


def test_info_logs_no_request(stack, tmp_path, capsys):
    log = tmp_path / 'sdk.log'
    rc, result = run_module_main(resource_provider_info.main,
                                 dict(stack.password_auth('placement'), sdk_log_path=str(log)), capsys)
    assert rc == 0, result
    assert log.exists()
    assert 'REQ: curl' not in log.read_text()


def test_no_log_without_the_option(stack, tmp_path, capsys):
    rc, result = run_module_main(resource_provider_info.main, stack.password_auth('placement'), capsys)
    assert rc == 0, result
    for name in factory.SDK_LOGGERS:
        assert not [h for h in logging.getLogger(name).handlers if getattr(h, 'placement_upgrade_path', None)]


def test_a_secret_written_by_the_libraries_is_masked(tmp_path):
    """Whatever a library logs, a secret of the options does not reach the file."""
    log = tmp_path / 'sdk.log'
    factory.sdk_logging(str(log), 'DEBUG', {'s3cr3t-Pw', 'app-cred-secret'})
    logging.getLogger('keystoneauth.session').debug('body {"password": "%s"} and %s', 's3cr3t-Pw', 'app-cred-secret')
    logging.getLogger('openstack.config').info('cloud with s3cr3t-Pw')
    text = log.read_text()
    assert 's3cr3t-Pw' not in text and 'app-cred-secret' not in text
    assert text.count('********') == 3, text


def test_an_unwritable_path_is_refused(stack, tmp_path, capsys):
    args = dict(stack.password_auth('placement'), sdk_log_path=str(tmp_path / 'no-such-dir' / 'sdk.log'))
    rc, result = run_module_main(resource_provider_info.main, args, capsys)
    assert rc == 1
    assert 'sdk_log_path %s cannot be written' % (tmp_path / 'no-such-dir' / 'sdk.log') in result['msg']
