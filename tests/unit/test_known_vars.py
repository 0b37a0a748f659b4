"""The vars refill refuses as unknown are exactly those dbt_project.yml does not declare."""

from __future__ import annotations

import re

import yaml

from refill.settings import PACKAGE_PROJECT_DIR


def test_the_known_vars_are_the_projects_declared_vars():
    declared = yaml.safe_load((PACKAGE_PROJECT_DIR / "dbt_project.yml").read_text())["vars"]
    macro = (PACKAGE_PROJECT_DIR / "macros/window/refill_require_known_vars.sql").read_text()
    listed = re.search(r"set known = \[(.*?)\]", macro, re.S).group(1)
    assert sorted(re.findall(r"'(\w+)'", listed)) == sorted(declared)
