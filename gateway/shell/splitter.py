"""Split typed or scripted text into statements the way Spark SQL's lexer sees it.

A `;` ends a statement only outside quotes and comments: '...' and "..." with backslash escapes (as Spark SQL's
string literals have), `...` identifiers, `--` line comments and `/* */` bracketed comments (nested, as Spark
allows). A backslash where a statement would begin starts a shell command, up to the end of the line or a `;`.
Text is fed a piece at a time, so the interactive shell can tell a finished statement from one that continues on the
next line.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Literal


class _State(Enum):
    NORMAL = "normal"
    SINGLE = "single quote"
    DOUBLE = "double quote"
    BACKTICK = "backtick"
    LINE_COMMENT = "line comment"
    BLOCK_COMMENT = "block comment"


_QUOTES = {"'": _State.SINGLE, '"': _State.DOUBLE, "`": _State.BACKTICK}
_CLOSERS = {_State.SINGLE: "'", _State.DOUBLE: '"', _State.BACKTICK: "`"}
_PROMPT_MARKS = {_State.SINGLE: "'", _State.DOUBLE: '"', _State.BACKTICK: "`", _State.BLOCK_COMMENT: "*"}


@dataclass(frozen=True)
class Statement:
    """One unit to run: SQL without its `;`, or a backslash command line. `line` is where it starts (1-based)."""

    text: str
    kind: Literal["sql", "command"] = "sql"
    line: int = 1


class Splitter:
    """Incremental statement splitter: `feed` text, get back the statements it completed."""

    def __init__(self) -> None:
        self._buffer = ""
        self._buffer_line = 1  # the line number of the buffer's first character
        self.reset()

    def reset(self) -> None:
        """Forget a half-typed statement (Ctrl-C at the prompt)."""
        self._buffer_line += self._buffer.count("\n")
        self._buffer = ""
        self._pos = 0
        self._state = _State.NORMAL
        self._depth = 0
        self._content_start: int | None = None
        self._content_line = 0

    @property
    def pending(self) -> bool:
        """True when a statement has begun and not yet ended."""
        return self._content_start is not None or self._state is _State.BLOCK_COMMENT

    @property
    def continuation(self) -> str:
        """What the open construct is, for the continuation prompt: `-` plain, a quote, or `*` in a comment."""
        return _PROMPT_MARKS.get(self._state, "-")

    def feed(self, text: str) -> list[Statement]:
        self._buffer += text
        done: list[Statement] = []
        buffer, i = self._buffer, self._pos
        while i < len(buffer):
            char = buffer[i]
            state = self._state
            if state is _State.NORMAL:
                if char == ";":
                    self._emit(done, i, i + 1)
                    buffer, i = self._buffer, 0
                    continue
                if char == "-" and buffer.startswith("--", i):
                    self._state = _State.LINE_COMMENT
                    i += 2
                    continue
                if char == "/" and buffer.startswith("/*", i):
                    self._state, self._depth = _State.BLOCK_COMMENT, 1
                    i += 2
                    continue
                if char == "\\" and self._content_start is None:
                    end = _command_end(buffer, i)
                    if end < 0:
                        break  # the command line is not complete yet
                    self._mark_content(i)
                    self._emit(done, end, end + 1, kind="command")
                    buffer, i = self._buffer, 0
                    continue
                if not char.isspace():
                    self._mark_content(i)
                if char in _QUOTES:
                    self._state = _QUOTES[char]
            elif state is _State.LINE_COMMENT:
                if char == "\n":
                    self._state = _State.NORMAL
            elif state is _State.BLOCK_COMMENT:
                if buffer.startswith("*/", i):
                    self._depth -= 1
                    i += 2
                    if self._depth == 0:
                        self._state = _State.NORMAL
                    continue
                if buffer.startswith("/*", i):
                    self._depth += 1
                    i += 2
                    continue
            else:  # inside a quote
                if char == "\\" and state is not _State.BACKTICK:
                    if i + 1 >= len(buffer):
                        break  # the escaped character has not been fed yet
                    i += 2
                    continue
                if char == _CLOSERS[state]:
                    self._state = _State.NORMAL
            i += 1
        self._pos = i
        return done

    def finish(self) -> list[Statement]:
        """End of input: what is left runs as a last statement, as psql does with a script's final line."""
        done: list[Statement] = []
        if self._state is _State.NORMAL and self._buffer[self._pos:].startswith("\\"):
            done = self.feed("\n")  # a command on the last line, without its newline
        if self._content_start is not None:
            self._emit(done, len(self._buffer), len(self._buffer))
        self.reset()
        return done

    def _mark_content(self, index: int) -> None:
        if self._content_start is None:
            self._content_start = index
            self._content_line = self._buffer_line + self._buffer.count("\n", 0, index)

    def _emit(self, done: list[Statement], end: int, resume: int, kind: Literal["sql", "command"] = "sql") -> None:
        if self._content_start is not None:
            text = self._buffer[self._content_start:end].rstrip()
            done.append(Statement(text, kind, self._content_line))
        self._buffer_line += self._buffer.count("\n", 0, resume)
        self._buffer = self._buffer[resume:]
        self._pos = 0
        self._state = _State.NORMAL
        self._content_start = None


def _command_end(buffer: str, start: int) -> int:
    """A backslash command ends at the end of its line or at a `;` (so `-e "\\dt; \\dn"` works); -1: not yet."""
    ends = [end for end in (buffer.find("\n", start), buffer.find(";", start)) if end >= 0]
    return min(ends) if ends else -1


def split(text: str) -> list[Statement]:
    """All statements of a script or an `-e` argument, in order."""
    splitter = Splitter()
    return splitter.feed(text) + splitter.finish()
