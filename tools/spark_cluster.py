"""A local Spark cluster for the `spark-cluster` target: a standalone master, one worker and a
Spark Thrift Server submitted to that master, all on 127.0.0.1, from the pyspark wheel.

    python -m tools.spark_cluster start  --state DIR [--cores 2] [--port 10000]
    python -m tools.spark_cluster status --state DIR
    python -m tools.spark_cluster env    --state DIR     # the variables dbt and refill read
    python -m tools.spark_cluster stop   --state DIR

Everything lives under the state folder: the Hive metastore (embedded Derby, `metastore_db/`,
owned by the Thrift Server's driver, the one process that opens it), the warehouse folder
(`warehouse/`: every table's files), the worker's and Spark's scratch folders, the logs
(`logs/master.log`, `logs/worker.log`, `logs/thriftserver.log`) and `cluster.json` (ports and
process ids). `start` is idempotent: a healthy cluster is left as it is; a partial one (a
process died) is stopped and started again over the same metastore and warehouse, so tables
outlive the cluster; a `start` or `stop` waits for one in flight on the same folder (CI
starts the cluster in the background while the tests begin). `stop` ends each process's
group (the worker's executors are its children), politely first.

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
import sys
import time
from dataclasses import asdict, dataclass
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
class Cluster:
    """A running cluster, as cluster.json records it."""

    state: str
    host: str
    master_port: int
    thrift_port: int
    cores: int
    pids: dict[str, int]

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
    except (OSError, ValueError):
        return None
    return Cluster(**data)


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
    """Every process alive and the Thrift Server answering."""
    if cluster is None or set(cluster.pids) != set(PROCESSES):
        return False
    if not all(_alive(pid) for pid in cluster.pids.values()):
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


def _launch(name: str, command: list[str], state: Path, **extra: str) -> int:
    """Start one process in its own session (its group is what `stop` ends), its output
    appended to logs/<name>.log; returns its pid (the JVM's: spark-class execs java)."""
    import subprocess

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
    return process.pid


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
    pids: dict[str, int] = {}
    try:
        since = _log_size(logs / "master.log")
        pids["master"] = _launch(
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
            pids["master"],
            logs / "master.log",
            timeout,
        )
        since = _log_size(logs / "worker.log")
        pids["worker"] = _launch(
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
            pids["worker"],
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
        pids["thriftserver"] = _launch("thriftserver", submit, state)
        _wait_for(
            "Thrift Server",
            lambda: answers(HOST, thrift_port),
            pids["thriftserver"],
            logs / "thriftserver.log",
            timeout,
        )
    except BaseException:
        _end_all(pids)
        raise
    cluster = Cluster(str(state), HOST, master_port, thrift_port, cores, pids)
    partial = _state_file(state).with_suffix(".json.partial")
    partial.write_text(json.dumps(asdict(cluster), indent=2))
    os.replace(partial, _state_file(state))
    return cluster


def _end_all(pids: dict[str, int]) -> None:
    """End each process group, Thrift Server first (its driver stops its executors), then
    the worker (and any executor left in its group), then the master."""
    for name in PROCESSES:
        pid = pids.get(name)
        if pid is None:
            continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)  # the group: executors the worker started too


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
    _end_all(cluster.pids)
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
