"""A local Spark cluster for the `spark-cluster` target: a standalone master, one worker and a
Spark Thrift Server submitted to that master, all on 127.0.0.1, from the pyspark wheel.

    python -m tools.spark_cluster start  --state DIR [--cores 2] [--port 10000]
    python -m tools.spark_cluster status --state DIR
    python -m tools.spark_cluster env    --state DIR     # the variables dbt and refill read
    python -m tools.spark_cluster stop   --state DIR

Everything lives under the state folder: the Hive metastore (embedded Derby, `metastore_db/`,
owned by the Thrift Server's driver, the one process that opens it), the warehouse folder
(`warehouse/`: every table's files), the worker's and Spark's scratch folders, the logs
(`logs/master.log`, `logs/worker.log`, `logs/thriftserver.log`) and `cluster.json` (ports, and
each process's id, start time, boot and command line). `start` is idempotent: a healthy
cluster is left as it is; a partial one (a process died) is stopped and started again over
the same metastore and warehouse, so tables outlive the cluster; a `start` or `stop` waits
for one in flight on the same folder (CI starts the cluster in the background while the
tests begin). `stop` ends each process's group (the worker's executors are its children),
politely first.

A signal goes only to a process proven to be the one recorded: the same boot, the same start
time (clock ticks since boot) and the same command line. After a crash or a reboot its pid
may hold anything (a shell, another cluster, a database); a record that does not match is
forgotten, never signalled, and its pids named.

A Python module rather than a shell script: the tests, the benchmark and CI import it (start
once, read the port, stop), it waits on real health (a Thrift connection answering a query,
the worker registered) rather than on sleeps, and it picks free ports, so several clusters
(other checkouts' tests) can run on one machine. It uses only the standard library and
PyHive (the `spark-cluster` extra) for the health check.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

HOST = "127.0.0.1"
STATE_FILE = "cluster.json"
START_LOCK = "start.lock"
THRIFT_SERVER = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"
# Sized for a shared two-core machine: small daemons, one executor holding every core.
DEFAULT_CORES = 2
DAEMON_MEMORY = "256m"  # the master's and the worker's own heap
DEFAULT_DRIVER_MEMORY = "1g"  # the Thrift Server's driver: planning, the metastore (Derby)
DEFAULT_EXECUTOR_MEMORY = "1g"
# The driver's and the executor's JVM (thrift_server_settings). The serial collector: see
# there. Only the JIT's first tier (C1): a test's or a bench's statements are many and small,
# and C2 spent more CPU compiling them than its faster code saved. Measured on
# tests/spark/test_spark_pipeline.py, two interleaved pairs on a quiet machine, the two
# JVMs' CPU: 172.7 and 163.4 s against 200.9 and 214.2 s with both tiers; the file's wall
# time 162 and 154 s against 161 and 163 s. A cluster of long jobs wants C2 back.
SMALL_HEAP_JVM = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1"
START_TIMEOUT_SECONDS = 420.0  # a cold start here: tens of seconds, minutes under load
STOP_TIMEOUT_SECONDS = 60.0
PROCESSES = ("thriftserver", "worker", "master")  # the order of stopping


class ClusterError(RuntimeError):
    """The cluster could not be started or reached; the message names the log to read."""


@dataclass(frozen=True)
class ProcessIdentity:
    """What proves a pid still holds the process the cluster started: a pid is reused, the
    boot id, the start time and the command line together are not."""

    pid: int
    boot_id: str  # /proc/sys/kernel/random/boot_id: another after a reboot
    start_ticks: int  # /proc/<pid>/stat field 22: clock ticks after boot
    command: tuple[str, ...]  # /proc/<pid>/cmdline

    @classmethod
    def from_json(cls, data: dict) -> ProcessIdentity:
        return cls(
            int(data["pid"]),
            str(data["boot_id"]),
            int(data["start_ticks"]),
            tuple(str(part) for part in data["command"]),
        )


def boot_id() -> str:
    return Path("/proc/sys/kernel/random/boot_id").read_text().strip()


def identify(pid: int) -> ProcessIdentity | None:
    """The identity of the process that holds `pid` now; None when there is none (or it is
    a zombie: it exited)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
        booted = boot_id()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()  # the name, in parentheses, may hold spaces
    if fields[0] == "Z" or not command:
        return None
    return ProcessIdentity(
        pid,
        booted,
        int(fields[19]),
        tuple(command.decode(errors="surrogateescape").split("\0")[:-1]),
    )


def is_ours(identity: ProcessIdentity) -> bool:
    """Whether `identity.pid` still holds the process recorded as `identity`."""
    return identify(identity.pid) == identity


@dataclass(frozen=True)
class Cluster:
    """A running cluster, as cluster.json records it."""

    state: str
    host: str
    master_port: int
    thrift_port: int
    cores: int
    pids: dict[str, int]
    # each process's identity, recorded once it runs its final command (spark-class execs
    # java); a record without it (an older one) proves nothing, and nothing of it is signalled
    processes: dict[str, ProcessIdentity] = field(default_factory=dict)

    @property
    def master_url(self) -> str:
        return f"spark://{self.host}:{self.master_port}"

    def environment(self) -> dict[str, str]:
        """What the `spark-cluster` target (profiles.yml) and refill read to reach it."""
        return {
            "DBT_TARGET": "spark-cluster",
            "REFILL_SPARK_HOST": self.host,
            "REFILL_SPARK_PORT": str(self.thrift_port),
        }


def spark_home() -> Path:
    """The pyspark wheel's folder: it holds bin/spark-class, bin/spark-submit and the jars
    (the Thrift Server's included)."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def _state_file(state: Path) -> Path:
    return state / STATE_FILE


def read(state: Path) -> Cluster | None:
    """The cluster recorded in `state`, whether or not it still runs."""
    try:
        data = json.loads(_state_file(state).read_text())
        processes = data.pop("processes", {})
        return Cluster(
            **data,
            processes={name: ProcessIdentity.from_json(known) for name, known in processes.items()},
        )
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def record(cluster: Cluster) -> None:
    """Write `cluster` as its state folder's cluster.json, at once (a reader sees the old
    record or the new one)."""
    state_file = _state_file(Path(cluster.state))
    partial = state_file.with_suffix(".json.partial")
    partial.write_text(json.dumps(asdict(cluster), indent=2))
    os.replace(partial, state_file)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie (exited, not yet reaped by its parent) counts as gone
    with contextlib.suppress(OSError):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return fields[0] != "Z"
    return True


def answers(host: str, port: int) -> bool:
    """Whether the Thrift Server at host:port opens a session and answers `select 1`."""
    import logging

    from pyhive import hive

    # thrift logs every refused connection at ERROR while the server is still starting
    logging.getLogger("thrift.transport.TSocket").setLevel(logging.CRITICAL)

    try:
        connection = hive.connect(host=host, port=port, username="refill")
    except Exception:  # noqa: BLE001 (any failure to connect means: not answering)
        return False
    try:
        cursor = connection.cursor()
        cursor.execute("select 1")
        return cursor.fetchall() == [(1,)]
    except Exception:  # noqa: BLE001
        return False
    finally:
        with contextlib.suppress(Exception):
            connection.close()


def healthy(cluster: Cluster | None) -> bool:
    """Every process the one recorded (alive, and ours) and the Thrift Server answering."""
    if cluster is None or set(cluster.processes) != set(PROCESSES):
        return False
    if not all(is_ours(identity) for identity in cluster.processes.values()):
        return False
    return answers(cluster.host, cluster.thrift_port)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def _port_taken(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind((HOST, port))
        except OSError:
            return True
    return False


def _environment(state: Path) -> dict[str, str]:
    home = spark_home()
    environment = {
        **os.environ,
        "SPARK_HOME": str(home),
        # no spark-env.sh or spark-defaults.conf from elsewhere: every setting is below
        "SPARK_CONF_DIR": str(state / "conf"),
        "SPARK_LOCAL_IP": HOST,
        "SPARK_LOCAL_DIRS": str(state / "tmp"),
        "SPARK_WORKER_DIR": str(state / "work"),
        "SPARK_NO_DAEMONIZE": "1",
        "PYSPARK_PYTHON": sys.executable,
    }
    return environment


def launch(name: str, command: list[str], state: Path, **extra: str) -> subprocess.Popen:
    """Start one process in its own session (its group is what `stop` ends), its output
    appended to logs/<name>.log; its pid is the JVM's (spark-class execs java). The process
    stays this one's child, unreaped, until `start` is done with it: its pid cannot be
    another's meanwhile."""
    log = state / "logs" / f"{name}.log"
    with log.open("ab") as output:
        output.write(f"\n==== {time.strftime('%Y-%m-%d %H:%M:%S')} {' '.join(command)}\n".encode())
        output.flush()
        process = subprocess.Popen(
            command,
            cwd=state,
            env={**_environment(state), **extra},
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return process


def _wait_for(what: str, ready, pid: int, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if not _alive(pid):
            raise ClusterError(f"the {what} exited while starting; see {log}")
        if time.monotonic() > deadline:
            raise ClusterError(f"the {what} did not start within {timeout:.0f}s; see {log}")
        time.sleep(0.5)


def _log_mentions(log: Path, pattern: str, since: int) -> bool:
    try:
        with log.open("rb") as stream:
            stream.seek(since)
            return re.search(pattern.encode(), stream.read()) is not None
    except OSError:
        return False


def _log_size(log: Path) -> int:
    try:
        return log.stat().st_size
    except OSError:
        return 0


# Spark logs every job at INFO: a day of tests wrote 60 MB. Warnings and up, and the lines
# the health checks read (the master elected, the worker registered) and one per statement
# the Thrift Server runs, with its id and when (where a chunk's time goes).
LOG4J2 = """\
rootLogger.level = warn
rootLogger.appenderRef.stdout.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss.SSS} %p %c{1}: %m%n%ex
logger.deploy.name = org.apache.spark.deploy
logger.deploy.level = info
logger.statements.name = org.apache.spark.sql.hive.thriftserver.SparkExecuteStatementOperation
logger.statements.level = info
logger.metastore.name = org.apache.hadoop.hive.metastore.RetryingHMSHandler
logger.metastore.level = fatal
logger.metastore2.name = org.apache.hadoop.hive.metastore.ObjectStore
logger.metastore2.level = error
"""


def thrift_server_settings(state: Path) -> dict[str, str]:
    """The Thrift Server's Spark settings: a Hive metastore (embedded Derby) and a warehouse
    folder under the state folder, and the settings refill's SQL relies on (the `spark`
    target's, docs/spark.md section 2) as the server's defaults."""
    warehouse = state / "warehouse"
    return {
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": str(warehouse),
        "spark.hadoop.javax.jdo.option.ConnectionURL": (
            f"jdbc:derby:;databaseName={state / 'metastore_db'};create=true"
        ),
        # The serial collector for the driver's and the executor's 1 GB heaps: G1's
        # concurrent threads cost CPU that two shared cores lack. Measured on
        # tests/spark/test_spark_pipeline.py, two interleaved pairs on a quiet machine:
        # 214 and 228 s against 240 and 245 s, the two JVMs' CPU 305 and 322 s against 362
        # and 370 s.
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={state} {SMALL_HEAP_JVM}",
        "spark.executor.extraJavaOptions": SMALL_HEAP_JVM,
        "spark.driver.host": HOST,
        "spark.driver.bindAddress": HOST,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        # Small data on two cores: no adaptive re-planning and no whole-stage code generation
        # (each query's generated classes compiled by Janino, then by the JIT). Measured on
        # tests/spark/test_spark_pipeline.py, the cluster's CPU: 291 and 293 s with both on,
        # 273 s with both off (266 s with 2 shuffle partitions too, not kept: concurrent
        # chunks' jobs share the executor's cores by their tasks).
        "spark.sql.shuffle.partitions": "4",
        "spark.sql.adaptive.enabled": "false",
        "spark.sql.codegen.wholeStage": "false",
        # Nor code generated per expression: interpreted (an internal setting Spark's own
        # tests use to run both ways). The same file, the JVMs at C1 only, two interleaved
        # pairs on a quiet machine: 142.3 and 143.2 s of the JVMs' CPU against 160.7 and
        # 170.6 s, the file's wall time 138 and 140 s against 151 and 159 s.
        "spark.sql.codegen.factoryMode": "NO_CODEGEN",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.sources.partitionOverwriteMode": "dynamic",
        # a table's days are its folders, listed when read, as on the `spark` target: the
        # publish protocol's empty days and the checks that read files rely on it
        "spark.sql.hive.manageFilesourcePartitions": "false",
        "spark.sql.legacy.allowNonEmptyLocationInCTAS": "true",
        # jobs of concurrent sessions (chunks) share the executor's cores instead of queuing
        "spark.scheduler.mode": "FAIR",
        "spark.local.dir": str(state / "tmp"),
    }


@contextlib.contextmanager
def one_at_a_time(state: Path):
    """One start or stop at a time on a state folder: a second `start` (the tests', while
    CI's runs in the background) waits for the first and then finds its cluster healthy; a
    `stop` waits for a start in flight and stops what it started."""
    state.mkdir(parents=True, exist_ok=True)
    with open(state / START_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or the process ends
        yield


def start(
    state: Path,
    *,
    cores: int = DEFAULT_CORES,
    thrift_port: int = 0,
    driver_memory: str = DEFAULT_DRIVER_MEMORY,
    executor_memory: str = DEFAULT_EXECUTOR_MEMORY,
    timeout: float = START_TIMEOUT_SECONDS,
) -> Cluster:
    """Start the cluster recorded in `state` (idempotent: a healthy one is returned as is).
    `thrift_port` 0 takes a free port; the one chosen is in the result and cluster.json."""
    state = state.resolve()
    with one_at_a_time(state):
        return _start(state, cores, thrift_port, driver_memory, executor_memory, timeout)


def _start(
    state: Path,
    cores: int,
    thrift_port: int,
    driver_memory: str,
    executor_memory: str,
    timeout: float,
) -> Cluster:
    running = read(state)
    if healthy(running):
        return running
    if running is not None:
        _stop(state)
    for folder in ("logs", "conf", "tmp", "work", "warehouse"):
        (state / folder).mkdir(parents=True, exist_ok=True)
    (state / "conf" / "log4j2.properties").write_text(LOG4J2)
    if thrift_port and _port_taken(thrift_port):
        raise ClusterError(f"port {thrift_port} on {HOST} is taken; pass another --port (or 0)")
    master_port = _free_port()
    thrift_port = thrift_port or _free_port()
    home = spark_home()
    logs = state / "logs"
    launched: dict[str, subprocess.Popen] = {}
    try:
        since = _log_size(logs / "master.log")
        launched["master"] = launch(
            "master",
            [str(home / "bin" / "spark-class"), "org.apache.spark.deploy.master.Master"]
            + ["--host", HOST, "--port", str(master_port), "--webui-port", "0"],
            state,
            # the daemons' own heap (spark-class would give the Thrift Server the same)
            SPARK_DAEMON_MEMORY=DAEMON_MEMORY,
        )
        _wait_for(
            "master",
            lambda: _log_mentions(logs / "master.log", "I have been elected leader", since),
            launched["master"].pid,
            logs / "master.log",
            timeout,
        )
        since = _log_size(logs / "worker.log")
        launched["worker"] = launch(
            "worker",
            [str(home / "bin" / "spark-class"), "org.apache.spark.deploy.worker.Worker"]
            + ["--host", HOST, "--cores", str(cores), "--memory", executor_memory]
            + ["--work-dir", str(state / "work"), "--webui-port", "0"]
            + [f"spark://{HOST}:{master_port}"],
            state,
            SPARK_DAEMON_MEMORY=DAEMON_MEMORY,
        )
        _wait_for(
            "worker",
            lambda: _log_mentions(
                logs / "worker.log", "Successfully registered with master", since
            ),
            launched["worker"].pid,
            logs / "worker.log",
            timeout,
        )
        settings = thrift_server_settings(state)
        submit = [str(home / "bin" / "spark-submit"), "--master", f"spark://{HOST}:{master_port}"]
        submit += ["--class", THRIFT_SERVER, "--name", "refill-thriftserver"]
        submit += ["--driver-memory", driver_memory, "--executor-memory", executor_memory]
        submit += ["--total-executor-cores", str(cores)]
        for key, value in settings.items():
            submit += ["--conf", f"{key}={value}"]
        submit += ["spark-internal", "--hiveconf", f"hive.server2.thrift.port={thrift_port}"]
        submit += ["--hiveconf", f"hive.server2.thrift.bind.host={HOST}"]
        launched["thriftserver"] = launch("thriftserver", submit, state)
        _wait_for(
            "Thrift Server",
            lambda: answers(HOST, thrift_port),
            launched["thriftserver"].pid,
            logs / "thriftserver.log",
            timeout,
        )
        # each one answered: it runs its final command (java), which its identity records
        processes = {name: _identity_of_child(name, child) for name, child in launched.items()}
    except BaseException:
        _end_children(launched)
        raise
    pids = {name: child.pid for name, child in launched.items()}
    cluster = Cluster(str(state), HOST, master_port, thrift_port, cores, pids, processes)
    record(cluster)
    return cluster


def _identity_of_child(name: str, child: subprocess.Popen) -> ProcessIdentity:
    identity = identify(child.pid)  # not polled: a child reaped would free its pid
    if identity is None:
        raise ClusterError(f"the {name} exited while starting; see logs/{name}.log")
    return identity


def _end_children(launched: dict[str, subprocess.Popen]) -> None:
    """End the groups of the processes this `start` launched, then reap them. Each is still
    its child, unreaped: its pid, and so its group's id, is no other process's."""
    for name in PROCESSES:
        child = launched.get(name)
        if child is not None:
            _end_group(child.pid, lambda: True)
    for child in launched.values():
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeout=STOP_TIMEOUT_SECONDS)


def _end_all(processes: dict[str, ProcessIdentity]) -> list[str]:
    """End each recorded process's group, Thrift Server first (its driver stops its
    executors), then the worker (and any executor left in its group), then the master:
    only those proven to be the ones recorded. Returns the others, left alone."""
    not_ours = []
    for name in PROCESSES:
        identity = processes.get(name)
        if identity is not None and not _end_group(identity.pid, lambda i=identity: is_ours(i)):
            not_ours.append(f"{name} (pid {identity.pid})")
    return not_ours


def _end_group(leader: int, proven: Callable[[], bool]) -> bool:
    """SIGTERM, then once the leader is gone (or after STOP_TIMEOUT_SECONDS) SIGKILL, to the
    group `leader` leads (`launch` made it a session leader, its group's id its pid). Each
    process is signalled through a pidfd, a handle on the process that held its pid when
    taken (never on a later holder), taken while `proven()` says the leader is the process
    meant: a member of its group then is of its session, ours. False, and nothing signalled,
    when the leader is not proven."""
    handles = _claim(leader, None)
    try:
        if not handles or not proven():
            return False
        handles += [handle for pid in _group_members(leader) for handle in _claim(pid, leader)]
        if not proven():  # the members were found while the leader held its pid
            return False
        for handle in handles:
            _signal(handle, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
        while _alive(leader) and proven() and time.monotonic() < deadline:
            time.sleep(0.2)
        for handle in handles:
            _signal(handle, signal.SIGKILL)  # the group: executors the worker started too
        return True
    finally:
        for handle in handles:
            with contextlib.suppress(OSError):
                os.close(handle)


def _process_group(pid: int) -> int | None:
    """/proc/<pid>/stat field 5 (pgrp); None when the pid is gone."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[2])
    except (OSError, IndexError, ValueError):
        return None


def _group_members(group: int) -> list[int]:
    """The pids in process group `group`, its leader left out."""
    pids = (int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit())
    return [pid for pid in pids if pid != group and _process_group(pid) == group]


def _claim(pid: int, group: int | None) -> list[int]:
    """A pidfd of the process holding `pid` now (and, with `group`, still in that group once
    the pidfd is taken), as a list: empty when there is none."""
    try:
        handle = os.pidfd_open(pid)
    except (ProcessLookupError, PermissionError):
        return []
    if group is not None and _process_group(pid) != group:
        os.close(handle)
        return []
    return [handle]


def _signal(handle: int, number: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        signal.pidfd_send_signal(handle, number)


def stop(state: Path) -> bool:
    """Stop the cluster recorded in `state`; False when none was recorded. The metastore and
    the warehouse stay: the next `start` finds the tables again."""
    state = state.resolve()
    with one_at_a_time(state):
        return _stop(state)


def _stop(state: Path) -> bool:
    cluster = read(state)
    if cluster is None:
        return False
    recorded = set(cluster.processes)
    left = [f"{name} (pid {pid})" for name, pid in cluster.pids.items() if name not in recorded]
    left += _end_all(cluster.processes)
    if left:
        print(
            f"spark cluster: {', '.join(left)} of {_state_file(state)} not signalled: the pid "
            "no longer holds the process recorded (it exited, or a crash or a reboot since), "
            "or the record predates process identities; the record is forgotten",
            file=sys.stderr,
        )
    _state_file(state).unlink(missing_ok=True)
    return True


def reset(cluster: Cluster) -> None:
    """Empty the cluster's warehouse: every database but `default` dropped from the
    metastore, and every file under the warehouse folder removed (refill's tables are
    external: dropping one keeps its files). For tests: a fresh warehouse, the same cluster."""
    import shutil

    from pyhive import hive

    connection = hive.connect(host=cluster.host, port=cluster.thrift_port, username="refill")
    try:
        cursor = connection.cursor()
        cursor.execute("show databases")
        for (database,) in cursor.fetchall():
            if database != "default":
                cursor.execute(f"drop database `{database}` cascade")
    finally:
        connection.close()
    warehouse = Path(cluster.state) / "warehouse"
    for child in warehouse.iterdir() if warehouse.is_dir() else []:
        shutil.rmtree(child) if child.is_dir() else child.unlink()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.spark_cluster", description=__doc__)
    parser.add_argument("action", choices=("start", "stop", "status", "env"))
    parser.add_argument("--state", required=True, type=Path, help="the cluster's folder")
    parser.add_argument("--cores", type=int, default=DEFAULT_CORES, help="the worker's cores")
    parser.add_argument("--port", type=int, default=0, help="the Thrift port (0: a free one)")
    parser.add_argument("--driver-memory", default=DEFAULT_DRIVER_MEMORY)
    parser.add_argument("--executor-memory", default=DEFAULT_EXECUTOR_MEMORY)
    args = parser.parse_args(argv)
    try:
        if args.action == "start":
            began = time.monotonic()
            cluster = start(
                args.state,
                cores=args.cores,
                thrift_port=args.port,
                driver_memory=args.driver_memory,
                executor_memory=args.executor_memory,
            )
            print(
                f"spark cluster up in {time.monotonic() - began:.1f}s: master {cluster.master_url},"
                f" worker with {cluster.cores} core(s), Thrift Server on "
                f"{cluster.host}:{cluster.thrift_port}; logs in {Path(cluster.state) / 'logs'}",
                file=sys.stderr,
            )
            print(_exports(cluster))
        elif args.action == "stop":
            print("stopped" if stop(args.state) else "no cluster recorded there", file=sys.stderr)
        elif args.action == "status":
            cluster = read(args.state.resolve())
            ok = healthy(cluster)
            print("healthy" if ok else "not running (or not answering)")
            return 0 if ok else 1
        else:
            cluster = read(args.state.resolve())
            if cluster is None:
                print("no cluster recorded there", file=sys.stderr)
                return 1
            print(_exports(cluster))
    except ClusterError as error:
        print(f"spark cluster: {error}", file=sys.stderr)
        return 1
    return 0


def _exports(cluster: Cluster) -> str:
    return "\n".join(f"export {key}={value}" for key, value in cluster.environment().items())


if __name__ == "__main__":
    sys.exit(main())
