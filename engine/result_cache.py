"""The exact result cache's store: whole query results as the Arrow batches a client was sent, kept in memory, bounded.

What may be kept, and under which key, is the executor's decision (executor/result_cache.py: a query whose inputs are
all Delta tables at pinned versions, read by one user with the same session settings); this module only holds the
batches. An answer is recorded while its first reader fetches it (no second pass over Spark's result, no copy: the
batches are the ones the reader got) and kept only once that reader has read it to its end, so a result never
enters half. Entries are evicted least recently used first when `max_bytes` would be passed; a result larger than
`max_entry_bytes` is not kept (while it is read, the recording holds at most that much beyond the result's own bound,
then lets go of it). Memory only: there is no disk tier.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import pyarrow as pa

from sluicegate.engine.results import TEXT, ResultColumn, WireTypes, arrow_schema
from sluicegate.engine.sql import BatchSource, ListBatchSource, StatementResult

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


@dataclass(frozen=True)
class ResultCacheSettings:
    """Conf `[result_cache]`."""

    enabled: bool = True
    max_bytes: int = 256 * 1024 * 1024         # Arrow bytes of every kept result together
    max_entry_bytes: int = 32 * 1024 * 1024    # a larger result is served as usual and not kept


@dataclass(frozen=True)
class CachedResult:
    """One answer: its columns, the Arrow schema and batches its reader got, and their size."""

    columns: tuple[ResultColumn, ...]
    schema: pa.Schema
    batches: tuple[pa.RecordBatch, ...]
    nbytes: int


@dataclass
class CacheCounts:
    hits: int = 0
    misses: int = 0
    stored: int = 0
    evicted: int = 0
    too_large: int = 0


@dataclass
class ResultCache:
    """Kept answers by key (the key knows its wire types: a client reading native Arrow types gets other batches)."""

    settings: ResultCacheSettings
    counts: CacheCounts = field(default_factory=CacheCounts)
    _entries: OrderedDict[Hashable, CachedResult] = field(default_factory=OrderedDict)
    _bytes: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def nbytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable) -> CachedResult | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                self.counts.misses += 1
                return None
            self._entries.move_to_end(key)
            self.counts.hits += 1
            return entry

    def put(self, key: Hashable, entry: CachedResult) -> bool:
        """Keep `entry` (evicting the least recently used to make room); False when it is larger than an entry may
        be."""
        if entry.nbytes > min(self.settings.max_entry_bytes, self.settings.max_bytes):
            self.note_too_large()
            return False
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old.nbytes
            while self._entries and self._bytes + entry.nbytes > self.settings.max_bytes:
                _, evicted = self._entries.popitem(last=False)
                self._bytes -= evicted.nbytes
                self.counts.evicted += 1
            self._entries[key] = entry
            self._bytes += entry.nbytes
            self.counts.stored += 1
        return True

    def note_too_large(self) -> None:
        with self._lock:
            self.counts.too_large += 1

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0


def deterministic_plan(df: DataFrame) -> bool:
    """Whether Spark itself holds `df`'s analysed plan deterministic (every node and expression, views expanded): a
    second opinion on the query text's allow-list (dialect/determinism.py), asked before an answer is recorded."""
    return bool(df._jdf.queryExecution().analyzed().deterministic())


def served(entry: CachedResult) -> StatementResult:
    """A statement's result answered from `entry`: the same columns, schema and batches, no Spark at all."""

    def open_kept() -> BatchSource:
        return ListBatchSource(entry.batches)

    return StatementResult(list(entry.columns), open_kept, lambda _types: (entry.schema, open_kept()),
                           from_result_cache=True)


def recording(result: StatementResult, cache: ResultCache, key_of: Callable[[WireTypes], Hashable]) -> StatementResult:
    """`result`, whose batches are kept in `cache` under `key_of(types)` once a reader has read them all (each
    opening records afresh: a reader that stops early keeps nothing)."""
    limit = min(cache.settings.max_entry_bytes, cache.settings.max_bytes)
    columns = tuple(result.columns)

    def keep(types: WireTypes, schema: pa.Schema, source: BatchSource) -> BatchSource:
        def store(batches: list[pa.RecordBatch], nbytes: int) -> None:
            cache.put(key_of(types), CachedResult(columns, schema, tuple(batches), nbytes))

        return _RecordingSource(source, limit, store, cache.note_too_large)

    def open_text() -> BatchSource:
        return keep(TEXT, arrow_schema(result.columns), result.open_batches())

    open_typed = result.open_typed

    def open_native(types: WireTypes) -> tuple[pa.Schema, BatchSource]:
        assert open_typed is not None
        schema, source = open_typed(types)
        return schema, keep(types, schema, source)

    return replace(result, open_batches=open_text, open_typed=open_native if open_typed is not None else None)


class _RecordingSource:
    """Passes the batches on as they come, keeping them until `limit` bytes; `store` gets them if the reader reached
    the end within the limit."""

    def __init__(self, inner: BatchSource, limit: int, store: Callable[[list[pa.RecordBatch], int], None],
                 too_large: Callable[[], None]) -> None:
        self._inner = inner
        self._limit = limit
        self._store = store
        self._too_large = too_large

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        kept: list[pa.RecordBatch] | None = []
        nbytes = 0
        for batch in self._inner:
            if kept is not None:
                nbytes += batch.nbytes
                if nbytes > self._limit:
                    kept = None   # too large to keep: let go of what was kept so far
                    self._too_large()
                else:
                    kept.append(batch)
            yield batch
        if kept is not None:
            self._store(kept, nbytes)

    def close(self) -> None:
        self._inner.close()
