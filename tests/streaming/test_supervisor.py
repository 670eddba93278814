"""The supervisor with real Spark, through PyHive, on a gateway process of its own (its configuration and its server
log are the test's): a stream that really fails (a cast error under ANSI) is retried `streams.max_attempts` times,
then stays FAILED with one clear error and one warning line per failure in the log, SHOW and DESCRIBE agreeing all
along, while another stream keeps running. Its CREATE, which waits for the first update, fails with that error."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from gateway_process import GatewayProcess
from pyhive_helpers import error_status


def _show(cur: Any, name: str) -> dict[str, Any]:
    cur.execute(f"SHOW STREAMING TABLES LIKE '{name}'")
    columns = [d[0] for d in cur.description]
    rows = [dict(zip(columns, row, strict=True)) for row in cur.fetchall()]
    assert len(rows) == 1, rows
    return rows[0]


def _until_failed(cur: Any, name: str, deadline: float) -> dict[str, Any]:
    """Poll SHOW until the stream is FAILED; once it has failed it must never show RUNNING without its error."""
    seen_failure = False
    while True:
        shown = _show(cur, name)
        seen_failure = seen_failure or bool(shown["failures"])
        if seen_failure:
            assert shown["lastError"], shown
        if shown["status"] == "FAILED":
            return shown
        assert time.monotonic() < deadline, f"the stream did not end FAILED: {shown}"
        time.sleep(0.2)


@pytest.mark.timeout(600)
def test_a_crash_looping_stream_ends_failed_and_the_others_run_on(tmp_path: Path, land: Any) -> None:
    from pyhive import hive

    conf = tmp_path / "sluicegate.toml"
    conf.write_text('[streams]\ntrigger_interval = 0.3\nretry_initial = 0.2\nmax_attempts = 2\ntick_interval = 0.2\n'
                    f'\n[spark]\ndriver_memory = "1g"\n\n[security]\nallowed_paths = ["{tmp_path}"]\n')
    gateway = GatewayProcess(tmp_path / "warehouse", conf, tmp_path / "gateway.log")
    poison, fine = tmp_path / "poison", tmp_path / "fine"
    land(poison, [{"s": "1"}, {"s": "abc"}])
    land(fine, [{"x": 1}])
    gateway.start()
    try:
        connection = hive.connect("127.0.0.1", gateway.port, username="tester")
        cur = connection.cursor()
        cur.execute("CREATE DATABASE loops")
        cur.execute("USE loops")
        cur.execute(f"CREATE STREAMING TABLE bystander AS SELECT x FROM STREAM "
                    f"read_files('{fine}', format => 'json', schema => 'x INT')")
        # CREATE waits for the first update, through its retries: once the stream is FAILED, the CREATE fails with
        # its error (the table stays)
        status = error_status(cur, f"CREATE STREAMING TABLE casts AS SELECT CAST(s AS INT) AS i FROM STREAM "
                                   f"read_files('{poison}', format => 'json', schema => 's STRING')")
        assert status.sqlState == "22018" and "CAST_INVALID_INPUT" in status.errorMessage
        shown = _show(cur, "casts")
        assert shown["status"] == "FAILED" and shown["lastError"] in status.errorMessage
        assert shown["failures"] == 2 and "CAST_INVALID_INPUT" in shown["lastError"]
        cur.execute("DESCRIBE STREAMING TABLE casts")
        info = dict(cur.fetchall())
        assert info["Status"] == "FAILED" and info["Failures in a row"] == "2"
        assert info["Last error"] == shown["lastError"]
        # the others run on: a new file reaches the bystander; the failed stream is not retried meanwhile
        land(fine, [{"x": 2}])
        cur.execute("REFRESH STREAMING TABLE bystander")
        cur.execute("SELECT x FROM bystander")
        assert sorted(row[0] for row in cur.fetchall()) == [1, 2]
        assert (_show(cur, "casts")["status"], _show(cur, "casts")["failures"]) == ("FAILED", 2)
        # REFRESH starts it again with a fresh set of attempts: the same row fails the same way, and says so
        status = error_status(cur, "REFRESH STREAMING TABLE casts")
        assert "STREAM_FAILED_AGAIN" in status.errorMessage and "CAST_INVALID_INPUT" in status.errorMessage
        assert "REFRESH started the stream of `loops`.`casts` again (it was FAILED)" in status.errorMessage
        assert "is not running" not in status.errorMessage
        assert _until_failed(cur, "casts", time.monotonic() + 120)["failures"] == 2
        assert _show(cur, "bystander")["status"] == "RUNNING"
        connection.close()
    finally:
        gateway.stop()
    log = (tmp_path / "gateway.log").read_text(encoding="utf-8", errors="replace").split("received SIGTERM")[0]
    log = log.splitlines()  # (the process group's SIGTERM also ends Spark's JVM under py4j: that noise is not ours)
    failures = [line for line in log if "loops.casts failed" in line]
    assert len(failures) == 4, failures                              # two attempts, twice
    assert all("WARNING" in line for line in failures)
    assert sum("no more retries" in line for line in failures) == 2
    assert not [line for line in log if "Traceback" in line or "\tat org.apache" in line], \
        "the server log holds a trace"
    statements = [line for line in log if "sluicegate.statements" in line]   # the statement log names each one once
    assert len([line for line in statements if "casts" in line]) == 3, statements
    assert [line for line in log if "casts" in line and "loops.casts failed" not in line
            and line not in statements] == []
