"""Backslash commands, psql's names: \\q, \\timing, \\dt, \\dn, \\d, \\c, \\?. Metadata comes from the HiveServer2
metadata calls (GetTables, GetSchemas, GetColumns), as JDBC tools read it, not from SHOW statements."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TextIO

from sluicegate.gateway.shell.client import Column, HiveClient, Result
from sluicegate.gateway.shell.errors import CommandError
from sluicegate.gateway.shell.render import write_table


class Shell(Protocol):
    """What a command reads and changes of the shell running it (runner.Shell): the commands sit below the runner,
    which dispatches to them."""

    client: HiveClient
    out: TextIO
    timing: bool
    quit: bool

    @property
    def database(self) -> str: ...

    def refresh_database(self) -> None: ...

    def message(self, text: str) -> None: ...

HELP = """\
  \\q              quit (also Ctrl-D)
  \\timing         toggle printing how long each statement took
  \\dt [PATTERN]   list tables (PATTERN: name or schema.name, * and ? as wildcards)
  \\dn [PATTERN]   list schemas (databases)
  \\d TABLE        describe a table's columns (also schema.table)
  \\c DATABASE     switch to another database (USE)
  \\?              this help
Statements end with ';'. Ctrl-C cancels a running statement or clears the input."""


def _like(pattern: str | None) -> str | None:
    """psql's wildcards (* and ?) as the metadata calls' LIKE pattern (% and _)."""
    if not pattern:
        return None
    return pattern.replace("*", "%").replace("?", "_")


def _split_name(name: str) -> tuple[str | None, str]:
    name = name.replace("`", "")
    if "." in name:
        schema, table = name.split(".", 1)
        return schema, table
    return None, name


def _pick(result: Result, wanted: list[tuple[str, str]]) -> tuple[list[Column], list[tuple[Any, ...]]]:
    """Project a metadata result onto some of its columns (by JDBC name), renamed for people."""
    index = {column.name.upper(): i for i, column in enumerate(result.columns)}
    positions = [index[name] for name, _ in wanted if name in index]
    columns = [Column(label, "STRING", False) for name, label in wanted if name in index]
    rows = [tuple(row[i] for i in positions) for batch in result.batches for row in batch]
    return columns, rows


def _show(shell: Shell, columns: list[Column], rows: list[tuple[Any, ...]]) -> None:
    write_table(shell.out, columns, [rows])


def quit_shell(shell: Shell, argument: str) -> None:
    shell.quit = True


def toggle_timing(shell: Shell, argument: str) -> None:
    if argument.lower() in ("on", "off"):
        shell.timing = argument.lower() == "on"
    elif argument:
        raise CommandError(f"\\timing: unrecognized value \"{argument}\": on or off expected")
    else:
        shell.timing = not shell.timing
    shell.message(f"Timing is {'on' if shell.timing else 'off'}.")


def list_tables(shell: Shell, argument: str) -> None:
    schema, table = _split_name(argument) if argument else (None, "")
    result = shell.client.tables(_like(schema) or shell.database, _like(table) or "%")
    columns, rows = _pick(result, [("TABLE_SCHEM", "schema"), ("TABLE_NAME", "name"), ("TABLE_TYPE", "type"),
                                   ("REMARKS", "comment")])
    rows.sort(key=lambda row: tuple(str(value) for value in row[:2]))
    _show(shell, columns, rows)


def list_schemas(shell: Shell, argument: str) -> None:
    columns, rows = _pick(shell.client.schemas(_like(argument)), [("TABLE_SCHEM", "name")])
    rows.sort(key=lambda row: str(row[0]))
    _show(shell, columns, rows)


def describe_table(shell: Shell, argument: str) -> None:
    if not argument:
        list_tables(shell, "")
        return
    schema, table = _split_name(argument)
    result = shell.client.columns(schema or shell.database, table)
    columns, rows = _pick(result, [("COLUMN_NAME", "column"), ("TYPE_NAME", "type"), ("IS_NULLABLE", "nullable"),
                                   ("REMARKS", "comment")])
    if not rows:
        raise CommandError(f'did not find any table named "{argument}"', error_class="TABLE_OR_VIEW_NOT_FOUND",
                           sqlstate="42P01", hint="\\dt lists the tables of the current database")
    shell.message(f'Table "{schema or shell.database}.{table}"')
    _show(shell, columns, rows)


def change_database(shell: Shell, argument: str) -> None:
    if not argument:
        shell.message(f'You are in database "{shell.database}".')
        return
    name = argument.strip("`").replace("`", "``")
    shell.client.execute(f"USE `{name}`").close()
    shell.refresh_database()
    shell.message(f'You are now in database "{shell.database}".')


def show_help(shell: Shell, argument: str) -> None:
    shell.message(HELP)


COMMANDS: dict[str, Callable[[Shell, str], None]] = {
    "q": quit_shell,
    "quit": quit_shell,
    "timing": toggle_timing,
    "dt": list_tables,
    "dn": list_schemas,
    "d": describe_table,
    "c": change_database,
    "connect": change_database,
    "?": show_help,
    "h": show_help,
}


def run_command(shell: Shell, text: str) -> None:
    """Run one backslash command line; raises CommandError for unknown commands and bad arguments."""
    body = text.strip().removeprefix("\\").rstrip(";").strip()
    name, _, argument = body.partition(" ")
    handler = COMMANDS.get(name)
    if handler is None:
        raise CommandError(f"invalid command \\{name}", hint="\\? lists the commands")
    handler(shell, argument.strip())
