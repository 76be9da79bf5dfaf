# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report's files: report.md and report.html drawn (:mod:`.render`), summary.json, written.

:func:`report_files` renders them, :func:`write_files` writes them atomically (mode 0600, fsync'ed)
into the run's directory (0700), :func:`write_report` does both; :func:`latest_link` points
``latest`` next to the run's directory at it.  The fleet_report module's action plugin renders on
the controller and has the module write what it rendered (:func:`write_files`).

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from .. import files as _files
from . import render
from .data import summary
from .labels import ReportError
from .records import FILE_MODE

#: the report files, in the order they are written
REPORT_FILES = ('report.md', 'report.html', 'summary.json')


def report_files(report, html_template=None, markdown_template=None):
    """``{file name: text}`` of the report: report.md and report.html rendered (the operator's
    templates, when given, else the shipped ones) and summary.json."""
    return {
        'report.md': render.render_markdown(report, markdown_template),
        'report.html': render.render_html(report, html_template),
        'summary.json': json.dumps(summary(report), indent=2, sort_keys=True, default=str) + '\n',
    }


def report_paths(dest):
    """``{"markdown", "html", "summary"}``: the paths of the report files in ``dest``."""
    return {
        'markdown': os.path.join(dest, 'report.md'),
        'html': os.path.join(dest, 'report.html'),
        'summary': os.path.join(dest, 'summary.json'),
    }


def write_files(dest, files):
    """Write ``{file name: text}`` (:func:`report_files`) into ``dest`` (created 0700; files 0600,
    atomically, in the order of :data:`REPORT_FILES`); return the paths (:func:`report_paths`)."""
    unknown = sorted(set(files) - set(REPORT_FILES))
    if unknown:
        raise ReportError('not a report file: %s (the report files are %s)' % (', '.join(unknown), ', '.join(REPORT_FILES)))
    _files.make_dirs(dest)
    for name in REPORT_FILES:
        if name in files:
            _files.atomic_write(os.path.join(dest, name), files[name], mode=FILE_MODE)
    return report_paths(dest)


def write_report(dest, report, html_template=None, markdown_template=None):
    """Write report.md, report.html and summary.json into ``dest`` (created 0700; files 0600); return the paths."""
    return write_files(dest, report_files(report, html_template, markdown_template))


def latest_link(dest):
    """Point a ``latest`` symbolic link next to ``dest`` at it (replaced atomically); the link, or
    None when a file that is not a link is in the way."""
    parent = os.path.dirname(os.path.abspath(dest))
    link = os.path.join(parent, 'latest')
    target = os.path.basename(os.path.abspath(dest))
    if os.path.islink(link) and os.readlink(link) == target:
        return link
    if os.path.exists(link) and not os.path.islink(link):
        return None
    _files.remove_leftover_links(parent, 'latest')     # what a run killed between the two steps below left
    tmp = '%s.%d' % (link, os.getpid())
    if os.path.lexists(tmp):
        os.unlink(tmp)
    os.symlink(target, tmp)
    os.rename(tmp, link)
    return link


def link_latest(dest, log):
    """:func:`latest_link`; a link that cannot be made is told to ``log``, never an error."""
    try:
        latest_link(dest)
    except OSError as exc:
        log('cannot update the latest link next to %s: %s' % (dest, exc))
