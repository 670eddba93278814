"""The exact result cache never answers past the policy (through PyHive on a real gateway): a user without SELECT is
refused though someone's answer to the same text is kept, users never share an answer (each gets their own, even
with equal rights), and a revoked grant refuses an answer kept before the revoke."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pyhive import hive
from pyhive_helpers import error_status
from result_cache_helpers import Names, cached_gateway, from_cache, jobs, run

from sluicegate.gateway.app import RunningGateway

NAMES = Names()
DB, (ALICE, BOB, CAROL), COUNT, VIEW = NAMES.db, NAMES.users, NAMES.count, NAMES.view


@pytest.fixture(scope="module")
def cached(start_gateway: Callable[..., RunningGateway]) -> RunningGateway:
    return cached_gateway(start_gateway, NAMES)


def test_a_user_without_select_is_refused_though_an_answer_is_kept(cached: RunningGateway) -> None:
    run(cached, ALICE, COUNT)
    _, kept_id = run(cached, ALICE, COUNT)
    assert from_cache(cached, ALICE, kept_id) == [True]
    hits = cached.service.result_cache.counts.hits if cached.service.result_cache else -1
    cursor = hive.connect(cached.host, cached.port, username=BOB).cursor()
    status = error_status(cursor, COUNT)
    assert status.sqlState == "42501" and "does not have SELECT" in status.errorMessage
    assert cached.service.result_cache is not None and cached.service.result_cache.counts.hits == hits


def test_users_never_share_an_answer_and_a_revoked_grant_refuses_a_kept_one(cached: RunningGateway,
                                                                           spark: Any) -> None:
    expected = [(i, str(i)) for i in range(10)]
    assert run(cached, ALICE, VIEW)[0] == expected
    alice_again, alice_id = run(cached, ALICE, VIEW)
    bob_first, bob_first_id = run(cached, BOB, VIEW)       # rights through the view's grant only: his own answer
    bob_again, bob_again_id = run(cached, BOB, VIEW)
    assert alice_again == bob_first == bob_again == expected
    assert jobs(spark, alice_id) == 0 and jobs(spark, bob_first_id) >= 1 and jobs(spark, bob_again_id) == 0
    carol_first, carol_id = run(cached, CAROL, COUNT)      # carol may read `t`: alice's kept answer is not hers
    assert jobs(spark, carol_id) >= 1 and carol_first == run(cached, ALICE, COUNT)[0]
    cursor = hive.connect(cached.host, cached.port, username=CAROL).cursor()
    assert error_status(cursor, VIEW).sqlState == "42501"  # carol has no SELECT on the view
    run(cached, ALICE, f"REVOKE SELECT ON TABLE {DB}.small FROM `{BOB}`")
    cursor = hive.connect(cached.host, cached.port, username=BOB).cursor()
    assert error_status(cursor, VIEW).sqlState == "42501"
    assert from_cache(cached, BOB, bob_first_id, bob_again_id) == [False, True]
