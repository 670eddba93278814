"""The gateway's own temporary views (a table's snapshot per query, a bound view, a CDC batch) are registered by running
Spark's CreateViewCommand directly (engine/TemporaryViews.java), not through a DataFrame's execution: the view must be
what `createOrReplaceTempView` makes of it, in the frame's session only, replaced in place, and dropped cleanly."""

from __future__ import annotations

from typing import Any

import pytest

from sluicegate.engine.sessions import drop_temporary_view, new_user_session, replace_temporary_view


@pytest.fixture()
def session(spark: Any) -> Any:
    return new_user_session(spark)


def test_a_view_reads_its_frame_in_its_own_session_only(spark: Any, session: Any) -> None:
    replace_temporary_view(session.range(5).selectExpr("id", "id * 2 AS doubled"), "__sg_test_view")
    assert session.sql("SELECT sum(doubled), count(*) FROM __sg_test_view").collect()[0] == (20, 5)
    assert session.catalog.tableExists("__sg_test_view")
    assert not spark.catalog.tableExists("__sg_test_view")   # another session (the gateway's) does not see it
    other = new_user_session(spark)
    assert not other.catalog.tableExists("__sg_test_view")


def test_a_view_is_replaced_in_place_and_dropped(session: Any) -> None:
    replace_temporary_view(session.range(3), "__sg_test_replaced")
    replace_temporary_view(session.range(10, 12).selectExpr("id AS other"), "__sg_test_replaced")
    assert session.sql("SELECT * FROM __sg_test_replaced").columns == ["other"]
    assert [row[0] for row in session.sql("SELECT other FROM __sg_test_replaced").collect()] == [10, 11]
    drop_temporary_view(session, "__sg_test_replaced")
    assert not session.catalog.tableExists("__sg_test_replaced")


def test_the_view_keeps_the_frame_s_analysed_plan(session: Any) -> None:
    """Like `createOrReplaceTempView`, the view stores the analysed plan: a view over a view is unaffected by the
    inner one being replaced afterwards."""
    replace_temporary_view(session.range(4), "__sg_test_inner")
    replace_temporary_view(session.sql("SELECT id + 100 AS shifted FROM __sg_test_inner"), "__sg_test_outer")
    replace_temporary_view(session.range(1), "__sg_test_inner")
    assert session.sql("SELECT count(*) FROM __sg_test_outer").collect()[0][0] == 4


def test_the_session_s_case_sensitivity_holds(session: Any) -> None:
    session.conf.set("spark.sql.caseSensitive", "true")
    try:
        replace_temporary_view(session.range(2), "__sg_Test_Case")
        assert session.catalog.tableExists("__sg_Test_Case")
        assert not session.catalog.tableExists("__sg_test_case")
    finally:
        session.conf.set("spark.sql.caseSensitive", "false")
