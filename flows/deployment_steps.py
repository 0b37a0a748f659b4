"""The pull step of refill's Prefect deployments (prefect.yaml).

A worker runs a deployment's flow in a new process whose working directory is the
worker's. This step puts it in the dbt project folder, the one rule of refill.settings:
$REFILL_PROJECT_DIR when the worker's environment sets it (a non-editable install, a
copy of the project elsewhere), else the checkout the installed package lives in (an
editable install). A folder without dbt_project.yml fails the run at once with one line
that names the setting.
"""

from __future__ import annotations

import os

from refill import settings


def enter_project_dir() -> dict[str, str]:
    """Change into the dbt project folder; return it, as Prefect's pull steps do."""
    folder = settings.project_dir()
    os.chdir(folder)
    # the flow's own process reads the same folder whatever the worker's environment said
    os.environ[settings.PROJECT_DIR_ENV] = str(folder)
    return {"directory": str(folder)}
