"""psql's aligned table format, written batch by batch so that a large result is never held whole.

Each batch is aligned on its own, widening the columns when a batch needs it; the header and separator come with
the first batch. Numbers are right-aligned, everything else left-aligned, NULL is shown as `NULL`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

from wcwidth import wcswidth

from sluicegate.gateway.shell.client import Column

_ESCAPES = str.maketrans({"\n": "\\n", "\r": "\\r", "\t": "\\t"})


def format_value(value: Any) -> str:
    """One cell as text: NULL, true/false, Spark's spelling of special floats, hex for binary."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return repr(value)
    if isinstance(value, bytes):
        return "\\x" + value.hex()
    return str(value).translate(_ESCAPES)


def display_width(text: str) -> int:
    """Terminal cells the text takes (East Asian wide characters take two)."""
    width = wcswidth(text)
    return width if width >= 0 else len(text)


def _pad(text: str, width: int, right: bool) -> str:
    fill = " " * (width - display_width(text))
    return fill + text if right else text + fill


def _center(text: str, width: int) -> str:
    spare = width - display_width(text)
    return " " * (spare // 2) + text + " " * (spare - spare // 2)


def footer(count: int) -> str:
    return f"({count} row)" if count == 1 else f"({count} rows)"


class TableWriter:
    """Writes one result set: `write_batch` as rows arrive, then `finish` for the `(N rows)` footer."""

    def __init__(self, out: TextIO, columns: Sequence[Column]) -> None:
        self._out = out
        self._columns = list(columns)
        self._widths = [display_width(column.name) for column in self._columns]
        self._header_written = False
        self.rows = 0

    def write_batch(self, rows: Iterable[Sequence[Any]]) -> None:
        cells = [[format_value(value) for value in row] for row in rows]
        for row in cells:
            for index, text in enumerate(row):
                width = display_width(text)
                if width > self._widths[index]:
                    self._widths[index] = width
        if not self._header_written:
            self._write_header()
        lines = [self._line(_pad(text, self._widths[i], self._columns[i].numeric) for i, text in enumerate(row))
                 for row in cells]
        if lines:
            self._out.write("\n".join(lines) + "\n")
        self._out.flush()
        self.rows += len(cells)

    def finish(self) -> int:
        if not self._header_written:
            self._write_header()
        self._out.write(footer(self.rows) + "\n\n")
        self._out.flush()
        return self.rows

    def _write_header(self) -> None:
        header = self._line(_center(column.name, self._widths[i]) for i, column in enumerate(self._columns))
        separator = "+".join("-" * (width + 2) for width in self._widths)
        self._out.write(header + "\n" + separator + "\n")
        self._header_written = True

    @staticmethod
    def _line(cells: Iterable[str]) -> str:
        return (" " + " | ".join(cells)).rstrip()


def write_table(out: TextIO, columns: Sequence[Column], batches: Iterable[Sequence[Sequence[Any]]]) -> int:
    """Write a whole result set; returns the number of rows."""
    writer = TableWriter(out, columns)
    for batch in batches:
        writer.write_batch(batch)
    return writer.finish()
