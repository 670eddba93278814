"""The session settings allow-list is of names, not prefixes (policy/settings.py): the gateway's own
`spark.sluicegate.dataSkipping.enabled` may be set by any session (it only changes how many files a query opens, never
its result), as `spark.sluicegate.streams.createWaitsForFirstUpdate` (whether the session's CREATE STREAMING TABLE
waits for the first update), and no other key under the same prefix comes with them."""

from __future__ import annotations

import pytest

from sluicegate.policy.errors import SettingNotAllowedError
from sluicegate.policy.settings import check_setting


def test_data_skipping_may_be_turned_off_by_a_session() -> None:
    check_setting("spark.sluicegate.dataSkipping.enabled")
    check_setting(" SPARK.SLUICEGATE.DATASKIPPING.ENABLED ")


def test_a_session_may_choose_whether_create_waits_for_the_first_update() -> None:
    check_setting("spark.sluicegate.streams.createWaitsForFirstUpdate")


@pytest.mark.parametrize("key", ["spark.sluicegate.", "spark.sluicegate.dataSkipping", "spark.sluicegate.anything",
                                 "spark.sluicegate.dataSkipping.enabled.x", "spark.sluicegate.streams.",
                                 "spark.sluicegate.streams.createWaitsForFirstUpdate.x"])
def test_nothing_else_under_the_prefix(key: str) -> None:
    with pytest.raises(SettingNotAllowedError) as raised:
        check_setting(key)
    assert raised.value.sqlstate and raised.value.hint
