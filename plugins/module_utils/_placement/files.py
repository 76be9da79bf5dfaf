# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Files the collection writes (snapshots, fleet report files, node records): ONE atomic writer.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import tempfile


def atomic_write(path, text, mode=0o600):
    """Write ``text`` to ``path`` so a reader sees the old file or the whole new one, never a part.

    A temporary file in the same directory is created with ``mode`` (0600 by
    default), written, fsync'ed and renamed over ``path``; the directory is
    fsync'ed after the rename (where the platform allows it).
    """
    directory = os.path.dirname(path) or '.'
    fd, tmp = tempfile.mkstemp(prefix='.%s.' % os.path.basename(path), suffix='.tmp', dir=directory)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, 'w') as handle:
            fd = None
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.rename(tmp, path)
        tmp = None
        try:
            dir_fd = os.open(directory, os.O_RDONLY)
        except OSError:
            return
        try:
            os.fsync(dir_fd)
        except OSError:
            pass
        finally:
            os.close(dir_fd)
    finally:
        if fd is not None:
            os.close(fd)
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
