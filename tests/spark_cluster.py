"""A Spark standalone cluster for tests: a master and workers started from pyspark's own jars on loopback.

Every port is picked free, the workers' registration is read from the master's JSON status page (polled, no fixed
waits), and the daemons run in process groups of their own, stopped when the block ends. The daemons get no
PYTHONPATH, so executors find the project's code only where the gateway ships it. A worker may be given a command
prefix: `private_mount(...)` starts it in a mount namespace of its own that sees another folder at a path, as a
machine with its own disk sees its own warehouse.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ports import free_ports

START_TIMEOUT = 120.0



def private_mount(source: Path, target: Path) -> list[str]:
    """A command prefix that runs the rest in a private mount namespace where `target` shows `source`'s files."""
    script = 'mount --bind "$1" "$2" && shift 2 && exec "$@"'
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", str(source), str(target)]


def mount_namespaces_work(folder: Path) -> bool:
    """Whether this machine lets us bind-mount in a private namespace (root, and no seccomp rule against it)."""
    source, target = folder / "ns-source", folder / "ns-target"
    source.mkdir(parents=True, exist_ok=True)
    target.mkdir(parents=True, exist_ok=True)
    (source / "seen").write_text("x")
    result = subprocess.run([*private_mount(source, target), "test", "-f", str(target / "seen")],
                            capture_output=True, timeout=30, check=False)
    return result.returncode == 0


def _spark_env(secret: str | None) -> dict[str, str]:
    import pyspark

    from sluicegate.engine.java import find_java_home

    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYSPARK_PYTHON")}
    env.update(SPARK_HOME=str(Path(pyspark.__file__).parent), JAVA_HOME=str(find_java_home()),
               SPARK_LOCAL_IP="127.0.0.1")
    if secret is not None:  # the daemons accept only applications that know the secret
        env["SPARK_DAEMON_JAVA_OPTS"] = f"-Dspark.authenticate=true -Dspark.authenticate.secret={secret}"
    return env


@dataclass
class StandaloneCluster:
    folder: Path
    secret: str | None = None      # spark.authenticate's shared secret of the daemons; None = no authentication
    master_port: int = 0
    web_port: int = 0
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def master(self) -> str:
        return f"spark://127.0.0.1:{self.master_port}"

    def _daemon(self, name: str, cls: str, args: Sequence[str], prefix: Sequence[str] = ()) -> None:
        env = _spark_env(self.secret)
        command = [*prefix, str(Path(env["SPARK_HOME"]) / "bin" / "spark-class"), cls, *args]
        log = open(self.folder / f"{name}.log", "ab")  # noqa: SIM115 - kept open by the child
        self.processes.append(subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env,
                                               cwd=self.folder, start_new_session=True))

    def status(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.web_port}/json/", timeout=5) as response:
            return json.loads(response.read())

    def start_master(self) -> None:
        self.master_port, self.web_port = free_ports(2)
        self._daemon("master", "org.apache.spark.deploy.master.Master",
                     ["--host", "127.0.0.1", "--port", str(self.master_port), "--webui-port", str(self.web_port)])
        self._wait(lambda status: status.get("status") == "ALIVE", "the master to be ALIVE")

    def add_worker(self, name: str, *, cores: int = 1, memory: str = "1g", prefix: Sequence[str] = ()) -> None:
        alive = self.alive_workers()
        (self.folder / name).mkdir(exist_ok=True)
        web_port, = free_ports(1)
        self._daemon(name, "org.apache.spark.deploy.worker.Worker",
                     [self.master, "--host", "127.0.0.1", "--cores", str(cores), "--memory", memory,
                      "--webui-port", str(web_port), "--work-dir", str(self.folder / name)], prefix)
        self._wait(lambda _status: self.alive_workers() > alive, f"worker {name} to register")

    def alive_workers(self) -> int:
        return sum(worker.get("state") == "ALIVE" for worker in self.status().get("workers", []))

    def applications(self) -> list[dict[str, Any]]:
        return list(self.status().get("activeapps", []))

    def _wait(self, ready: Any, what: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            for process in self.processes:
                if process.poll() is not None:
                    logs = " ".join(shlex.quote(str(p)) for p in self.folder.glob("*.log"))
                    raise AssertionError(f"a Spark daemon exited ({process.args}); see {logs}")
            try:
                if ready(self.status()):
                    return
            except (urllib.error.URLError, ConnectionError, json.JSONDecodeError, TimeoutError):
                pass  # the web UI is not up yet
            time.sleep(0.2)
        raise AssertionError(f"timed out after {START_TIMEOUT:g} s waiting for {what}; logs in {self.folder}")

    def stop(self) -> None:
        for process in reversed(self.processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)


@contextmanager
def standalone_cluster(folder: Path, workers: int = 2, *, worker_prefix: Sequence[str] = (),
                       memory: str = "1g", secret: str | None = None) -> Iterator[StandaloneCluster]:
    """A master and `workers` one-core workers on 127.0.0.1, stopped at the end of the block."""
    folder.mkdir(parents=True, exist_ok=True)
    cluster = StandaloneCluster(folder, secret)
    try:
        cluster.start_master()
        for index in range(workers):
            cluster.add_worker(f"worker-{index}", memory=memory, prefix=worker_prefix)
        yield cluster
    finally:
        cluster.stop()
