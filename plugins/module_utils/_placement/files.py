# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Files the collection writes (snapshots, fleet report files, node records): ONE atomic writer,
and ONE way to make (and to check beforehand) the private directories that hold them.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os
import re
import stat
import tempfile
import time

#: Mode of every directory the collection creates: snapshots and reports name consumers and projects.
DIR_MODE = 0o700

#: When this process began to use this module (its import: before any file it writes).  A temporary
#: file of one of its own names older than that is the leftover of a write that was interrupted
#: (the process killed between creating the file and renaming it), never one still being written.
STARTED = time.time()

#: the random part ``tempfile.mkstemp`` puts in a name
_RANDOM = '[a-z0-9_]{8}'

#: the leftovers this process removed (paths), until :func:`take_removed` takes them
_removed = []


def leftover_pattern(name, suffix, sidecars=(), name_regex=None):
    """The names of the temporary files a write of ``name`` creates: ``.<name>.<8 random characters><suffix>``,
    and each of them followed by one of ``sidecars`` (``-wal``, ``-shm``: SQLite's files beside a store).
    ``name_regex`` (instead of ``name``): the names of a family of files (every timestamped snapshot of
    a root, whose names are never written twice)."""
    tail = '(?:%s)?' % '|'.join(re.escape(s) for s in sidecars) if sidecars else ''
    head = name_regex if name_regex is not None else re.escape(name)
    return re.compile(r'^\.%s\.%s%s%s$' % (head, _RANDOM, re.escape(suffix), tail))


def remove_leftovers(directory, name, suffix, sidecars=(), name_regex=None):
    """Remove what an interrupted write of ``name`` left in ``directory``: the files whose names match
    exactly :func:`leftover_pattern` (nothing else), a temporary file and its sidecars together, only
    when every one of them is older than this process (:data:`STARTED`; a write in progress in
    another process is newer).  Never fails the write (a file that cannot be removed is left).
    Returns the removed paths; :func:`take_removed` gives every path removed so far, for the task's
    result."""
    directory = os.path.abspath(directory or '.')
    pattern = leftover_pattern(name, suffix, sidecars, name_regex)
    groups = {}
    for entry in _matching(directory, pattern):   # every match starts with '.'
        base = entry
        for sidecar in sidecars:
            if entry.endswith(suffix + sidecar):
                base = entry[:-len(sidecar)]
        groups.setdefault(base, []).append(os.path.join(directory, entry))
    stale = []
    for base in sorted(groups):
        paths = sorted(groups[base])
        try:
            if any(os.lstat(path).st_mtime >= STARTED for path in paths):
                continue
        except OSError:
            continue
        stale.extend(paths)
    return _remove(stale)


def remove_leftover_links(directory, name):
    """Remove the temporary links an interrupted replacement of the link ``name`` left in ``directory``
    (``<name>.<pid>``, made and then renamed over ``name``; see the fleet report's ``latest``): only
    symbolic links of exactly that pattern, older than this process.  Returns the removed paths, kept
    for :func:`take_removed` too."""
    directory = os.path.abspath(directory or '.')
    pattern = re.compile(r'^%s\.[0-9]+$' % re.escape(name))
    stale = []
    for entry in _matching(directory, pattern):
        path = os.path.join(directory, entry)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISLNK(info.st_mode) and info.st_mtime < STARTED:
            stale.append(path)
    return _remove(stale)


def _matching(directory, pattern):
    """The names in ``directory`` that ``pattern`` matches, sorted ([] when it cannot be listed)."""
    try:
        return sorted(entry for entry in os.listdir(directory) if pattern.match(entry))
    except OSError:
        return []


def _remove(paths):
    """Unlink ``paths`` (one that cannot be removed is left); the removed ones are returned and kept
    for :func:`take_removed`."""
    removed = []
    for path in paths:
        try:
            os.unlink(path)
        except OSError:
            continue
        removed.append(path)
    _removed.extend(removed)
    return removed


def take_removed():
    """The leftovers :func:`remove_leftovers` removed since the last call (and forget them)."""
    taken = list(_removed)
    del _removed[:]
    return taken


def make_dirs(path, mode=DIR_MODE):
    """Create ``path`` and every missing directory above it, each with ``mode`` (as
    ``ansible.builtin.file`` with ``state: directory`` does; ``os.makedirs`` gives the mode to
    the last one only).  An existing directory is left as it is.  An empty path is an error, as
    for ``os.makedirs`` (never the current directory)."""
    if not path:
        raise OSError(errno.ENOENT, 'No such file or directory', path)
    missing = []
    current = os.path.abspath(path)
    while not os.path.isdir(current):
        missing.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, mode)
        except OSError:
            if not os.path.isdir(directory):  # (made meanwhile by another run is fine)
                raise


def directory_problem(path):
    """Why ``path`` cannot be the directory a run writes into, or None when it can: an existing,
    writable directory, or a missing one whose nearest existing parent is a writable directory
    (:func:`make_dirs` creates it when the first file is written)."""
    if not path:
        return 'an empty path is not a directory'
    path = os.path.abspath(path)
    if os.path.exists(path):
        if not os.path.isdir(path):
            return '%s exists and is not a directory' % path
        if not os.access(path, os.W_OK | os.X_OK):
            return '%s is not writable' % path
        return None
    parent = os.path.dirname(path)
    while not os.path.exists(parent) and os.path.dirname(parent) != parent:
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        return '%s cannot be created: %s is not a directory' % (path, parent)
    if not os.access(parent, os.W_OK | os.X_OK):
        return '%s cannot be created: %s is not writable' % (path, parent)
    return None


def atomic_write(path, text, mode=0o600):
    """Write ``text`` to ``path`` so a reader sees the old file or the whole new one, never a part.

    A temporary file in the same directory is created with ``mode`` (0600 by
    default), written, fsync'ed and renamed over ``path``; the directory is
    fsync'ed after the rename (where the platform allows it).  The temporary files
    of ``path`` an interrupted write left there first are removed (:func:`remove_leftovers`).
    """
    directory = os.path.dirname(path) or '.'
    remove_leftovers(directory, os.path.basename(path), '.tmp')
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
