# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: awx_survey
short_description: The AWX survey spec this collection ships, wherever the collection is installed
version_added: 1.0.0
author: placement.upgrade contributors (@placement-upgrade)
description:
  - Returns the survey spec of the rolling reshape (C(extensions/awx/rolling_reshape_survey.json)
    of this collection) as a dict, read from the collection's own directory, so a job template
    defined with C(awx.awx.job_template) gets it from an installed collection as well as from a
    checkout of the repository.
  - Takes no terms.
'''

EXAMPLES = r'''
- name: The roll, with its survey
  awx.awx.job_template:
    name: "Placement: rolling reshape"
    project: placement-upgrade
    playbook: playbooks/rolling_reshape.yml
    survey_enabled: true
    survey_spec: "{{ lookup('placement.upgrade.awx_survey') }}"
'''

RETURN = r'''
_raw:
  description: One item, the survey spec (C(name), C(description), C(spec), the list of questions).
  type: list
  elements: dict
'''

import json
import os

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

#: the survey, relative to the collection's root
SURVEY = os.path.join('extensions', 'awx', 'rolling_reshape_survey.json')


def survey_path():
    """The survey file of the collection this plugin belongs to."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(root, SURVEY)


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        if terms:
            raise AnsibleLookupError('placement.upgrade.awx_survey takes no terms (got %d)' % len(terms))
        path = survey_path()
        try:
            with open(path) as handle:
                spec = json.load(handle)
        except (IOError, OSError, ValueError) as exc:
            raise AnsibleLookupError('placement.upgrade.awx_survey: cannot read %s: %s' % (path, exc))
        return [spec]
