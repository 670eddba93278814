"""sluicegate against Spark's own Thrift server (HiveThriftServer2), same pyspark jars, one server at a time.

    ./run bench                      # full run: 1,000,000-row fetches, 20 opens, 50 SELECT 1, 3 runs per fetch figure
    ./run bench bench/gateway_bench.py --quick          # 100,000 rows, fewer repetitions: to try it out
    ./run bench bench/gateway_bench.py --only sts       # one server only (sluicegate | sts)

Each server is started, warmed up (a few queries including one full-size fetch), measured, and stopped before the
next one starts: the machine has two cores, so the two servers never run at the same time. Figures per server:

  open session      PyHive `hive.connect` (SASL PLAIN, OpenSession, `USE default`) + close; p50
  SELECT 1          execute + fetchall on one open PyHive connection; p50 and p95
  fetch (a)         stock PyHive (pure-Python Thrift decoding), cursor.arraysize = 10000, fetchall; rows/s
  fetch (b)         the same Thrift client with thrift's C decoder (TBinaryProtocolAccelerated), FetchResults of
                    10000 rows, rows counted from the columnar TRowSet; rows/s. Runs in a child process, so that the
                    codec patch never touches the stock-PyHive measurements of this process.
  fetch (c)         beeline (Hive JDBC), csv2 to /dev/null: wall time minus the wall time of beeline running SELECT 1
                    (JVM start, connect); rows/s

and, from sluicegate only (over its HTTP port, with a token; Spark's Thrift server answers no Spark protocol version,
so the connector refuses it):

  connector         databricks-sql-connector as a user connects it: open session p50; SELECT 1 (execute + fetchall,
                    answered with direct results: one HTTP request) p50 and p95; fetch with Arrow results (LZ4) by
                    `fetchall_arrow()`, and as rows through `fetchmany(100000)`; rows/s. A second table sets these
                    against Spark's Thrift server with its best client of the run (issue 15's aims).

(a)-(c) and the connector's fetches are medians over 3 runs. Alongside, the CPU seconds used by the server's processes
(for sluicegate: its Python process and its JVM) and by the client are recorded for each fetch, which tells where the
time goes.
The table is printed; everything, raw samples included, is written as JSON to bench/out/.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import selectors
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
OUT_DIR = BENCH_DIR / "out"
HOST = "127.0.0.1"

def _sluicegate_spark_defaults() -> tuple[str, str]:
    """sluicegate's default Spark master and driver memory: the Thrift server is started with the same."""
    from sluicegate.gateway.config import load_config

    spark = load_config().spark
    return spark.master, spark.driver_memory


SPARK_MASTER, DRIVER_MEMORY = _sluicegate_spark_defaults()
FETCH_ROWS = 10000    # PyHive arraysize and FetchResults maxRows

FETCH_SQL = ("SELECT id, id*2 AS a, CAST(id AS STRING) AS s, id/3.0D AS d, id % 7 = 0 AS b "
             "FROM range({rows})")

SERVERS = {"sluicegate": "sluicegate", "sts": "Spark Thrift Server"}


@dataclass(frozen=True)
class Plan:
    rows: int
    opens: int
    selects: int
    fetch_runs: int
    beeline_base_runs: int
    status_calls: int


def plan_for(args: argparse.Namespace) -> Plan:
    if args.quick:
        return Plan(rows=args.rows or 100_000, opens=5, selects=15, fetch_runs=1, beeline_base_runs=1,
                    status_calls=2000)
    return Plan(rows=args.rows or 1_000_000, opens=20, selects=50, fetch_runs=3, beeline_base_runs=3,
                status_calls=10000)


# -- statistics -------------------------------------------------------------------------------------------------


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100)."""
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


# -- the machine ------------------------------------------------------------------------------------------------


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def java_home() -> Path:
    sys.path.insert(0, str(BENCH_DIR.parent))
    from sluicegate.engine.java import find_java_home

    return find_java_home()


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def machine_info(java: Path) -> dict[str, Any]:
    import pyarrow
    import pyspark

    cpu_model = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    mem_kib = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem_kib = int(line.split()[1])
                break
    java_version = subprocess.run([str(java / "bin" / "java"), "-version"], capture_output=True, text=True).stderr
    return {
        "nproc": os.cpu_count(),
        "memory_gib": round(mem_kib / 1024 / 1024, 1),
        "cpu_model": cpu_model,
        "kernel": platform.release(),
        "python": platform.python_version(),
        "java": java_version.strip().splitlines()[0] if java_version.strip() else "unknown",
        "java_home": str(java),
        "pyspark": pyspark.__version__,
        "pyarrow": pyarrow.__version__,
    }


# -- CPU accounting ---------------------------------------------------------------------------------------------

_TICK = os.sysconf("SC_CLK_TCK")


def _proc_stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, user+system CPU seconds) of one process, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
    except OSError:
        return None
    fields = data[data.rindex(")") + 2:].split()
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / _TICK


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds used so far by `root` and every process below it (sluicegate's Python process and its JVM)."""
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _proc_stat(int(entry))
            if stat is not None:
                parents[int(entry)], cpu[int(entry)] = stat
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        total += cpu.get(pid, 0.0)
        todo.extend(child for child, parent in parents.items() if parent == pid)
    return total


# -- starting and stopping the servers ----------------------------------------------------------------------------


def servers_env() -> tuple[Path, dict[str, str]]:
    """The JDK, and the environment both servers start in: the pyspark jars' Spark, loopback, this interpreter for
    Python workers, no outside Spark configuration."""
    java = java_home()
    env = dict(os.environ, JAVA_HOME=str(java), SPARK_HOME=str(spark_home()), SPARK_LOCAL_IP=HOST,
               PYSPARK_PYTHON=sys.executable)
    env.pop("SPARK_CONF_DIR", None)
    return java, env


def free_port() -> int:
    with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


@dataclass
class Server:
    key: str
    proc: subprocess.Popen
    port: int
    log: Path
    started_in: float
    http_port: int | None = None   # sluicegate's Thrift over HTTP port (the Databricks connector's)
    token: str | None = None       # an access token for it

    def stop(self, timeout: float = 90) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                print(f"  {self.key} did not stop within {timeout:g} s of SIGTERM; killing pid {self.proc.pid}")
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def bench_token(workdir: Path, env: dict[str, str], result_cache: bool = False,
                extra_conf: str = "") -> tuple[Path, str]:
    """A token file with one token of user `bench` (the connector sends it as Bearer), and a conf naming it; the
    result cache off unless `result_cache` (bench/result_cache_bench.py, which times it); `extra_conf` (TOML
    tables) appended, e.g. bench/load_bench.py's raised connection caps."""
    tokens = workdir / "tokens"
    made = subprocess.run([sys.executable, "-m", "sluicegate.gateway", "token", "create", "bench",
                           "--file", str(tokens)],
                          capture_output=True, text=True, cwd=workdir, env=env, check=True)
    conf = workdir / "bench.toml"
    # the result cache off by default: these figures time Spark's work, run after run
    conf.write_text(f'[auth]\ntoken_file = "{tokens}"\n\n[result_cache]\nenabled = {str(result_cache).lower()}\n'
                    + extra_conf)
    return conf, made.stdout.split()[0]


def start_sluicegate(workdir: Path, env: dict[str, str], deadline: float, result_cache: bool = False,
                     extra_conf: str = "") -> Server:
    """With the HTTP port on (any free port) and a token, for the Databricks connector's figures."""
    log = workdir / "sluicegate.log"
    conf, token = bench_token(workdir, env, result_cache, extra_conf)
    started = time.perf_counter()
    with open(log, "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "sluicegate.gateway", "serve", "--port", "0", "--http-port", "0", "--warehouse",
             str(workdir / "warehouse"), "--conf", str(conf)],
            stdout=subprocess.PIPE, stderr=err, cwd=workdir, env=env,
        )
    assert proc.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)
    buffered = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or proc.poll() is not None:
            proc.kill() if proc.poll() is None else None
            raise RuntimeError(f"sluicegate did not become ready; its log ends with:\n{tail(log)}")
        if not selector.select(timeout=min(left, 1.0)):
            continue
        chunk = os.read(proc.stdout.fileno(), 4096)
        if not chunk:
            continue
        buffered += chunk
        text = buffered.decode(errors="replace")
        ready = re.search(r"sluicegate ready on [^:]+:(\d+)\b", text)
        http = re.search(r"Thrift over HTTP at https?://[^:]+:(\d+)/", text)
        if ready and http:
            selector.close()
            return Server("sluicegate", proc, int(ready.group(1)), log, time.perf_counter() - started,
                          http_port=int(http.group(1)), token=token)


def start_sts(workdir: Path, env: dict[str, str], deadline: float) -> Server:
    home = spark_home()
    port = free_port()
    log = workdir / "sts.log"
    command = [
        str(home / "bin" / "spark-submit"),
        "--class", "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2",
        "--master", SPARK_MASTER,
        "--driver-memory", DRIVER_MEMORY,
        "--conf", "spark.sql.shuffle.partitions=2",
        "--conf", "spark.ui.enabled=false",
        "--conf", "spark.driver.bindAddress=127.0.0.1",
        "--conf", "spark.driver.host=127.0.0.1",
        "--hiveconf", f"hive.server2.thrift.port={port}",
        "--hiveconf", f"hive.server2.thrift.bind.host={HOST}",
        "spark-internal",
    ]
    started = time.perf_counter()
    with open(log, "wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=workdir, env=env)
    server = Server("sts", proc, port, log, 0.0)
    from pyhive import hive

    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"the Spark Thrift Server exited with {proc.returncode}; its log ends with:\n"
                               f"{tail(log)}")
        if time.monotonic() > deadline:
            server.stop()
            raise RuntimeError("the Spark Thrift Server did not accept sessions in time; its log ends with:\n"
                               f"{tail(log)}")
        try:
            with closing(socket.create_connection((HOST, port), timeout=2)):
                pass
            hive.connect(HOST, port, username="bench").close()
        except Exception:  # noqa: BLE001 - not up yet: connection refused, or the transport closed during start-up
            time.sleep(0.5)
            continue
        server.started_in = time.perf_counter() - started
        return server


@contextmanager
def running(key: str, workdir: Path, env: dict[str, str], start_timeout: float,
            result_cache: bool = False, extra_conf: str = "") -> Iterator[Server]:
    """The server `key` started and, at the end, stopped (sluicegate with its result cache only when asked, and
    `extra_conf` appended to its conf)."""
    deadline = time.monotonic() + start_timeout
    server = (start_sluicegate(workdir, env, deadline, result_cache, extra_conf) if key == "sluicegate"
              else start_sts(workdir, env, deadline))
    try:
        yield server
    finally:
        server.stop()


# -- the clients --------------------------------------------------------------------------------------------------


def pyhive_connect(port: int) -> Any:
    from pyhive import hive

    return hive.connect(HOST, port, username="bench")


def measure_open_session(port: int, runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        pyhive_connect(port).close()
        samples.append(time.perf_counter() - t0)
    return samples


def measure_select1(port: int, runs: int) -> list[float]:
    samples = []
    with closing(pyhive_connect(port)) as conn, closing(conn.cursor()) as cursor:
        for _ in range(runs):
            t0 = time.perf_counter()
            cursor.execute("SELECT 1")
            rows = cursor.fetchall()
            samples.append(time.perf_counter() - t0)
            assert rows == [(1,)], rows
    return samples


def fetch_pyhive(server: Server, sql: str, expected: int) -> dict[str, float]:
    """(a) stock PyHive: execute + fetchall, arraysize 10000, on an open connection."""
    with closing(pyhive_connect(server.port)) as conn, closing(conn.cursor()) as cursor:
        cursor.arraysize = FETCH_ROWS
        server_cpu0, client_cpu0 = tree_cpu_seconds(server.proc.pid), time.process_time()
        t0 = time.perf_counter()
        cursor.execute(sql)
        rows = cursor.fetchall()
        seconds = time.perf_counter() - t0
        client_cpu = time.process_time() - client_cpu0
        server_cpu = tree_cpu_seconds(server.proc.pid) - server_cpu0
    if len(rows) != expected:
        raise RuntimeError(f"stock PyHive fetched {len(rows)} rows, expected {expected}")
    del rows
    return {"seconds": seconds, "rows_per_s": expected / seconds, "client_cpu_s": client_cpu,
            "server_cpu_s": server_cpu}


def fast_fetch_worker(port: int, sql: str, runs: int, status_calls: int) -> dict[str, Any]:
    """(b), in a child process: PyHive's Thrift client with thrift's C decoder, driven by hand. Then, on a finished
    operation, `status_calls` GetOperationStatus round trips: the Hive JDBC driver of beeline sends one per row read."""
    sys.path.insert(0, str(BENCH_DIR.parent))
    from sluicegate.gateway.thrift import enable_fast_codec

    enable_fast_codec()  # PyHive's generated types, patched so that TBinaryProtocolAccelerated can decode them
    import thrift_sasl
    from pyhive.hive import get_installed_sasl
    from TCLIService import TCLIService
    from TCLIService import ttypes as T
    from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
    from thrift.transport.TSocket import TSocket

    def check(resp: Any) -> Any:
        if resp.status.statusCode not in (T.TStatusCode.SUCCESS_STATUS, T.TStatusCode.SUCCESS_WITH_INFO_STATUS):
            raise RuntimeError(f"{type(resp).__name__}: {resp.status.errorMessage}")
        return resp

    # As pyhive.hive.Connection builds it for auth NONE: SASL PLAIN, any non-empty password.
    transport = thrift_sasl.TSaslClientTransport(
        lambda: get_installed_sasl(host=HOST, sasl_auth="PLAIN", service=None, username="bench", password="x"),
        "PLAIN", TSocket(HOST, port))
    client = TCLIService.Client(TBinaryProtocolAccelerated(transport))
    transport.open()
    results = []
    try:
        session = check(client.OpenSession(T.TOpenSessionReq(
            client_protocol=T.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V6, username="bench", configuration={})))
        handle = session.sessionHandle
        for _ in range(runs):
            cpu0 = time.process_time()
            t0 = time.perf_counter()
            op = check(client.ExecuteStatement(T.TExecuteStatementReq(sessionHandle=handle, statement=sql,
                                                                       runAsync=False))).operationHandle
            rows = 0
            while True:
                fetched = check(client.FetchResults(T.TFetchResultsReq(
                    operationHandle=op, orientation=T.TFetchOrientation.FETCH_NEXT, maxRows=FETCH_ROWS)))
                column = fetched.results.columns[0]
                values = next(v for v in vars(column).values() if v is not None).values
                if not values:
                    break
                rows += len(values)
            seconds = time.perf_counter() - t0
            cpu = time.process_time() - cpu0
            check(client.CloseOperation(T.TCloseOperationReq(operationHandle=op)))
            results.append({"rows": rows, "seconds": seconds, "client_cpu_s": cpu})
        round_trips = []
        if status_calls:
            op = check(client.ExecuteStatement(T.TExecuteStatementReq(sessionHandle=handle, statement="SELECT 1",
                                                                       runAsync=False))).operationHandle
            request = T.TGetOperationStatusReq(operationHandle=op)
            for _ in range(status_calls):
                t0 = time.perf_counter()
                check(client.GetOperationStatus(request))
                round_trips.append(time.perf_counter() - t0)
            check(client.CloseOperation(T.TCloseOperationReq(operationHandle=op)))
        check(client.CloseSession(T.TCloseSessionReq(sessionHandle=handle)))
    finally:
        transport.close()
    return {"fetches": results, "status_round_trips": round_trips}


def fetch_fast(server: Server, sql: str, expected: int, runs: int,
               status_calls: int = 0) -> tuple[list[dict[str, float]], list[float]]:
    """Run the (b) worker; the server's CPU is taken around the whole worker (`runs` fetches, plus one session)."""
    cpu0 = tree_cpu_seconds(server.proc.pid)
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--fast-fetch-worker", str(server.port), sql, str(runs), "0"],
        capture_output=True, text=True)
    server_cpu = tree_cpu_seconds(server.proc.pid) - cpu0
    if done.returncode != 0:
        raise RuntimeError(f"the C-decoder client failed:\n{done.stderr[-3000:]}")
    results = json.loads(done.stdout.strip().splitlines()[-1])["fetches"]
    round_trips: list[float] = []
    if status_calls:
        done = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--fast-fetch-worker", str(server.port), "SELECT 1", "0",
             str(status_calls)], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"the C-decoder client failed:\n{done.stderr[-3000:]}")
        round_trips = json.loads(done.stdout.strip().splitlines()[-1])["status_round_trips"]
    for result in results:
        if result["rows"] != expected:
            raise RuntimeError(f"the C-decoder client fetched {result['rows']} rows, expected {expected}")
        result["rows_per_s"] = expected / result["seconds"]
        result["server_cpu_s"] = server_cpu / runs  # the worker's runs back to back: the average per run
    return results, round_trips


def beeline(port: int, sql: str, env: dict[str, str], capture: bool = False) -> tuple[float, str]:
    command = [str(spark_home() / "bin" / "beeline"), "-u", f"jdbc:hive2://{HOST}:{port}/default", "-n", "bench",
               "--silent=true", "--outputformat=csv2", "-e", sql]
    t0 = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
                          stderr=subprocess.PIPE, env=env, text=True)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"beeline exited with {done.returncode}:\n{done.stderr[-3000:]}")
    return seconds, done.stdout or ""


def fetch_beeline(server: Server, sql: str, expected: int, base: float, env: dict[str, str]) -> dict[str, float]:
    cpu0 = tree_cpu_seconds(server.proc.pid)
    seconds, _ = beeline(server.port, sql, env)
    server_cpu = tree_cpu_seconds(server.proc.pid) - cpu0
    net = seconds - base
    return {"seconds": seconds, "net_seconds": net, "rows_per_s": expected / net if net > 0 else float("nan"),
            "server_cpu_s": server_cpu}


# -- the Databricks connector (sluicegate only: it needs a Spark protocol version, which STS does not answer) ------


def dbx_connect(server: Server) -> Any:
    """databricks-sql-connector as the README tells users to connect: http:// needs the private `_connection_uri`;
    without `enable_telemetry=False` every connect first waits on a feature-flag GET to https://host:443."""
    from databricks import sql

    return sql.connect(server_hostname=HOST, http_path="/cliservice", access_token=server.token,
                       _connection_uri=f"http://{HOST}:{server.http_port}/cliservice", enable_telemetry=False)


def measure_dbx_open_session(server: Server, runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        dbx_connect(server).close()
        samples.append(time.perf_counter() - t0)
    return samples


def measure_dbx_select1(server: Server, runs: int) -> list[float]:
    """execute + fetchall on one open connection: with direct results, one HTTP request per statement."""
    samples = []
    with closing(dbx_connect(server)) as conn, closing(conn.cursor()) as cursor:
        for _ in range(runs):
            t0 = time.perf_counter()
            cursor.execute("SELECT 1")
            rows = cursor.fetchall()
            samples.append(time.perf_counter() - t0)
            assert rows[0][0] == 1, rows
    return samples


def fetch_dbx(server: Server, sql: str, expected: int, arrow: bool) -> dict[str, float]:
    """(d) the connector with Arrow results (its default: LZ4 frames, native types): `fetchall_arrow()` when `arrow`,
    else rows counted through `fetchmany(100000)` (Python Row objects, what DB-API code gets)."""
    with closing(dbx_connect(server)) as conn, closing(conn.cursor()) as cursor:
        server_cpu0, client_cpu0 = tree_cpu_seconds(server.proc.pid), time.process_time()
        t0 = time.perf_counter()
        cursor.execute(sql)
        if arrow:
            rows = cursor.fetchall_arrow().num_rows
        else:
            rows = 0
            while batch := cursor.fetchmany(100_000):
                rows += len(batch)
        seconds = time.perf_counter() - t0
        client_cpu = time.process_time() - client_cpu0
        server_cpu = tree_cpu_seconds(server.proc.pid) - server_cpu0
    if rows != expected:
        raise RuntimeError(f"the Databricks connector fetched {rows} rows, expected {expected}")
    return {"seconds": seconds, "rows_per_s": expected / seconds, "client_cpu_s": client_cpu,
            "server_cpu_s": server_cpu}


def bench_dbx(server: Server, plan: Plan, sql: str) -> dict[str, Any]:
    say("sluicegate: databricks-sql-connector over HTTP: warm-up")
    measure_dbx_select1(server, 5)
    fetch_dbx(server, FETCH_SQL.format(rows=min(plan.rows, 100_000)), min(plan.rows, 100_000), arrow=True)
    say(f"sluicegate: connector open session x{plan.opens}, SELECT 1 x{plan.selects}")
    opens = measure_dbx_open_session(server, plan.opens)
    selects = measure_dbx_select1(server, plan.selects)
    say(f"sluicegate: connector fetch {plan.rows:,} rows x {plan.fetch_runs}: Arrow, then rows")
    arrow = [fetch_dbx(server, sql, plan.rows, arrow=True) for _ in range(plan.fetch_runs)]
    rows = [fetch_dbx(server, sql, plan.rows, arrow=False) for _ in range(plan.fetch_runs)]
    return {
        "connector": _connector_version(),
        "open_session_s": {"p50": statistics.median(opens), "samples": opens},
        "select1_s": {"p50": statistics.median(selects), "p95": percentile(selects, 95), "samples": selects},
        "fetch_arrow": summarize(arrow),
        "fetch_rows": summarize(rows),
    }


def _connector_version() -> str:
    from importlib.metadata import version

    return version("databricks-sql-connector")


# -- one server ---------------------------------------------------------------------------------------------------


def warm_up(server: Server, plan: Plan, sql: str, env: dict[str, str]) -> None:
    with closing(pyhive_connect(server.port)) as conn, closing(conn.cursor()) as cursor:
        for _ in range(5):
            cursor.execute("SELECT 1")
            cursor.fetchall()
        cursor.execute("SELECT sum(id), count(*) FROM range(1000000)")
        cursor.fetchall()
        cursor.arraysize = FETCH_ROWS
        small = FETCH_SQL.format(rows=min(plan.rows, 100_000))
        cursor.execute(small)
        cursor.fetchall()
    fetch_fast(server, sql, plan.rows, 1, status_calls=200)  # the full-size fetch, with the cheap client
    _, out = beeline(server.port, FETCH_SQL.format(rows=1000), env, capture=True)
    lines = out.strip().splitlines()
    # beeline echoes its prompt before the header when stdin is not a terminal: "0: jdbc:hive2://...> id,a,s,d,b"
    if len(lines) != 1001 or not lines[0].endswith("id,a,s,d,b") or lines[-1] != "999,1998,999,333.0,false":
        raise RuntimeError(f"beeline's check fetch returned {len(lines)} lines, starting {lines[:2]}")


def summarize(samples: list[dict[str, float]]) -> dict[str, Any]:
    rates = [s["rows_per_s"] for s in samples]
    median = statistics.median(rates)
    return {"rows_per_s": median, "runs": samples,
            "client_cpu_s": statistics.median([s.get("client_cpu_s", float("nan")) for s in samples]),
            "server_cpu_s": statistics.median([s.get("server_cpu_s", float("nan")) for s in samples])}


def bench_server(key: str, plan: Plan, env: dict[str, str], start_timeout: float) -> dict[str, Any]:
    sql = FETCH_SQL.format(rows=plan.rows)
    workdir = Path(tempfile.mkdtemp(prefix=f"sluicegate-bench-{key}-"))
    try:
        say(f"{SERVERS[key]}: starting")
        with running(key, workdir, env, start_timeout) as server:
            say(f"{SERVERS[key]}: up on port {server.port} after {server.started_in:.1f} s; warming up")
            warm_up(server, plan, sql, env)
            say(f"{SERVERS[key]}: open session x{plan.opens}, SELECT 1 x{plan.selects}")
            opens = measure_open_session(server.port, plan.opens)
            selects = measure_select1(server.port, plan.selects)
            say(f"{SERVERS[key]}: fetch {plan.rows:,} rows x {plan.fetch_runs}: (a) stock PyHive")
            stock = [fetch_pyhive(server, sql, plan.rows) for _ in range(plan.fetch_runs)]
            say(f"{SERVERS[key]}: (b) C decoder")
            fast, round_trips = fetch_fast(server, sql, plan.rows, plan.fetch_runs, status_calls=plan.status_calls)
            say(f"{SERVERS[key]}: (c) beeline")
            base_runs = [beeline(server.port, "SELECT 1", env)[0] for _ in range(plan.beeline_base_runs)]
            base = statistics.median(base_runs)
            jdbc = [fetch_beeline(server, sql, plan.rows, base, env) for _ in range(plan.fetch_runs)]
            dbx = bench_dbx(server, plan, sql) if server.http_port is not None else None
            rss_mib = _rss_tree_mib(server.proc.pid)
        say(f"{SERVERS[key]}: stopped")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return {
        "server": SERVERS[key],
        "startup_s": server.started_in,
        "open_session_s": {"p50": statistics.median(opens), "samples": opens},
        "select1_s": {"p50": statistics.median(selects), "p95": percentile(selects, 95), "samples": selects},
        "fetch_pyhive": summarize(stock),
        "fetch_c_decoder": summarize(fast),
        "get_operation_status_s": {"p50": statistics.median(round_trips), "p95": percentile(round_trips, 95),
                                   "calls": len(round_trips)},
        "fetch_beeline": {**summarize(jdbc), "beeline_select1_s": base, "beeline_select1_runs": base_runs},
        "rss_after_mib": rss_mib,
        "databricks_connector": dbx,
    }


def _rss_tree_mib(root: int) -> float:
    """Resident memory of the server's processes at the end (their JVM heaps are sized alike: 2g)."""
    total = 0
    pids = [root]
    seen = set()
    while pids:
        pid = pids.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as f:
                    pids.extend(int(c) for c in f.read().split())
        except OSError:
            continue
    return round(total / 1024, 1)


# -- the report ---------------------------------------------------------------------------------------------------

# (label, key path, unit, lower is better)
FIGURES: list[tuple[str, Callable[[dict[str, Any]], float], str, bool]] = [
    ("open session (connect + close), p50", lambda r: r["open_session_s"]["p50"], "ms", True),
    ("SELECT 1 (execute + fetchall), p50", lambda r: r["select1_s"]["p50"], "ms", True),
    ("SELECT 1 (execute + fetchall), p95", lambda r: r["select1_s"]["p95"], "ms", True),
    ("fetch (a) stock PyHive", lambda r: r["fetch_pyhive"]["rows_per_s"], "rows/s", False),
    ("fetch (b) PyHive client + C decoder", lambda r: r["fetch_c_decoder"]["rows_per_s"], "rows/s", False),
    ("fetch (c) beeline (JDBC), net of JVM start", lambda r: r["fetch_beeline"]["rows_per_s"], "rows/s", False),
]

SUPPLEMENT: list[tuple[str, Callable[[dict[str, Any]], float], str]] = [
    ("server CPU per fetch (a)", lambda r: r["fetch_pyhive"]["server_cpu_s"], "s"),
    ("server CPU per fetch (b)", lambda r: r["fetch_c_decoder"]["server_cpu_s"], "s"),
    ("server CPU per fetch (c)", lambda r: r["fetch_beeline"]["server_cpu_s"], "s"),
    ("client CPU per fetch (a)", lambda r: r["fetch_pyhive"]["client_cpu_s"], "s"),
    ("client CPU per fetch (b)", lambda r: r["fetch_c_decoder"]["client_cpu_s"], "s"),
    ("GetOperationStatus round trip, p50 (beeline sends one per row)", lambda r: r["get_operation_status_s"]["p50"],
     "us"),
    ("beeline SELECT 1 wall (subtracted in (c))", lambda r: r["fetch_beeline"]["beeline_select1_s"], "s"),
    ("server start-up (to first session)", lambda r: r["startup_s"], "s"),
    ("server RSS after the run", lambda r: r["rss_after_mib"], "MiB"),
]


def fmt(value: float, unit: str) -> str:
    if value != value:  # NaN
        return "n/a"
    if unit == "ms":
        return f"{value * 1000:.1f} ms"
    if unit == "rows/s":
        return f"{value:,.0f} rows/s"
    if unit == "us":
        return f"{value * 1e6:.0f} us"
    if unit == "MiB":
        return f"{value:,.0f} MiB"
    return f"{value:.2f} s"


def table(results: dict[str, dict[str, Any]], rows: int) -> str:
    sg, sts = results.get("sluicegate"), results.get("sts")
    head = ["figure", "sluicegate", "Spark Thrift Server", "ratio (>1: sluicegate better)"]
    lines = []
    for label, get, unit, lower_better in FIGURES:
        a = get(sg) if sg else float("nan")
        b = get(sts) if sts else float("nan")
        if sg and sts and a > 0 and b > 0:
            ratio = b / a if lower_better else a / b
            ratio_text = f"{ratio:.2f}x ({'sluicegate' if ratio >= 1 else 'STS'} better)"
        else:
            ratio_text = "n/a"
        shown = f"{label} ({rows:,} rows x 5 cols)" if unit == "rows/s" else label
        lines.append([shown, fmt(a, unit) if sg else "-", fmt(b, unit) if sts else "-", ratio_text])
    for label, get, unit in SUPPLEMENT:
        lines.append([label, fmt(get(sg), unit) if sg else "-", fmt(get(sts), unit) if sts else "-", ""])
    widths = [max(len(str(row[i])) for row in [head, *lines]) for i in range(4)]

    def render(row: list[str]) -> str:
        return "| " + " | ".join(str(cell).ljust(widths[i]) for i, cell in enumerate(row)) + " |"

    out = [render(head), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [render(row) for row in lines[:len(FIGURES)]]
    out.append(render(["*supplementary*", "", "", ""]))
    out += [render(row) for row in lines[len(FIGURES):]]
    return "\n".join(out)


STS_FETCHES = {"fetch_pyhive": "stock PyHive", "fetch_c_decoder": "PyHive + C decoder", "fetch_beeline": "beeline"}


def _sts_best_fetch(sts: dict[str, Any]) -> tuple[float, str]:
    """Spark's Thrift server with its fastest client of the run: (rows/s, which client)."""
    key = max(STS_FETCHES, key=lambda k: sts[k]["rows_per_s"] if sts[k]["rows_per_s"] == sts[k]["rows_per_s"] else 0)
    return sts[key]["rows_per_s"], STS_FETCHES[key]


def dbx_table(results: dict[str, dict[str, Any]], rows: int) -> str:
    """The Databricks connector on sluicegate against Spark's Thrift server with PyHive (the connector cannot talk to
    it: it needs a Spark protocol version), on the figures issue 15 sets aims for."""
    dbx = (results.get("sluicegate") or {}).get("databricks_connector")
    sts = results.get("sts")
    if not dbx:
        return ""
    best, best_client = _sts_best_fetch(sts) if sts else (float("nan"), "-")
    nan = float("nan")
    figures: list[tuple[str, float, float, str, bool]] = [
        (f"fetch, connector Arrow (fetchall_arrow) vs STS with its best client ({best_client}), {rows:,} rows x 5 "
         "cols", dbx["fetch_arrow"]["rows_per_s"], best, "rows/s", False),
        ("fetch, connector rows (fetchmany 100,000) vs the same", dbx["fetch_rows"]["rows_per_s"], best, "rows/s",
         False),
        ("SELECT 1, connector with direct results vs STS with PyHive, p50", dbx["select1_s"]["p50"],
         sts["select1_s"]["p50"] if sts else nan, "ms", True),
        ("SELECT 1, same, p95", dbx["select1_s"]["p95"], sts["select1_s"]["p95"] if sts else nan, "ms", True),
        ("open session (connect + close), connector vs STS with PyHive, p50", dbx["open_session_s"]["p50"],
         sts["open_session_s"]["p50"] if sts else nan, "ms", True),
        ("sluicegate server CPU per connector Arrow fetch (STS: per fetch (b))", dbx["fetch_arrow"]["server_cpu_s"],
         sts["fetch_c_decoder"]["server_cpu_s"] if sts else nan, "s", True),
        ("client CPU per connector Arrow fetch (STS: per fetch (b))", dbx["fetch_arrow"]["client_cpu_s"],
         sts["fetch_c_decoder"]["client_cpu_s"] if sts else nan, "s", True),
    ]
    head = [f"Databricks connector {dbx['connector']} over HTTP", "sluicegate", "Spark Thrift Server",
            "ratio (>1: sluicegate better)"]
    lines = []
    for label, a, b, unit, lower_better in figures:
        ratio = (b / a if lower_better else a / b) if a > 0 and b > 0 else nan
        ratio_text = "n/a" if ratio != ratio else f"{ratio:.2f}x"
        lines.append([label, fmt(a, unit), fmt(b, unit), ratio_text])
    widths = [max(len(str(row[i])) for row in [head, *lines]) for i in range(4)]

    def render(row: list[str]) -> str:
        return "| " + " | ".join(str(cell).ljust(widths[i]) for i, cell in enumerate(row)) + " |"

    return "\n".join([render(head), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(render, lines)])


def finish_run(name: str, table_text: str, machine: dict[str, Any], load_before: list[float],
               load_after: list[float], started: float, record: dict[str, Any]) -> Path:
    """Print a run's table with the machine and its load, and write the raw record to bench/out/<name>-<time>.json."""
    print()
    print(table_text)
    print()
    print(f"machine: nproc {machine['nproc']}, {machine['memory_gib']} GiB, {machine['cpu_model']}; "
          f"Python {machine['python']}; {machine['java']}; pyspark {machine['pyspark']}")
    print(f"load average (1, 5, 15 min) before {load_before}, after {load_after}; "
          f"run took {time.perf_counter() - started:.0f} s")
    OUT_DIR.mkdir(exist_ok=True)
    out = OUT_DIR / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.write_text(json.dumps({
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **record, "machine": machine, "load_before": load_before,
        "load_after": load_after, "table": table_text,
    }, indent=2, default=str))
    print(f"written {out.relative_to(BENCH_DIR.parent)}")
    return out


def say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, help="rows of the fetch figures (default 1000000; 100000 with --quick)")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions and 100k rows, to try it out")
    parser.add_argument("--only", choices=sorted(SERVERS), help="measure one server only")
    parser.add_argument("--start-timeout", type=float, default=300, help="seconds a server may take to start")
    parser.add_argument("--fast-fetch-worker", nargs=4, metavar=("PORT", "SQL", "RUNS", "STATUS_CALLS"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.fast_fetch_worker:
        port, sql, runs, status_calls = args.fast_fetch_worker
        print(json.dumps(fast_fetch_worker(int(port), sql, int(runs), int(status_calls))))
        return 0

    plan = plan_for(args)
    java, env = servers_env()
    machine = machine_info(java)
    load_before = load_average()
    say(f"machine: {machine['nproc']} CPUs ({machine['cpu_model']}), {machine['memory_gib']} GiB; "
        f"Python {machine['python']}, {machine['java']}, pyspark {machine['pyspark']}; load {load_before}")
    say(f"plan: {plan}")

    results: dict[str, dict[str, Any]] = {}
    started = time.perf_counter()
    for key in ([args.only] if args.only else ["sluicegate", "sts"]):
        results[key] = bench_server(key, plan, env, args.start_timeout)
    load_after = load_average()

    tables = "\n\n".join(text for text in (table(results, plan.rows), dbx_table(results, plan.rows)) if text)
    finish_run(f"gateway_bench{'-quick' if args.quick else ''}", tables, machine, load_before,
               load_after, started,
               {"plan": vars(plan), "fetch_sql": FETCH_SQL.format(rows=plan.rows), "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
