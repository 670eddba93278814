"""Streaming-table statements through a real PyHive client: EXPLAIN shows the checked plan, and analysis errors keep
their class, SQLSTATE and position."""

from __future__ import annotations

import pytest
from pyhive import exc as hive_exc

CLICKS = ("CREATE STREAMING TABLE clicks_per_country AS SELECT country, count(*) AS n "
          "FROM STREAM read_files('/tmp/clicks', format => 'json', schema => 'country STRING, ts TIMESTAMP') "
          "GROUP BY country")


def test_explain_shows_sources_mode_and_keys(connect):
    cursor = connect().cursor()
    cursor.execute("EXPLAIN " + CLICKS)
    assert [d[0] for d in cursor.description] == ["plan"]
    text = "\n".join(row[0] for row in cursor.fetchall())
    assert "update" in text and "country" in text and "/tmp/clicks" in text


def test_analysis_error_has_class_sqlstate_and_position(connect):
    cursor = connect().cursor()
    bad = ("EXPLAIN CREATE STREAMING TABLE t AS SELECT country, count(*) AS n FROM STREAM read_files('/tmp/c', "
           "format => 'json', schema => 'country STRING') GROUP BY country ORDER BY n LIMIT 3")
    with pytest.raises(hive_exc.OperationalError) as caught:
        cursor.execute(bad)
    status = caught.value.args[0].status
    assert status.sqlState == "0A000", status
    assert "[STREAMING_UNSUPPORTED_OPERATION.SORT]" in status.errorMessage
    # The position is the user's text: ORDER, counted with the EXPLAIN in front.
    assert f"at line 1, column {bad.index('ORDER') + 1}" in status.errorMessage, status.errorMessage
    assert "complete" in status.errorMessage  # the hint says what to write instead
