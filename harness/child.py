"""A subprocess entry for the harness's killed and concurrent runs.

`python -m harness.child --ready-file PATH` imports refill and parses the dbt project,
touches PATH, then reads one job from standard input, a JSON object
`{"argv": [...], "env": {...}}`, and runs `refill.cli.main(argv)`: the real command
line, in a process the harness can signal. Warming up before the job is known lets the
harness keep a child ready while other events run, so a kill lands in the command's
work rather than in Python's start-up. The harness starts it with REFILL_PROJECT_DIR
naming its patched copy of the dbt project (harness/overlay.py: the armed fault seam,
and a broken variant's files if one runs), and TZ for a host time zone.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ready-file", type=Path, required=True)
    args = parser.parse_args()

    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    from flows import backfill, daily  # noqa: F401  (imported now, not when timed)
    from refill import cli, interrupts
    from refill.warehouse.dbt_runner import shared_project

    shared_project().manifest  # noqa: B018  (parse now; the job reuses it)
    args.ready_file.write_text(str(os.getpid()))

    line = sys.stdin.readline()
    if not line.strip():
        return 0  # the harness retired this child without a job
    job = json.loads(line)
    os.environ.update(job.get("env", {}))
    sys.argv = ["refill", *job["argv"]]
    print(f"harness child {os.getpid()}: refill {' '.join(job['argv'])}", flush=True)
    interrupts.end_process(cli.main(job["argv"], as_program=True))


if __name__ == "__main__":
    sys.exit(main())
