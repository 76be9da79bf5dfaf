# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A GET's retries, keystoneauth's: the request arguments that ask for them, and their log.

:class:`.rest_transport.RestTransport` sends a call that writes nothing (GET, HEAD) with
``connect_retries`` / ``status_code_retries`` (its ``retries``), ``retriable_status_codes``
(502, 503, 504), keystoneauth's own delay (0.5 s, doubling; none when its ``backoff`` is 0), and a logger of keystoneauth's own name
whose warnings ("Retrying in ...") are also written to the transport's ``log`` in the words
its own retries use.  Writes that are safe to resend stay in the transport's loop.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import logging

from .rest_errors import RETRY_STATUSES, names_url, text_of

#: the logger keystoneauth's Session logs with when it is given none
_KS_LOGGER = 'keystoneauth.session'
#: the calls keystoneauth retries itself (nothing is written: resending one is always safe)
SAFE_METHODS = ('GET', 'HEAD')
#: the shortest delay keystoneauth takes as given (0 and None mean its own exponential one from 0.5 s)
_NO_DELAY = 0.001


class _RetryLog(logging.Handler):
    """Writes keystoneauth's retry warnings of one call (``Retriable status code 503. Retrying in
    0.2s. 3 retries left``, ``Failure: .... Retrying in ...``) to the transport's ``log`` as its own
    retries were written: ``GET /path: Placement answered 503; retry 1 of 3 in 0.25 s``."""

    def __init__(self, transport, method, path):
        logging.Handler.__init__(self, logging.WARNING)
        self.transport = transport
        self.method = method
        self.path = path

    def emit(self, record):
        args = record.args if isinstance(record.args, dict) else {}
        if 'retries' not in args or 'delay' not in args:
            return
        transport = self.transport
        if 'code' in args:
            why = 'Placement answered %s' % args['code']
        else:
            why = args.get('e')
            try:
                why = transport._transport_error(why, self.method, self.path).detail
            except Exception:  # pylint: disable=broad-except  # the message is said as it is
                pass
        total = transport.retries
        # keystoneauth counts the two kinds apart (up to ``retries`` of each): the line says which
        which = 'retry' if 'code' in args else 'connection retry'
        if transport._log is not None:
            transport._log('%s %s: %s; %s %d of %d in %.2f s'
                           % (self.method, self.path, text_of(why, 200), which, total - int(args['retries']) + 1,
                              total, float(args['delay'])))


class KsRetries(object):
    """keystoneauth's retries of one safe call: the request's arguments, and its log."""

    def __init__(self, transport, method, path):
        self.transport = transport
        self.ks = transport._ks
        self.handler = _RetryLog(transport, method, path)
        # a logger of keystoneauth.session's name (what keystoneauth logs with by default), not
        # registered: its records reach keystoneauth's handlers (the SDK log) as before, and ours
        self.logger = logging.Logger(_KS_LOGGER)
        self.logger.parent = logging.getLogger(_KS_LOGGER)
        self.logger.addHandler(self.handler)

    def kwargs(self):
        """The request's arguments: with a ``backoff``, keystoneauth's own exponential delay (0.5 s,
        doubling: 3.5 s over three retries, which a Placement restarting needs); without one, none."""
        transport = self.transport
        kwargs = {'connect_retries': transport.retries, 'status_code_retries': transport.retries,
                  'retriable_status_codes': list(RETRY_STATUSES), 'logger': self.logger}
        if not transport.backoff:
            kwargs.update(connect_retry_delay=_NO_DELAY, status_code_retry_delay=_NO_DELAY)
        return kwargs

    def took(self, exc):
        """Whether keystoneauth retried this failure already (a connection failure to Placement;
        one to the identity service, renewing the token, is not retried by keystoneauth)."""
        ks = self.ks
        return (ks is not None and isinstance(exc, ks.RetriableConnectionFailure)
                and not names_url(exc, self.transport._auth_url, self.transport._endpoint))
