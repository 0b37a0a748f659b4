"""The README's "Try it, step by step" runs as written, in order, on a fresh clone.

The commands are read from the README itself (the first `bash` block under that heading),
never copied here: when the README changes, this test runs the new text.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import duckdb
import pytest

from refill.settings import PACKAGE_PROJECT_DIR

SECTION = "## Try it, step by step"
# For checking a README draft before it is committed: the draft's path (tests only).
DRAFT_ENV = "REFILL_README_UNDER_TEST"


def steps_of(readme: str) -> list[str]:
    """The command lines of the first ```bash block under SECTION, in order."""
    if SECTION not in readme:
        pytest.fail(f"the README has no section {SECTION!r} with the commands to try")
    after = readme.split(SECTION, 1)[1]
    block = re.search(r"```bash\n(.*?)```", after, re.DOTALL)
    assert block, f"no ```bash block under {SECTION!r}"
    lines = [line.strip() for line in block.group(1).splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def test_steps_are_read_from_the_readme_block_in_order():
    readme = f"intro\n{SECTION}\n\ntext\n```bash\nmake setup\n# a comment\n\nrefill status\n```\n"
    assert steps_of(readme) == ["make setup", "refill status"]


@pytest.mark.slow
def test_the_readme_steps_run_in_order_on_a_fresh_clone(tmp_path: Path):
    # GIVEN a fresh clone of the project (its committed state) and nothing configured
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(PACKAGE_PROJECT_DIR), str(clone)], check=True)
    readme = Path(os.environ.get(DRAFT_ENV) or clone / "README.md").read_text()
    steps = steps_of(readme)
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("REFILL_", "PREFECT_", "DBT_", "VIRTUAL_ENV"))
    }
    environment.update(
        PREFECT_HOME=str(tmp_path / "prefect-home"),
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        DO_NOT_TRACK="1",
    )
    environment["PATH"] = ":".join(
        part for part in environment["PATH"].split(":") if ".venv" not in part
    )

    # WHEN its steps run one after the other in one shell, stopping at the first failure
    script = "set -euo pipefail\n" + "\n".join(f"echo '+ {s}'\n{s}" for s in steps)
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=clone,
        env=environment,
        capture_output=True,
        text=True,
        timeout=1800,
    )

    # THEN every step succeeded, and the warehouse holds the days the steps landed
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-6000:]
    landed = sorted(p.name for p in (clone / "data" / "landing" / "payments").glob("dt=*"))
    with duckdb.connect(str(clone / "warehouse" / "refill.duckdb"), read_only=True) as db:
        built = db.execute("select distinct event_date from main.fct_payments").fetchall()
        running = db.execute("select count(*) from ops.run_log where outcome = 'running'")
        assert running.fetchone() == (0,)
    assert sorted(f"dt={day}" for (day,) in built) == landed
