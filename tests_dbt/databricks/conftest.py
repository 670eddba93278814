"""A real gateway for dbt-databricks: `sluicegate serve` from .venv (the gateway's own environment) on 127.0.0.1 with
port 0 for Thrift and for HTTP, a fresh warehouse, and an access token made with `sluicegate token create`.
Run by tests_dbt/run_databricks in .venv-dbx (dbt-databricks and its pinned databricks-sql-connector)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# tests/child_processes.py, shared with the gateway's tests: appended, so that nothing installed here is shadowed.
sys.path.append(str(REPO / "tests"))
from child_processes import ready_match, stop

USER = "dbt_dbx"


@dataclass(frozen=True)
class Gateway:
    http_url: str       # http://127.0.0.1:PORT
    token: str          # a Bearer token of USER
    warehouse: Path     # files landed under warehouse/landing are readable by read_files


def _sluicegate() -> str:
    return os.environ.get("SLUICEGATE", str(REPO / ".venv" / "bin" / "sluicegate"))


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
            http_url = ready_match(process, r"Thrift over HTTP at (http://127\.0\.0\.1:\d+)/", log).group(1)
            yield Gateway(http_url, token, warehouse)
        finally:
            stop(process, 60)
