"""tools/spark_cluster.py: CI starts the cluster in the background while the tests begin, so
a `start` or `stop` on a state folder waits for one in flight instead of racing it (two
clusters, one of them never stopped)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from tools import spark_cluster

HOLD_SECONDS = 3.0


def test_a_stop_waits_for_a_start_in_flight_on_the_same_folder(tmp_path: Path):
    # GIVEN another process in the middle of a start on the folder (it holds the start's
    # turn for a few seconds, as a cold start holds it while the JVMs come up)
    state = tmp_path / "cluster"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; from tools import spark_cluster\n"
            "with spark_cluster.one_at_a_time(Path(sys.argv[1])):\n"
            "    print('holding', flush=True); time.sleep(float(sys.argv[2]))",
            str(state),
            str(HOLD_SECONDS),
        ],
        cwd=Path(__file__).resolve().parents[2],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline().strip() == "holding"

    # WHEN this process stops the cluster of that folder
    clock = time.monotonic()
    stopped = spark_cluster.stop(state)

    # THEN it waited for the start to finish before reading what it started
    waited = time.monotonic() - clock
    assert holder.wait(timeout=30) == 0
    assert waited >= HOLD_SECONDS - 1.0, waited
    assert stopped is False  # that start recorded nothing: nothing to stop
