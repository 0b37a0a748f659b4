"""tools/spark_cluster.py: CI starts the cluster in the background while the tests begin, so
a `start` or `stop` on a state folder waits for one in flight instead of racing it (two
clusters, one of them never stopped); and it signals only the processes it can prove are the
ones it started."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

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


# -- signals only to the cluster's own processes ---------------------------------------------
# After a crash or a reboot the pids of cluster.json may hold anything; `stop` (and a `start`
# over a record that is not healthy) signals a process only when the boot, its start time and
# its command line are those recorded.


@pytest.fixture
def unrelated_process():
    """A process that is not the cluster's, leading its own group and session as the
    cluster's processes do: what a recorded pid may hold after a reboot."""
    process = subprocess.Popen(["sleep", "300"], start_new_session=True)
    yield process
    process.kill()
    process.wait()


def recorded_over(state: Path, pid: int, how: str) -> None:
    """A cluster.json whose every process is recorded at `pid`, `how`: as an older record
    (pids only), or with the identity the pid had on another boot, or before it was reused."""
    state.mkdir(parents=True, exist_ok=True)
    record = {
        "state": str(state),
        "host": spark_cluster.HOST,
        "master_port": 1,
        "thrift_port": 1,
        "cores": 1,
        "pids": {name: pid for name in spark_cluster.PROCESSES},
    }
    if how != "an older record":
        now = spark_cluster.identify(pid)
        assert now is not None
        then = dataclasses.replace(
            now,
            boot_id=now.boot_id if how == "a pid reused" else "another-boot",
            start_ticks=now.start_ticks - 1 if how == "a pid reused" else now.start_ticks,
        )
        record["processes"] = {name: dataclasses.asdict(then) for name in spark_cluster.PROCESSES}
    (state / spark_cluster.STATE_FILE).write_text(json.dumps(record))


RECORDS_NOT_OURS = ["an older record", "a pid reused", "a pid held since a reboot"]


@pytest.mark.parametrize("how", RECORDS_NOT_OURS)
def test_a_stop_never_signals_a_process_it_cannot_prove_its_own(
    tmp_path, unrelated_process, how, capsys
):
    # GIVEN a cluster.json whose processes' pids now hold an unrelated process
    state = tmp_path / "cluster"
    recorded_over(state, unrelated_process.pid, how)

    # WHEN the cluster is stopped
    stopped = spark_cluster.stop(state)

    # THEN the unrelated process still runs; the record is forgotten, its pids named
    time.sleep(0.5)  # a signal sent would have ended `sleep` by now
    assert unrelated_process.poll() is None
    assert stopped is True and spark_cluster.read(state) is None
    said = capsys.readouterr().err
    assert f"pid {unrelated_process.pid}" in said and "not signalled" in said


def test_a_start_over_a_record_it_cannot_prove_its_own_leaves_its_pids_alone(
    tmp_path, unrelated_process
):
    # GIVEN an older cluster.json whose pids now hold an unrelated process
    state = tmp_path / "cluster"
    recorded_over(state, unrelated_process.pid, "an older record")

    # WHEN a start replaces it and fails (its master cannot start in half a second)
    with pytest.raises(spark_cluster.ClusterError, match="master did not start"):
        spark_cluster.start(state, timeout=0.5)

    # THEN the unrelated process still runs, and nothing the failed start launched does
    assert unrelated_process.poll() is None
    assert processes_working_in(state) == []


FAKE_DAEMON = (
    # a stand-in for a cluster daemon: a child in its group (as the worker's executors are),
    # whose pid it writes down, then a long sleep
    "import subprocess, sys, time\n"
    "child = subprocess.Popen(['sleep', '300'])\n"
    "open(sys.argv[1], 'w').write(str(child.pid))\n"
    "time.sleep(300)\n"
)


def test_a_stop_ends_the_processes_the_cluster_launched_and_their_groups(tmp_path):
    # GIVEN three daemons launched as the cluster launches its own (each through a shell
    # that execs the final command, as spark-class execs java), recorded once they run it
    state = tmp_path / "cluster"
    (state / "logs").mkdir(parents=True)
    launched, identities = {}, {}
    for name in spark_cluster.PROCESSES:
        final = [sys.executable, "-c", FAKE_DAEMON, str(state / f"{name}.child")]
        launched[name] = spark_cluster.launch(name, ["sh", "-c", 'exec "$@"', "sh", *final], state)
    for name, process in launched.items():
        identities[name] = wait_for_command(process.pid, final[:2])
        wait_for_file(state / f"{name}.child")
    children = [int((state / f"{name}.child").read_text()) for name in launched]
    pids = {name: process.pid for name, process in launched.items()}
    spark_cluster.record(spark_cluster.Cluster(str(state), "127.0.0.1", 1, 1, 1, pids, identities))

    # WHEN the cluster is stopped
    assert spark_cluster.stop(state) is True

    # THEN every daemon and every child in its group has ended, and the record is gone
    for process in launched.values():
        assert process.wait(timeout=30) is not None
    for child in children:
        assert gone_within(child, 30), child
    assert spark_cluster.read(state) is None


def wait_for_command(pid: int, starts_with: list[str], timeout: float = 30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        identity = spark_cluster.identify(pid)
        if identity is not None and list(identity.command[:2]) == starts_with:
            return identity
        time.sleep(0.05)
    raise AssertionError(f"pid {pid} never ran {starts_with}")


def wait_for_file(path: Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text()):
        assert time.monotonic() < deadline, path
        time.sleep(0.05)


def gone_within(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if spark_cluster.identify(pid) is None:
            return True
        time.sleep(0.1)
    return False


def processes_working_in(folder: Path) -> list[int]:
    """The pids whose working directory is `folder` (the cluster's processes' is theirs)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if Path(os.readlink(entry / "cwd")) == folder.resolve():
                    found.append(int(entry.name))
    return found
