"""The background worker of REFRESH MATERIALIZED VIEW ... ASYNC, without a JVM: one worker per view, requests that
come while it runs merged into one more pass (FULL kept), other views independent, a failing pass not the end of the
worker, and `starting` run before the worker so nothing it records lands after the outcome."""

from __future__ import annotations

import threading

from sluicegate.executor.materialized_views.background import BackgroundRefreshes


class Gate:
    """A pass that records its FULL flag and waits until the test lets it end."""

    def __init__(self) -> None:
        self.calls: list[bool] = []
        self.started = threading.Semaphore(0)
        self.release = threading.Semaphore(0)

    def __call__(self, full: bool) -> None:
        self.calls.append(full)
        self.started.release()
        assert self.release.acquire(timeout=30), "the test never let the pass end"


def test_requests_during_a_pass_merge_into_one_more_pass_keeping_full() -> None:
    refreshes, gate = BackgroundRefreshes(), Gate()
    key = ("db", "mv")
    assert refreshes.submit(key, gate, False) is True
    assert gate.started.acquire(timeout=30)
    assert refreshes.submit(key, gate, True) is False        # merged: runs after the current pass
    assert refreshes.submit(key, gate, False) is False       # merged again, FULL kept
    assert refreshes.running(key)
    gate.release.release()
    assert gate.started.acquire(timeout=30)
    gate.release.release()
    assert refreshes.wait(30)
    assert gate.calls == [False, True] and not refreshes.running(key)
    assert refreshes.submit(key, gate, False) is True        # a new worker once the last one ended
    gate.release.release()
    assert refreshes.wait(30) and gate.calls == [False, True, False]


def test_views_are_independent_and_a_failing_pass_does_not_stop_the_worker() -> None:
    refreshes, gate = BackgroundRefreshes(), Gate()
    failures: list[bool] = []

    def failing(full: bool) -> None:
        failures.append(full)
        if len(failures) == 1:
            gate.started.acquire(timeout=30)    # the other view's pass is running at the same time
            refreshes.submit(("db", "bad"), failing, False)
            raise RuntimeError("the refresh failed (recorded in the view's row by mv_refresh)")

    assert refreshes.submit(("db", "good"), gate, False)
    assert refreshes.submit(("db", "bad"), failing, True)
    gate.release.release()
    assert refreshes.wait(30)
    assert failures == [True, False] and gate.calls == [False]


def test_starting_runs_before_the_worker_and_only_for_a_new_one() -> None:
    refreshes, gate = BackgroundRefreshes(), Gate()
    order: list[str] = []
    started = refreshes.submit(("db", "mv"), lambda full: (order.append("pass"), gate(full)), False,
                               starting=lambda: order.append("starting"))
    assert started and gate.started.acquire(timeout=30)
    refreshes.submit(("db", "mv"), gate, False, starting=lambda: order.append("again"))
    gate.release.release()
    gate.release.release()
    assert refreshes.wait(30)
    assert order == ["starting", "pass", "pass"]           # the merged pass runs the first request's function


def test_wait_gives_up_after_its_timeout() -> None:
    refreshes, gate = BackgroundRefreshes(), Gate()
    refreshes.submit(("db", "slow"), gate, False)
    assert refreshes.wait(0.05) is False
    gate.release.release()
    assert refreshes.wait(30) is True
