"""The result cache's store (engine/result_cache.py), without Spark: an answer is kept only once read to its end,
within its size bound; the least recently used answers are evicted first; a kept answer is served as the very
batches its first reader got, marked as from the cache."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa

from sluicegate.engine.result_cache import ResultCache, ResultCacheSettings, recording, served
from sluicegate.engine.results import TEXT, ResultColumn, WireTypes
from sluicegate.engine.sql import ListBatchSource, StatementResult

COLUMNS = [ResultColumn("n", "bigint")]


def _batches(rows: int, per_batch: int = 100) -> list[pa.RecordBatch]:
    return [pa.record_batch([pa.array(range(start, min(start + per_batch, rows)), pa.int64())], names=["_c0"])
            for start in range(0, rows, per_batch)]


def _result(batches: list[pa.RecordBatch], opened: list[int]) -> StatementResult:
    """A result whose every opening is counted (what Spark would compute again)."""

    def open_batches() -> ListBatchSource:
        opened.append(1)
        return ListBatchSource(batches)

    def open_typed(types: WireTypes) -> tuple[pa.Schema, ListBatchSource]:
        return batches[0].schema, open_batches()

    return StatementResult(list(COLUMNS), open_batches, open_typed)


def _read(result: StatementResult, types: WireTypes = TEXT, stop_after: int | None = None) -> list[int]:
    _, source = result.open(types)
    values: list[int] = []
    batches: Iterator[pa.RecordBatch] = iter(source)
    for i, batch in enumerate(batches):
        if stop_after is not None and i == stop_after:
            break
        values.extend(batch.column(0).to_pylist())
    source.close()
    return values


def _cache(max_bytes: int = 1 << 20, max_entry_bytes: int = 1 << 20) -> ResultCache:
    return ResultCache(ResultCacheSettings(max_bytes=max_bytes, max_entry_bytes=max_entry_bytes))


def test_an_answer_read_whole_is_kept_and_served_as_the_same_batches() -> None:
    cache, opened = _cache(), []
    batches = _batches(250)
    result = recording(_result(batches, opened), cache, lambda types: ("q", types))
    assert _read(result) == list(range(250))
    entry = cache.get(("q", TEXT))
    assert entry is not None and list(entry.batches) == batches
    assert entry.nbytes == sum(batch.nbytes for batch in batches)
    again = served(entry)
    assert again.from_result_cache and not result.from_result_cache
    assert _read(again) == list(range(250)) and _read(again) == list(range(250))   # re-readable (FETCH_FIRST)
    assert len(opened) == 1
    assert cache.get(("q", WireTypes(decimal=True))) is None   # other wire types: another answer


def test_a_reader_that_stops_early_keeps_nothing() -> None:
    cache, opened = _cache(), []
    result = recording(_result(_batches(300), opened), cache, lambda types: ("q", types))
    assert _read(result, stop_after=1) == list(range(100))
    assert len(cache) == 0 and cache.get(("q", TEXT)) is None


def test_an_answer_over_the_entry_bound_is_served_but_not_kept() -> None:
    batches = _batches(1000)
    size = sum(batch.nbytes for batch in batches)
    cache, opened = _cache(max_entry_bytes=size - 1), []
    result = recording(_result(batches, opened), cache, lambda types: ("big", types))
    assert _read(result) == list(range(1000))
    assert len(cache) == 0 and cache.nbytes == 0 and cache.counts.too_large == 1


def test_the_memory_bound_evicts_the_least_recently_used() -> None:
    one = sum(batch.nbytes for batch in _batches(100))
    cache = _cache(max_bytes=2 * one + one // 2, max_entry_bytes=one)
    for name in ("a", "b"):
        _read(recording(_result(_batches(100), []), cache, lambda types, name=name: (name, types)))
    assert cache.get(("a", TEXT)) is not None        # a is now the most recently used
    _read(recording(_result(_batches(100), []), cache, lambda types: ("c", types)))
    assert cache.get(("b", TEXT)) is None             # b went first
    assert cache.get(("a", TEXT)) is not None and cache.get(("c", TEXT)) is not None
    assert cache.nbytes == 2 * one <= cache.settings.max_bytes and cache.counts.evicted == 1


def test_native_types_are_recorded_under_their_own_key() -> None:
    cache = _cache()
    native = WireTypes(timestamp=True)
    result = recording(_result(_batches(10), []), cache, lambda types: ("q", types))
    assert _read(result, native) == list(range(10))
    assert cache.get(("q", native)) is not None and cache.get(("q", TEXT)) is None
