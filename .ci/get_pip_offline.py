# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Offline stand-in for the get-pip.py script ansible-test downloads.

ansible-test bootstraps pip in every virtual environment it creates by running
``python get_pip_<version>.py pip==<version> [--no-setuptools] [--no-wheel]``,
fetching the script from a host that machines without general internet access
cannot reach.  It uses a cached copy at ``~/.ansible/test/cache/get_pip_<v>.py``
when one exists; ``.ci/install_get_pip.py`` installs this file there.

What it does, with only the standard library:
1. ``ensurepip.bootstrap()`` installs the pip wheel bundled with CPython;
2. drops ``PIP_CONFIG_FILE`` (ensurepip points it at os.devnull, which would
   hide every pip.conf from the next step);
3. writes the package-index settings captured when the script was installed
   (``PIP_SETTINGS`` below) into ``<venv>/pip.conf``, because ansible-test runs
   pip with only HOME, PATH and LC_ALL: environment variables such as
   PIP_CERT or PIP_INDEX_URL never reach it.  The per-venv (``site``) file also
   serves every later ``pip install`` ansible-test runs in that venv;
4. runs ``python -m pip install`` with the arguments it was given, minus
   ``--no-setuptools``/``--no-wheel`` (get-pip.py options, not pip options).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess
import sys

# Replaced by .ci/install_get_pip.py: {pip option name: value} (e.g. "cert": "/path").
PIP_SETTINGS = {}

GET_PIP_ONLY_OPTIONS = ("--no-setuptools", "--no-wheel")


def write_site_config(settings):
    """Write the captured pip settings as this environment's own pip.conf."""
    if not settings:
        return None
    path = os.path.join(sys.prefix, "pip.conf")
    lines = ["[global]"]
    for key in sorted(settings):
        value = settings[key].replace("\n", " ").strip()
        if value:
            lines.append("%s = %s" % (key, value))
    with open(path, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    return path


def main(argv):
    import ensurepip

    ensurepip.bootstrap(upgrade=True)
    os.environ.pop("PIP_CONFIG_FILE", None)
    conf = write_site_config(PIP_SETTINGS)
    if conf:
        sys.stderr.write("get_pip (offline): pip settings written to %s\n" % conf)
    args = [arg for arg in argv if arg not in GET_PIP_ONLY_OPTIONS]
    if not args:
        return 0
    cmd = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check"] + args
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
