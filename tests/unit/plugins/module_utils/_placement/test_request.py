# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The request objects (request.py) that stand for the core's long parameter lists (issue 44)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement import request as _request
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper
from ansible_collections.placement.upgrade.plugins.module_utils._placement.nova import services
from ansible_collections.placement.upgrade.plugins.module_utils._placement.ops import providers


class Sample(_request.Request):
    FIELDS = (('name', None), ('attempts', 3), ('log', None))


def test_a_request_holds_its_fields_with_their_defaults():
    req = Sample(name='cn1')
    assert (req.name, req.attempts, req.log) == ('cn1', 3, None)
    assert req.replace(attempts=5).attempts == 5 and req.attempts == 3
    assert repr(req) == "Sample(name='cn1', attempts=3, log=None)"


def test_an_unknown_field_is_refused_where_it_is_given():
    with pytest.raises(TypeError) as info:
        Sample(nmae='cn1')
    assert 'nmae' in str(info.value) and 'name, attempts, log' in str(info.value)


def test_of_takes_a_request_or_its_fields():
    given = Sample(name='cn1', attempts=7)
    assert Sample.of(given) is given
    assert Sample.of(None, name='cn2').name == 'cn2'
    # a caller's positional default (None) leaves the request's field alone; a value replaces it
    assert Sample.of(given, name=None).name == 'cn1'
    assert Sample.of(given, name='cn3').name == 'cn3' and given.name == 'cn1'
    with pytest.raises(TypeError):
        Sample.of({'name': 'cn1'})


def test_the_core_calls_refuse_an_option_they_do_not_have(embedded_backend):
    # what Python said of an unknown keyword before: a TypeError naming it, before anything is read
    with pytest.raises(TypeError) as info:
        reshaper.reshape_node(embedded_backend, 'cn1', {}, snapshot_dirr='/tmp')
    assert 'snapshot_dirr' in str(info.value)
    with pytest.raises(TypeError):
        reshaper.rollback_node(embedded_backend, 'cn1', snapshot='x')
    with pytest.raises(TypeError):
        providers.ensure_provider(embedded_backend, nmae='cn1')
    with pytest.raises(TypeError):
        services.wait_for(None, 'cmp-01', 'up', timout=3)


def test_a_request_object_and_its_fields_give_the_same_call(embedded_backend):
    by_fields = providers.ensure_provider(embedded_backend, name='cn-req', check_mode=True)
    by_request = providers.ensure_provider(embedded_backend, providers.ProviderRequest(name='cn-req', check_mode=True))
    assert by_fields == by_request
    assert by_fields['changed'] is True and by_fields['provider']['name'] == 'cn-req'
    assert embedded_backend.list_providers(name='cn-req') == []
