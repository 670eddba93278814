"""`sluicegate shell -f` of a script with `-- input: PATH` directives (the sql_examples/ format), run by hand.

The golden tests land each input file where the directive stands; a person running the script with `-f` must land
it there too, or the statements after it (a DROP FLOW, an UPDATE, a REFRESH) run before the data they are about.
So, when standard input is a terminal, the shell stops before the first statement that follows one or more input
directives, names the files (with `${input}` replaced by the session variable) and waits for Enter; inputs after the
last statement are named at the end. Without a terminal (a pipe, a test, CI) nothing waits.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

_INPUT = re.compile(r"^-- input:\s*(\S.*?)\s*$")


@dataclass(frozen=True)
class InputDirective:
    line: int
    path: str


def input_directives(text: str) -> list[InputDirective]:
    return [InputDirective(number, found.group(1)) for number, line in enumerate(text.splitlines(), start=1)
            if (found := _INPUT.match(line)) is not None]


class InputPauses:
    """Before each statement: the input directives above it not yet announced; `ask(text, wait)` shows them and,
    with `wait`, waits for Enter."""

    def __init__(self, directives: list[InputDirective], folder: str | None, ask: Callable[[str, bool], None]) -> None:
        self._pending = list(directives)
        self._folder = folder
        self._ask = ask

    def _paths(self, before: int | None) -> list[str]:
        due = [d for d in self._pending if before is None or d.line < before]
        self._pending = [d for d in self._pending if d not in due]
        folder = self._folder if self._folder is not None else "${input}"
        return [f"{folder}/{d.path} (line {d.line})" for d in due]

    def before(self, line: int) -> None:
        paths = self._paths(line)
        if paths:
            self._ask("The script lands these files before its next statement:\n  " + "\n  ".join(paths)
                      + "\nLand each (lines as under its `-- input:`; write it as .NAME, then rename it), then press "
                        "Enter to go on. ", True)

    def at_end(self) -> None:
        paths = self._paths(None)
        if paths:
            self._ask("The script ends here; land its remaining input files, then query the tables:\n  "
                      + "\n  ".join(paths) + "\n", False)
