"""`--log-level` before or after the subcommand: `./run serve --log-level DEBUG` puts it after, and was refused
(`unrecognized arguments`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_log_level_is_accepted_after_the_subcommand(tmp_path: Path) -> None:
    """`./run serve --log-level DEBUG` puts the option after the subcommand: it was `unrecognized arguments`."""
    tokens = tmp_path / "tokens"
    for argv in (["token", "list", "--file", str(tokens), "--log-level", "DEBUG"],
                 ["--log-level", "debug", "token", "list", "--file", str(tokens)]):
        done = subprocess.run([sys.executable, "-m", "sluicegate.gateway", *argv], capture_output=True, text=True,
                              timeout=120, check=False)
        assert done.returncode == 0, done.stderr
    wrong = subprocess.run([sys.executable, "-m", "sluicegate.gateway", "token", "list", "--log-level", "LOUD"],
                           capture_output=True, text=True, timeout=120, check=False)
    assert wrong.returncode == 2 and "'LOUD' is not one of DEBUG, INFO, WARNING, ERROR" in wrong.stderr


def test_the_parser_takes_the_level_in_either_place() -> None:
    from sluicegate.gateway.cli import build_parser

    parse = build_parser().parse_args
    assert parse(["serve", "--log-level", "debug"]).log_level == "DEBUG"
    assert parse(["--log-level", "WARNING", "serve"]).log_level == "WARNING"
    assert parse(["--log-level", "WARNING", "shell", "--log-level", "ERROR"]).log_level == "ERROR"
    assert parse(["passwd", "me"]).log_level == "INFO"



def test_sqlglot_fallback_warnings_are_kept_for_debug() -> None:
    """`SET spark.sql.shuffle.partitions` made sqlglot warn on every statement (newcomer report, section 2), though
    the gateway handles it: an operator sees that only at DEBUG."""
    script = ("import sys\nfrom sluicegate.gateway.cli import configure_logging\n"
              "from sluicegate.dialect.classify import classify\n"
              "configure_logging(sys.argv[1])\nclassify('SET spark.sql.shuffle.partitions')\n")
    said = {level: subprocess.run([sys.executable, "-c", script, level], capture_output=True, text=True, timeout=120,
                                  check=True).stderr for level in ("INFO", "DEBUG")}
    assert "Falling back to parsing as a 'Command'" not in said["INFO"], said["INFO"]
    assert "Falling back to parsing as a 'Command'" in said["DEBUG"]
