"""A real gateway for dbt-databricks: `sluicegate serve` from .venv (the gateway's own environment) on 127.0.0.1 with
port 0 for Thrift and for HTTP, a fresh warehouse, and an access token made with `sluicegate token create`.
Run by tests_dbt/run_databricks in .venv-dbx (dbt-databricks and its pinned databricks-sql-connector)."""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
USER = "dbt_dbx"


@dataclass(frozen=True)
class Gateway:
    http_url: str       # http://127.0.0.1:PORT
    token: str          # a Bearer token of USER
    warehouse: Path     # files landed under warehouse/landing are readable by read_files


def _sluicegate() -> str:
    return os.environ.get("SLUICEGATE", str(REPO / ".venv" / "bin" / "sluicegate"))


def _http_url(gateway: subprocess.Popen[str], log: Path) -> str:
    """The HTTP address from the gateway's second ready line."""
    assert gateway.stdout is not None
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        line = gateway.stdout.readline()
        if not line:
            raise RuntimeError(f"the gateway exited before it was ready; see {log}")
        match = re.search(r"Thrift over HTTP at (http://127\.0\.0\.1:\d+)/", line)
        if match:
            return match.group(1)
    raise RuntimeError(f"the gateway did not serve HTTP within 180 s; see {log}")


@pytest.fixture(scope="session")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    root = tmp_path_factory.mktemp("sluicegate-dbx")
    warehouse, tokens, conf = root / "wh", root / "secrets" / "tokens", root / "sluicegate.toml"
    tokens.parent.mkdir(mode=0o700)
    conf.write_text(f'[server]\nport = 0\nhttp_port = 0\n[auth]\ntoken_file = "{tokens}"\n'
                    f'[warehouse]\npath = "{warehouse}"\n')
    created = subprocess.run([_sluicegate(), "token", "create", USER, "--conf", str(conf), "--comment", "dbt tests"],
                             capture_output=True, text=True, check=True)
    token = created.stdout.split()[0]
    log = root / "gateway.log"
    with open(log, "w") as errors:
        process = subprocess.Popen([_sluicegate(), "serve", "--conf", str(conf)], stdout=subprocess.PIPE,
                                   stderr=errors, text=True)
        try:
            yield Gateway(_http_url(process, log), token, warehouse)
        finally:
            process.terminate()
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
