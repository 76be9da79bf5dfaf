# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""fleet/preflight.py's probe of POST /reshaper: it changes nothing, so a lost answer (a reset
connection behind uWSGI, seen failing a whole roll's pre-flight in a fresh-clone run) is sent
again, a bounded number of times; every other answer is taken as it is."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.placement.upgrade.plugins.module_utils._placement import errors
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import preflight


class Backend(object):
    kind = 'rest'

    def __init__(self, *answers):
        self.answers = list(answers)
        self.sent = []

    def reshape(self, body):
        self.sent.append(body)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def lost():
    return errors.NoAnswer("Placement at http://p could not be reached (POST /reshaper): ('Connection aborted.', "
                           "ConnectionResetError(104, 'Connection reset by peer'))")


def test_a_lost_answer_is_sent_again_and_the_next_answer_counts():
    said = []
    backend = Backend(lost(), lost(), errors.BadRequest('JSON does not validate'))
    passed, detail = preflight.probe_reshape_permission(backend, log=said.append)
    assert passed is True and 'refused by the schema' in detail
    assert len(backend.sent) == 3 and backend.sent[0] == backend.sent[2] == preflight.PROBE_BODY
    assert [line.split(': sent again')[1] for line in said] == [' (2 of 3)', ' (3 of 3)']


def test_answers_lost_every_time_fail_the_check_saying_so():
    backend = Backend(lost(), lost(), lost())
    passed, detail = preflight.probe_reshape_permission(backend)
    assert passed is False and len(backend.sent) == 3
    assert detail.startswith('the probe POST /reshaper got an unexpected answer: ') and 'reset by peer' in detail


def test_a_refusal_is_not_sent_again():
    backend = Backend(errors.Forbidden('Policy does not allow placement:reshaper:reshape to be performed.'), lost())
    passed, detail = preflight.probe_reshape_permission(backend)
    assert passed is False and len(backend.sent) == 1 and 'Policy does not allow' in detail
