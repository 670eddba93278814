"""`sluicegate shell` as users run it: a real subprocess (and once a pseudo-terminal) against a real gateway; the
splitter, the error report and the table format also on their own."""

from __future__ import annotations

import io
import os
import re
import select
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from sluicegate.gateway.shell.client import Column
from sluicegate.gateway.shell.errors import ServerError
from sluicegate.gateway.shell.render import write_table
from sluicegate.gateway.shell.report import format_error, parse_error
from sluicegate.gateway.shell.splitter import Splitter, Statement, split

SLUICEGATE = str(Path(sys.executable).parent / "sluicegate")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


# -- the splitter, pure Python ------------------------------------------------------------------------------------


def test_split_on_semicolons_outside_quotes_and_comments() -> None:
    text = ("SELECT ';' AS a, 'it\\'s; fine' AS b, \"x;y\" AS `c;d` -- a comment; still a comment\n"
            "FROM t;\n/* block; /* nested; */ still; */ SELECT 2;;  \n")
    assert split(text) == [
        Statement("SELECT ';' AS a, 'it\\'s; fine' AS b, \"x;y\" AS `c;d` -- a comment; still a comment\nFROM t",
                  "sql", 1),
        Statement("SELECT 2", "sql", 3),
    ]


def test_last_statement_runs_without_semicolon_and_blank_ones_are_skipped() -> None:
    assert split("SELECT 1;\n-- nothing\n;\nSELECT\n  2") == [Statement("SELECT 1", "sql", 1),
                                                              Statement("SELECT\n  2", "sql", 4)]
    assert split("  ;\n-- only a comment\n") == []


def test_backslash_commands_end_at_line_end_or_semicolon() -> None:
    assert split("\\dt foo*\nSELECT 1; \\timing; \\q") == [
        Statement("\\dt foo*", "command", 1), Statement("SELECT 1", "sql", 2),
        Statement("\\timing", "command", 2), Statement("\\q", "command", 2)]
    # Inside a statement a backslash is just text.
    assert split("SELECT '\\\\' AS s;") == [Statement("SELECT '\\\\' AS s", "sql", 1)]


def test_incremental_feed_tracks_open_quotes_and_comments() -> None:
    splitter = Splitter()
    assert splitter.feed("SELECT 'a;\n") == []
    assert splitter.pending and splitter.continuation == "'"
    assert splitter.feed("b' /* x;\n") == []
    assert splitter.continuation == "*"
    assert splitter.feed("*/ AS v; SELECT") == [Statement("SELECT 'a;\nb' /* x;\n*/ AS v", "sql", 1)]
    assert splitter.pending and splitter.continuation == "-"
    splitter.reset()
    assert not splitter.pending
    assert splitter.feed("\\d") == []  # a command line is complete only at its end
    assert splitter.feed(" t\n") == [Statement("\\d t", "command", 3)]


def test_escaped_quote_split_across_feeds() -> None:
    splitter = Splitter()
    assert splitter.feed("SELECT 'x\\") == []
    assert splitter.feed("';'") == []
    assert splitter.feed(";") == [Statement("SELECT 'x\\';'", "sql", 1)]


# -- error report and table format --------------------------------------------------------------------------------


def test_error_report_reads_the_servers_fields_and_draws_the_caret() -> None:
    exc = ServerError("[TABLE_OR_VIEW_NOT_FOUND] The table `nope` cannot be found. SQLSTATE: 42P01\n"
                      "  at line 2, column 8:\n    FROM   nope\n           ^\n  hint: create it first",
                      sqlstate="42P01")
    report = parse_error(exc)
    assert (report.error_class, report.line, report.column, report.hint) == ("TABLE_OR_VIEW_NOT_FOUND", 2, 8,
                                                                             "create it first")
    assert format_error(exc, "SELECT *\nFROM   nope") == (
        "ERROR [42P01] TABLE_OR_VIEW_NOT_FOUND: The table `nope` cannot be found.\n"
        "LINE 2: FROM   nope\n"
        "               ^\n"
        "HINT: create it first")


def test_table_format_aligns_numbers_right_and_shows_null() -> None:
    out = io.StringIO()
    columns = [Column("id", "INT", True), Column("name", "STRING", False), Column("ok", "BOOLEAN", False)]
    assert write_table(out, columns, [[(1, "alice", True), (100, None, False)]]) == 2
    assert out.getvalue() == (
        " id  | name  |  ok\n"
        "-----+-------+-------\n"
        "   1 | alice | true\n"
        " 100 | NULL  | false\n"
        "(2 rows)\n\n")


# -- the command as a subprocess ------------------------------------------------------------------------------------


def run_shell(port: int, *args: str, home: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SLUICEGATE, "shell", "--port", str(port), "-u", "tester", *args], capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL,
                          env=dict(os.environ, HOME=str(home)))


def test_query_output_is_an_aligned_table(gateway: Any, tmp_path: Path) -> None:
    done = run_shell(gateway.port, "-e", "SELECT id, concat('row ', id) AS label, CAST(NULL AS INT) AS missing "
                                         "FROM range(1, 4) ORDER BY id DESC", home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        " id | label | missing\n"
        "----+-------+---------\n"
        "  3 | row 3 |    NULL\n"
        "  2 | row 2 |    NULL\n"
        "  1 | row 1 |    NULL\n"
        "(3 rows)\n\n")


def test_several_statements_in_one_e_run_in_order(gateway: Any, tmp_path: Path) -> None:
    done = run_shell(gateway.port, "-e", "CREATE TABLE shell_multi (id INT); "
                                         "INSERT INTO shell_multi VALUES (7); SELECT id FROM shell_multi",
                     home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "OK\nOK\n id\n----\n  7\n(1 row)\n\n"


def test_file_with_multiline_statement_literal_semicolon_and_comments(gateway: Any, tmp_path: Path) -> None:
    script = tmp_path / "script.sql"
    script.write_text(
        "-- a script; this comment has a semicolon\n"
        "SELECT 'a;b' AS text,  /* a; block comment */\n"
        "       2 AS n\n"
        ";\n"
        "SELECT \"it\\'s\" AS quoted;\n", encoding="utf-8")
    done = run_shell(gateway.port, "-f", str(script), home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (" text | n\n------+---\n a;b  | 2\n(1 row)\n\n"
                           " quoted\n--------\n it's\n(1 row)\n\n")


def test_error_shows_sqlstate_and_caret_and_stops_the_script(gateway: Any, tmp_path: Path) -> None:
    done = run_shell(gateway.port, "-e", "SELECT 1 AS one;\nSELECT *\n  FROM shell_no_such_table;\nSELECT 3 AS three",
                     home=tmp_path)
    assert done.returncode == 1
    assert done.stdout == " one\n-----\n   1\n(1 row)\n\n"  # the third statement never ran
    lines = done.stderr.splitlines()
    assert lines[0].startswith("ERROR [42P01] TABLE_OR_VIEW_NOT_FOUND: ")
    assert "LINE 2:   FROM shell_no_such_table" in lines
    caret_line = lines[lines.index("LINE 2:   FROM shell_no_such_table") + 1]
    assert caret_line == " " * len("LINE 2:   FROM ") + "^"


def test_dt_lists_a_created_table_and_d_its_columns(gateway: Any, tmp_path: Path) -> None:
    done = run_shell(gateway.port, "-e", "CREATE TABLE shell_listed (id BIGINT, name STRING);\n"
                                         "\\dt shell_li*\n\\d shell_listed", home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        "OK\n"
        " schema  |     name     | type  | comment\n"
        "---------+--------------+-------+---------\n"
        " default | shell_listed | TABLE |\n"
        "(1 row)\n\n"
        'Table "default.shell_listed"\n'
        " column |  type  | nullable | comment\n"
        "--------+--------+----------+---------\n"
        " id     | BIGINT | YES      |\n"
        " name   | STRING | YES      |\n"
        "(2 rows)\n\n")


def test_timing_prints_milliseconds_and_unknown_command_fails(gateway: Any, tmp_path: Path) -> None:
    done = run_shell(gateway.port, "-e", "\\timing\nSELECT 1 AS x;\n\\nope\nSELECT 2", home=tmp_path)
    assert done.returncode == 1
    assert re.fullmatch(r"Timing is on\.\n x\n---\n 1\n\(1 row\)\n\nTime: \d+\.\d{3} ms\n", done.stdout), done.stdout
    assert done.stderr.startswith("ERROR [42601] INVALID_COMMAND: invalid command \\nope\n")


def test_c_switches_database(gateway: Any, tmp_path: Path) -> None:
    done = run_shell(gateway.port, "-e", "CREATE DATABASE IF NOT EXISTS shell_db; \\c shell_db; "
                                         "SELECT current_database() AS db", home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == 'OK\nYou are now in database "shell_db".\n    db\n----------\n shell_db\n(1 row)\n\n'


def test_connect_failure_exits_2_naming_the_address(tmp_path: Path) -> None:
    with socket.socket() as sock:  # a port that was free a moment ago and has no listener
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    done = run_shell(port, "-e", "SELECT 1", home=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"sluicegate shell: cannot connect to 127.0.0.1:{port}: "
                                                "Connection refused"]


# -- interactive, through a pseudo-terminal ---------------------------------------------------------------------


class Terminal:
    """The shell on a pseudo-terminal; `expect` reads until a pattern shows up in the text without escapes."""

    def __init__(self, port: int, home: Path) -> None:
        import pty

        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: become the shell
            os.environ.update(HOME=str(home), TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1")
            os.execv(SLUICEGATE, [SLUICEGATE, "shell", "--port", str(port), "-u", "tester"])
        self.raw = b""

    @property
    def text(self) -> str:
        return ANSI.sub("", self.raw.decode("utf-8", "replace"))

    def expect(self, pattern: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not re.search(pattern, self.text):
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no {pattern!r} in {self.text!r}"
            ready, _, _ = select.select([self.fd], [], [], remaining)
            if ready:
                try:
                    chunk = os.read(self.fd, 65536)
                except OSError:  # the child closed the terminal
                    chunk = b""
                assert chunk, f"the shell ended before {pattern!r}: {self.text!r}"
                self.raw += chunk

    def wait_for_cooked_mode(self, timeout: float = 30) -> None:
        """Until the line editor gave the terminal back (ISIG on: Ctrl-C raises SIGINT in the shell)."""
        import termios

        deadline = time.monotonic() + timeout
        while not termios.tcgetattr(self.fd)[3] & termios.ISIG:
            assert time.monotonic() < deadline, "the terminal stayed in raw mode"
            select.select([], [], [], 0.01)

    def type(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def wait(self, timeout: float = 30) -> int:
        deadline = time.monotonic() + timeout
        open_terminal = True
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.fd] if open_terminal else [], [], [], 0.1)
            if ready:
                try:
                    self.raw += os.read(self.fd, 65536)
                except OSError:  # EIO: the child closed its side; waitpid tells how it ended
                    open_terminal = False
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                os.close(self.fd)
                return os.waitstatus_to_exitcode(status)
        os.kill(self.pid, 9)
        raise AssertionError(f"the shell did not exit: {self.text!r}")


def test_interactive_two_line_statement_then_quit(gateway: Any, tmp_path: Path) -> None:
    terminal = Terminal(gateway.port, tmp_path)
    terminal.expect(r"sluicegate:default>")
    terminal.type("SELECT 'abandoned'\r")
    terminal.expect(r"\n\s+->")
    terminal.type("\x03")  # Ctrl-C while typing drops it: kept, the statement below would be a syntax error
    terminal.expect(r"\n\s+->[^\n]*\n[\s\S]*sluicegate:default>")
    terminal.type("SELECT 40 + 2\r")
    terminal.expect(r"\n\s+->")  # the continuation prompt: the statement is not finished
    terminal.type("  AS answer;\r")
    terminal.expect(r"\(1 row\)[\s\S]*sluicegate:default>")
    assert " answer\r\n--------\r\n     42\r\n(1 row)" in terminal.text
    terminal.type("\\q\r")
    assert terminal.wait() == 0
    history = (tmp_path / ".sluicegate_history").read_text(encoding="utf-8")
    assert "SELECT 40 + 2" in history and "\\q" in history


def test_ctrl_c_cancels_the_running_statement_and_the_session_goes_on(gateway: Any, tmp_path: Path) -> None:
    terminal = Terminal(gateway.port, tmp_path)
    terminal.expect(r"sluicegate:default>")
    terminal.type("SELECT max(id * 2) AS m FROM range(100000000000);\r")
    terminal.expect(r"range\(100000000000\);\s*\n")  # the statement was sent and is running
    terminal.wait_for_cooked_mode()  # only then is Ctrl-C a signal rather than a key for the line editor
    terminal.type("\x03")
    terminal.expect(r"ERROR \[57014\] OPERATION_CANCELED[\s\S]*sluicegate:default>")
    terminal.type("SELECT 5 AS five;\r")
    terminal.expect(r"\(1 row\)[\s\S]*sluicegate:default>")
    assert " five\r\n------\r\n    5\r\n(1 row)" in terminal.text
    terminal.type("\x04")  # Ctrl-D quits too
    assert terminal.wait() == 0


def test_result_larger_than_one_fetch_prints_every_row(gateway: Any, tmp_path: Path) -> None:
    done = run_shell(gateway.port, "-e", "SELECT id FROM range(2500) ORDER BY id", home=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # Aligned per fetched batch: the first thousand rows need three places, the later ones four.
    assert lines[:3] == [" id", "-----", "   0"]
    assert lines[2 + 999:2 + 1001] == [" 999", " 1000"]
    assert lines[-3:] == [" 2499", "(2500 rows)", ""]
    assert len(lines) == 2 + 2500 + 2


def test_statements_piped_on_stdin(gateway: Any, tmp_path: Path) -> None:
    done = subprocess.run([SLUICEGATE, "shell", "--port", str(gateway.port)], input="SELECT 'piped' AS how;\n",
                          capture_output=True, text=True, timeout=120, env=dict(os.environ, HOME=str(tmp_path)))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "  how\n-------\n piped\n(1 row)\n\n"


@pytest.fixture(scope="module")
def password_gateway(start_gateway: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    from sluicegate.gateway.auth.providers import set_password

    password_file = tmp_path_factory.mktemp("shell_auth") / "passwd"
    set_password(password_file, "alice", "s3cret")
    return start_gateway({"auth": {"mode": "password", "password_file": str(password_file)},
                          "server": {"allow_plaintext": True}})


def test_wrong_password_exits_2_and_a_terminal_is_asked_for_one(password_gateway: Any, tmp_path: Path) -> None:
    done = subprocess.run([SLUICEGATE, "shell", "--port", str(password_gateway.port), "-u", "alice", "-p", "wrong",
                           "-e", "SELECT 1"], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert done.stderr.startswith(f"sluicegate shell: cannot connect to 127.0.0.1:{password_gateway.port} as alice: "
                                  "authentication failed")

    import pty

    pid, fd = pty.fork()
    if pid == 0:
        os.environ.update(HOME=str(tmp_path), TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1")
        os.execv(SLUICEGATE, [SLUICEGATE, "shell", "--port", str(password_gateway.port), "-u", "alice"])
    terminal = Terminal.__new__(Terminal)
    terminal.pid, terminal.fd, terminal.raw = pid, fd, b""
    terminal.expect(r"Password for user alice: ")
    terminal.type("s3cret\r")
    terminal.expect(r"sluicegate:default>")
    terminal.type("\\q\r")
    assert terminal.wait() == 0
    assert "s3cret" not in terminal.text  # not echoed


def test_failing_script_names_the_file_and_line_and_runs_nothing_after(gateway: Any, tmp_path: Path) -> None:
    script = tmp_path / "broken.sql"
    script.write_text("SELECT 1 AS ok;\n\n-- next one is wrong\nSELECT 1,\n  2 2 2;\nSELECT 3 AS never;\n",
                      encoding="utf-8")
    done = run_shell(gateway.port, "-f", str(script), home=tmp_path)
    assert done.returncode == 1
    assert done.stdout == " ok\n----\n  1\n(1 row)\n\n"
    assert done.stderr.startswith("ERROR [42601] PARSE_SYNTAX_ERROR: ")
    assert "LINE 2:   2 2 2\n            ^\n" in done.stderr
    assert done.stderr.rstrip().endswith(f"in {script}, statement at line 4")


def test_variables_from_the_command_line_and_unbound_ones_refused(gateway: Any, tmp_path: Path) -> None:
    """`--var name=value` (or beeline's `--hivevar`) fills `${name}` in a script; a `${name}` nobody set is an error
    with its position, not a folder literally named `${name}`."""
    script = tmp_path / "vars.sql"
    script.write_text("SELECT '${greeting}, ' || '${hivevar:who}' AS said;\n")
    done = run_shell(gateway.port, "--var", "greeting=hello", "--hivevar", "who=world", "-f", str(script),
                     home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "hello, world" in done.stdout
    done = run_shell(gateway.port, "--var", "greeting=hello", "-f", str(script), home=tmp_path)
    assert done.returncode != 0
    assert "UNRESOLVED_VARIABLE" in done.stderr and "who" in done.stderr and "--var who=" in done.stderr
    bad = run_shell(gateway.port, "--var", "no equals sign", "-e", "SELECT 1", home=tmp_path)
    assert bad.returncode == 2 and "NAME=VALUE" in bad.stderr
