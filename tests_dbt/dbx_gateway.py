"""A real gateway for dbt-databricks: `sluicegate serve` from .venv (the gateway's own environment) on 127.0.0.1 with
port 0 for Thrift and for HTTP, a fresh warehouse, and an access token made with `sluicegate token create`.

Shared by the project's own dbt-databricks tests (tests_dbt/databricks/conftest.py) and the plugin that runs
dbt-databricks' own functional suite (sluicegate_dbx_suite_plugin.py). Standard library only: both run in
environments of their own (.venv-dbx, .venv-dbx-suite), not the gateway's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# tests/child_processes.py, shared with the gateway's tests: appended, so that nothing installed here is shadowed.
sys.path.append(str(REPO / "tests"))
from child_processes import ready_match, stop

# The environment variable that hands a running gateway (Gateway.to_json) to the pytest processes of a run.
SHARED_GATEWAY = "SLUICEGATE_DBX_SUITE_GATEWAY"


@dataclass(frozen=True)
class Gateway:
    http_url: str       # http://127.0.0.1:PORT
    token: str          # a Bearer token of the user it was started for
    warehouse: Path     # files landed under warehouse/landing are readable by read_files
    log: Path           # the gateway's stderr

    def to_json(self) -> str:
        return json.dumps({"http_url": self.http_url, "token": self.token, "warehouse": str(self.warehouse),
                           "log": str(self.log)})

    @classmethod
    def from_json(cls, text: str) -> Gateway:
        fields = json.loads(text)
        return cls(fields["http_url"], fields["token"], Path(fields["warehouse"]), Path(fields["log"]))


def sluicegate() -> str:
    """The `sluicegate` command: $SLUICEGATE, else the repository's .venv."""
    return os.environ.get("SLUICEGATE", str(REPO / ".venv" / "bin" / "sluicegate"))


@contextmanager
def running_gateway(root: Path, user: str, ready_within: float = 600.0) -> Iterator[Gateway]:
    """A gateway whose warehouse, token file, configuration and log live in `root` (an empty folder), with a token
    for `user`, ready within `ready_within` seconds (Spark's start on a loaded two-core machine can take minutes);
    stopped (SIGTERM, then SIGKILL after 60 s) when the block ends."""
    warehouse, tokens, conf = root / "wh", root / "secrets" / "tokens", root / "sluicegate.toml"
    tokens.parent.mkdir(mode=0o700)
    conf.write_text(f'[server]\nport = 0\nhttp_port = 0\n[auth]\ntoken_file = "{tokens}"\n'
                    f'[warehouse]\npath = "{warehouse}"\n')
    created = subprocess.run([sluicegate(), "token", "create", user, "--conf", str(conf), "--comment", "dbt tests"],
                             capture_output=True, text=True, check=True)
    token = created.stdout.split()[0]
    log = root / "gateway.log"
    with open(log, "w") as errors:
        process = subprocess.Popen([sluicegate(), "serve", "--conf", str(conf)], stdout=subprocess.PIPE,
                                   stderr=errors, text=True)
        try:
            http_url = ready_match(process, r"Thrift over HTTP at (http://127\.0\.0\.1:\d+)/", log,
                                   ready_within).group(1)
            yield Gateway(http_url, token, warehouse, log)
        finally:
            stop(process, 60)
