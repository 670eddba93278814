"""The shell's session: runs statements and commands against one HiveClient and prints what they produce."""

from __future__ import annotations

import re
import time
from typing import TextIO

from sluicegate.gateway.shell.client import HiveClient, Result
from sluicegate.gateway.shell.commands import run_command
from sluicegate.gateway.shell.errors import ConnectError, ShellError, StatementCanceled
from sluicegate.gateway.shell.render import write_table
from sluicegate.gateway.shell.report import format_error
from sluicegate.gateway.shell.splitter import Statement

_USE = re.compile(r"^\s*USE\b", re.IGNORECASE)


class Shell:
    """State a user changes with commands (timing, database) and the printing of results and errors."""

    def __init__(self, client: HiveClient, out: TextIO, err: TextIO) -> None:
        self.client = client
        self.out = out
        self.err = err
        self.timing = False
        self.quit = False
        self.canceled = False  # the last statement was cancelled with Ctrl-C

    @property
    def database(self) -> str:
        return self.client.database

    def run(self, statement: Statement) -> bool:
        """Run one statement or command; False when it failed (the error is printed)."""
        started = time.perf_counter()
        try:
            if statement.kind == "command":
                run_command(self, statement.text)
            else:
                self.show(self.client.execute(statement.text))
                if _USE.match(statement.text):
                    self.refresh_database()
        except ShellError as exc:
            self.canceled = isinstance(exc, StatementCanceled)
            self.out.flush()
            self.err.write(format_error(exc, statement.text if statement.kind == "sql" else None) + "\n")
            self.err.flush()
            return False
        if self.timing and statement.kind == "sql":
            self.out.write(f"Time: {(time.perf_counter() - started) * 1000:.3f} ms\n")
            self.out.flush()
        return True

    def show(self, result: Result) -> None:
        if not result.columns:
            self.out.write("OK\n")
            self.out.flush()
            return
        try:
            write_table(self.out, result.columns, result.batches)
        finally:
            result.close()  # an error mid-fetch still closes the operation on the server

    def refresh_database(self) -> None:
        """The current database as the server sees it (after USE), for the prompt."""
        result = self.client.execute("SELECT current_database()")
        rows = [row for batch in result.batches for row in batch]
        if rows and rows[0][0]:
            self.client.database = str(rows[0][0])

    def message(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()


def reconnect_if_lost(shell: Shell) -> None:
    """Used after a hard interrupt: a half-read reply leaves the Thrift stream unusable, so start a new one."""
    try:
        shell.client.reconnect()
    except ConnectError as exc:
        shell.err.write(format_error(exc) + "\n")
        shell.err.flush()
