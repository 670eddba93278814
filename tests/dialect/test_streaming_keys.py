"""The keys an update-mode aggregation merges on are found as users write them: a fixed-size window by its start or
end, a key under an alias or a cast that keeps it unique. What truly lacks a key is still refused, with a hint.
Names are the ones Spark 4.1 gives the result columns (checked against Spark: `window(...).start` unaliased is
`window.start`, `window.start` is `start`, `CAST(k AS STRING)` is `k`)."""

from __future__ import annotations

import pytest

from sluicegate.dialect.streaming import errors
from sluicegate.dialect.streaming.analyze import analyze

HEAD = "CREATE STREAMING TABLE t AS "
SOURCE = "FROM STREAM read_files('/in', format => 'json', schema => 'k INT, ts TIMESTAMP, d DOUBLE') AS e "
NATURAL = ("CREATE STREAMING TABLE t AS SELECT c.campaign_id, window(e.event_time, '10 seconds').start AS w, "
           "count(*) AS n FROM STREAM(events) AS e JOIN campaigns AS c ON e.ad_id = c.ad_id "
           "GROUP BY c.campaign_id, window(e.event_time, '10 seconds')")

KEYED = [
    # id, sql, the plan's keys
    ("the-issue's-query", NATURAL, ("campaign_id", "w")),
    ("window-end", HEAD + "SELECT k, window(ts, '1 minute').end AS until, count(*) AS n " + SOURCE
     + "GROUP BY k, window(ts, '1 minute')", ("k", "until")),
    ("unaliased-start", HEAD + "SELECT k, window(ts, '1 minute').start, count(*) AS n " + SOURCE
     + "GROUP BY k, window(ts, '1 minute')", ("k", "window.start")),
    ("spark's-window-column", HEAD + "SELECT k, window.start, count(*) AS n " + SOURCE
     + "GROUP BY k, window(ts, '1 minute')", ("k", "start")),
    ("sliding-window-start", HEAD + "SELECT k, window(ts, '1 minute', '10 seconds').start AS s, count(*) AS n "
     + SOURCE + "GROUP BY k, window(ts, '1 minute', '10 seconds')", ("k", "s")),
    ("whole-window-wins", HEAD + "SELECT window(ts, '1 minute').start AS s, window(ts, '1 minute') AS w, "
     "count(*) AS n " + SOURCE + "GROUP BY window(ts, '1 minute')", ("w",)),
    ("cast-to-string", HEAD + "SELECT CAST(k AS STRING) AS k2, count(*) AS n " + SOURCE + "GROUP BY k", ("k2",)),
    ("string-function", HEAD + "SELECT string(e.k) AS k2, count(*) AS n " + SOURCE + "GROUP BY k", ("k2",)),
    ("unaliased-cast", HEAD + "SELECT CAST(k AS STRING), count(*) AS n " + SOURCE + "GROUP BY k", ("k",)),
    ("alias", HEAD + "SELECT e.k AS key, count(*) AS n " + SOURCE + "GROUP BY e.k", ("key",)),
    ("qualified-and-plain", HEAD + "SELECT e.k, count(*) AS n " + SOURCE + "GROUP BY k", ("k",)),
    ("session-window-whole", HEAD + "SELECT k, session_window(ts, '5 minutes') AS s, count(*) AS n " + SOURCE
     + "GROUP BY k, session_window(ts, '5 minutes')", ("k", "s")),
]


@pytest.mark.parametrize(("sql", "keys"), [(sql, keys) for _, sql, keys in KEYED],
                         ids=[case for case, _, _ in KEYED])
def test_keys_as_users_write_them(sql: str, keys: tuple[str, ...]) -> None:
    plan = analyze(sql)
    assert plan.output_mode == "update"
    assert plan.keys == keys


UNKEYED = [
    # id, sql, the key reported missing, a word of its hint
    ("collapsing-cast", HEAD + "SELECT CAST(d AS INT) AS d2, count(*) AS n " + SOURCE + "GROUP BY d", "d",
     "CAST(d AS STRING)"),
    ("cast-to-int-of-a-string", HEAD + "SELECT CAST(k AS INT) AS k2, count(*) AS n " + SOURCE + "GROUP BY k", "k",
     "AS"),
    ("other-window's-start", HEAD + "SELECT window(ts, '2 minutes').start AS s, count(*) AS n " + SOURCE
     + "GROUP BY window(ts, '1 minute')", "window(ts, '1 minute')", ".start"),
    ("session-start", HEAD + "SELECT k, session_window(ts, '5 minutes').start AS s, count(*) AS n " + SOURCE
     + "GROUP BY k, session_window(ts, '5 minutes')", "session_window(ts, '5 minutes')", "whole column"),
    ("window.start-of-two-windows", HEAD + "SELECT window.start, count(*) AS n " + SOURCE
     + "GROUP BY window(ts, '1 minute'), window(ts, '2 minutes')", "window(ts, '1 minute')", ".start"),
    ("other-table's-column", HEAD + "SELECT x.k, count(*) AS n " + SOURCE + "JOIN x ON e.k = x.k GROUP BY e.k",
     "e.k", "SELECT list"),
    ("a-window-bound-that-is-not-one", HEAD + "SELECT window(ts, '1 minute').duration AS s, count(*) AS n "
     + SOURCE + "GROUP BY window(ts, '1 minute')", "window(ts, '1 minute')", ".start"),
    ("key-absent", HEAD + "SELECT count(*) AS n " + SOURCE + "GROUP BY k", "k", "SELECT list"),
]


@pytest.mark.parametrize(("sql", "missing", "hint"), [(sql, missing, hint) for _, sql, missing, hint in UNKEYED],
                         ids=[case for case, *_ in UNKEYED])
def test_what_truly_lacks_a_key_is_refused(sql: str, missing: str, hint: str) -> None:
    with pytest.raises(errors.GroupKeyNotInOutputError) as raised:
        analyze(sql)
    error = raised.value
    assert error.error_class == "STREAMING_GROUP_KEY_NOT_IN_OUTPUT" and error.sqlstate == "42803"
    assert f"the group key {missing} is not in the result".lower() in error.message.lower()
    assert hint.lower() in (error.hint or "").lower()
    assert error.line == 1 and error.column == sql.rindex(missing) + 1


def test_append_mode_needs_no_key() -> None:
    sql = ("CREATE STREAMING TABLE t TBLPROPERTIES ('sluicegate.output_mode' = 'complete') AS "
           "SELECT count(*) AS n " + SOURCE + "GROUP BY k")
    assert analyze(sql).output_mode == "complete"
