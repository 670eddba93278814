"""The input of the crash and restart tests: numbered files of keyed rows (ids tell the file they came from), and
what a `count(*), sum(id) GROUP BY k` table holds after some of them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any


def keyed_rows(index: int, per_file: int, keys: Sequence[str], stride: int = 1000) -> list[dict[str, Any]]:
    """File `index`'s rows: ids index * stride + 0.., keys taken in turn, starting one further for each file."""
    return [{"id": index * stride + row, "k": keys[(index + row) % len(keys)]} for row in range(per_file)]


def per_key(rows: Iterable[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """k -> (count, sum of id) over `rows`."""
    counts: Counter[str] = Counter()
    sums: Counter[str] = Counter()
    for row in rows:
        counts[row["k"]] += 1
        sums[row["k"]] += row["id"]
    return {k: (counts[k], sums[k]) for k in counts}
