"""`sluicegate shell`: connect, then run `-e`/`-f` statements (exit 0, 1 at the first failure, 2 when it cannot
connect) or read them interactively with prompt_toolkit, or from a pipe."""

from __future__ import annotations

import argparse
import getpass
import logging
import shutil
import signal
import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from sluicegate.gateway.shell.client import HiveClient
from sluicegate.gateway.shell.errors import AuthenticationRefused, ConnectError, ShellError
from sluicegate.gateway.shell.progress import ProgressLine
from sluicegate.gateway.shell.report import format_error
from sluicegate.gateway.shell.runner import Shell, reconnect_if_lost
from sluicegate.gateway.shell.script_inputs import InputPauses, input_directives
from sluicegate.gateway.shell.splitter import Splitter, Statement, split

HISTORY_FILE = ".sluicegate_history"


@contextmanager
def _interrupts_cancel(interrupted: threading.Event) -> Iterator[None]:
    """The first Ctrl-C asks for the running statement to be cancelled (checked between calls to the server);
    a second one, before the first was seen, interrupts hard."""

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        if interrupted.is_set():
            raise KeyboardInterrupt
        interrupted.set()

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _connect(client: HiveClient, password_given: bool) -> None:
    """Connect; ask for a password only when the server refused without one and someone can type it."""
    try:
        client.connect()
    except AuthenticationRefused:
        if password_given or not sys.stdin.isatty():
            raise
        client.password = getpass.getpass(f"Password for user {client.user}: ")
        client.connect()


def _run_all(shell: Shell, statements: Iterable[Statement], source: str | None,
             pauses: InputPauses | None = None) -> int:
    """Run in order, stop at the first failure (exit 1). `pauses`: a script's input files to land, on a terminal."""
    for statement in statements:
        if pauses is not None:
            pauses.before(statement.line)
        try:
            ok = shell.run(statement)
        except KeyboardInterrupt:
            shell.err.write("interrupted\n")
            return 1
        if not ok:
            if source is not None:
                shell.err.write(f"in {source}, statement at line {statement.line}\n")
            return 1
        if shell.quit:
            break
    if pauses is not None and not shell.quit:
        pauses.at_end()
    return 0


def _pauses(text: str, source: str | None, client: HiveClient) -> InputPauses | None:
    """A script file run from a terminal waits where its `-- input:` directives land files (script_inputs)."""
    directives = input_directives(text) if source is not None else []
    if not directives or not sys.stdin.isatty():
        return None

    def ask(text: str, wait: bool) -> None:
        sys.stderr.write(text)
        sys.stderr.flush()
        if wait:
            sys.stdin.readline()

    return InputPauses(directives, client.variables.get("input"), ask)


def _interactive(shell: Shell, interrupted: threading.Event) -> int:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory

    session: PromptSession[str] = PromptSession(history=FileHistory(str(Path.home() / HISTORY_FILE)))
    splitter = Splitter()
    client = shell.client
    shell.message(f"sluicegate shell: connected to {client.host}:{client.port} as {client.user}. "
                  "\\? for help, \\q to quit.")
    while not shell.quit:
        prompt = f"sluicegate:{shell.database}> "
        if splitter.pending:
            prompt = " " * (len(prompt) - 3) + splitter.continuation + "> "
        interrupted.clear()  # a Ctrl-C from here on (once the prompt returns) is for what this line runs
        try:
            # Ctrl-C while editing is a key (raw mode) that clears the input. prompt_toolkit's own SIGINT handler
            # stays installed a moment after the terminal is back in cooked mode, and would swallow a Ctrl-C
            # meant for the statement this line starts: keep ours.
            line = session.prompt(prompt, handle_sigint=False)
        except KeyboardInterrupt:  # Ctrl-C at the prompt: drop what was typed
            splitter.reset()
            continue
        except EOFError:  # Ctrl-D
            break
        for statement in splitter.feed(line + "\n"):
            try:
                shell.run(statement)
            except KeyboardInterrupt:
                shell.err.write("interrupted; reconnecting\n")
                reconnect_if_lost(shell)
                break
            if shell.quit or shell.canceled:  # after a cancel, the rest of the line does not run either
                shell.canceled = False
                break
    return 0


def run_shell(args: argparse.Namespace) -> int:
    scripts: list[tuple[str, str | None]] = []
    if args.execute is not None:
        scripts.append((args.execute, None))
    if args.file is not None:
        try:
            scripts.append((Path(args.file).read_text(encoding="utf-8"), args.file))
        except OSError as exc:
            print(f"sluicegate shell: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
            return 1

    logging.getLogger("thrift").setLevel(logging.CRITICAL)  # it logs refused connects that we report ourselves
    interrupted = threading.Event()
    client = HiveClient(args.host, args.port, args.user, args.password, args.database, interrupted,
                        tls=args.tls, tls_ca=args.tls_ca, variables=dict(getattr(args, "variables", None) or []))
    try:
        _connect(client, args.password is not None)
    except ConnectError as exc:
        print(f"sluicegate shell: {exc.message}", file=sys.stderr)
        return 2
    except ShellError as exc:  # the server took the connection but refused the session (a missing database)
        print(f"sluicegate shell: cannot open a session on {args.host}:{args.port}:\n{format_error(exc)}",
              file=sys.stderr)
        return 2
    shell = Shell(client, sys.stdout, sys.stderr)
    client.progress = ProgressLine(sys.stderr, shutil.get_terminal_size().columns)  # only on a terminal
    try:
        with _interrupts_cancel(interrupted):
            if scripts:
                for text, source in scripts:
                    status = _run_all(shell, split(text), source, _pauses(text, source, client))
                    if status or shell.quit:
                        return status
                return 0
            if sys.stdin.isatty():
                return _interactive(shell, interrupted)
            return _run_all(shell, split(sys.stdin.read()), "standard input")
    finally:
        client.close()
