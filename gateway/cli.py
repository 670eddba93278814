"""`sluicegate serve | shell | passwd | token`: the command line."""

from __future__ import annotations

import argparse
import contextlib
import getpass
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from sluicegate.gateway.errors import ConfigError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from sluicegate.gateway.config import GatewayConfig

EXIT_JVM_DIED = 3  # for a supervisor: restart the gateway


def _serve(args: argparse.Namespace) -> int:
    from sluicegate.engine.jvm_watchdog import JvmWatchdog
    from sluicegate.gateway import app
    from sluicegate.gateway.config import load_config
    from sluicegate.gateway.service import open_catalog

    config = load_config(args.conf, host=args.host, port=args.port, http_port=args.http_port,
                         warehouse=args.warehouse)
    authenticator = app.check(config)  # before Spark starts: fail fast
    spark = app.start_spark(config)
    if not _storage_shared(config, spark):
        _stop_spark(spark)
        return 2
    running = app.start(config, spark, authenticator=authenticator, catalog=open_catalog(config))
    server = running.server

    stop = threading.Event()
    jvm_death: list[str] = []

    def request_stop(signum: int, _frame: object) -> None:
        logging.getLogger("sluicegate").info("received %s, stopping", signal.Signals(signum).name)
        stop.set()

    def jvm_died(reason: str) -> None:
        jvm_death.append(reason)
        stop.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    watchdog = JvmWatchdog(spark, jvm_died)
    watchdog.start()
    ssl_part = ";ssl=true" if server.tls else ""
    print(
        f"sluicegate ready on {config.server.host}:{server.port} "
        f"(jdbc:hive2://{config.server.host}:{server.port}/default{ssl_part}; warehouse {config.warehouse}; "
        f"auth {config.auth.mode})",
        flush=True,
    )
    if server.http_port is not None:
        scheme = "https" if server.tls else "http"
        print(f"sluicegate serves Thrift over HTTP at {scheme}://{config.server.host}:{server.http_port}/cliservice "
              f"(jdbc:hive2://{config.server.host}:{server.http_port}/default;transportMode=http;"
              f"httpPath=cliservice{ssl_part})", flush=True)
    stop.wait()
    watchdog.stop()
    if jvm_death:
        return _exit_after_jvm_death(jvm_death[0], server)
    with _py4j_quiet_while_stopping():
        running.stop(config.server.shutdown_grace)
        _stop_spark(spark)
    print("sluicegate stopped", flush=True)
    return 0


class _Py4jRootRecords(logging.Filter):
    """py4j reports a command that found the JVM gone with `logging.info(..., exc_info=True)` on the root logger:
    a traceback per command. A stop after a SIGTERM to the whole process group (Ctrl-C in a terminal, `timeout`, a
    supervisor) races the JVM's own exit, so those are expected there; `_stop_spark` says it in one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.name == "root" and f"{os.sep}py4j{os.sep}" in record.pathname)


@contextlib.contextmanager
def _py4j_quiet_while_stopping() -> Iterator[None]:
    root = logging.getLogger()
    quiet = _Py4jRootRecords()
    root.addFilter(quiet)
    try:
        yield
    finally:
        root.removeFilter(quiet)


def _storage_shared(config: GatewayConfig, spark: SparkSession) -> bool:
    """On a cluster: whether executors see the warehouse, checkpoint and landing folders the driver sees (said on
    stderr when not). Local masters share the driver's disk."""
    from sluicegate.dialect.errors import SqlError
    from sluicegate.engine.cluster.storage_probe import probe_shared_folders

    if config.spark.local or not config.spark.verify_shared_storage:
        return True
    folders = [config.warehouse]
    if config.streams is not None:
        folders.append(config.streams.checkpoints)
    if config.security is not None:
        folders += [path for path in config.security.allowed_paths if path.is_dir()]
    try:
        result = probe_shared_folders(spark, folders)
    except SqlError as exc:
        print(f"sluicegate: [{exc.error_class}] {exc.message}" + (f"; {exc.hint}" if exc.hint else ""),
              file=sys.stderr, flush=True)
        return False
    print(f"sluicegate cluster: {result.summary()}", flush=True)
    return True


def _exit_after_jvm_death(reason: str, server: object) -> int:
    """Close the port and the sessions without waiting on a JVM that is gone, then exit for a restart."""
    print(f"sluicegate: {reason}; stopping with exit status {EXIT_JVM_DIED} so that a supervisor restarts it",
          file=sys.stderr, flush=True)
    closing = threading.Thread(target=server.shutdown, args=(0,), daemon=True)  # type: ignore[attr-defined]
    closing.start()
    closing.join(timeout=10)
    print("sluicegate stopped: Spark's JVM died", flush=True)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(EXIT_JVM_DIED)  # Spark's and Py4J's threads may wait forever on the dead JVM: no orderly exit


def _stop_spark(spark: object) -> None:
    """Ctrl-C in a terminal (or `timeout`) signals the whole process group: Spark's JVM may be gone already, and
    a stop that finds it gone is still a clean stop of the gateway."""
    from py4j.protocol import Py4JError

    try:
        spark.stop()  # type: ignore[attr-defined]
    except (Py4JError, ConnectionError):
        # the signal reached the JVM too; naming py4j's exception would only look like a failure to an operator
        logging.getLogger("sluicegate").info("Spark's JVM had already exited (the signal reached it too)")


def _passwd(args: argparse.Namespace) -> int:
    from sluicegate.gateway.auth.providers import set_password
    from sluicegate.gateway.config import load_config

    config = load_config(args.conf, warehouse=args.warehouse)
    path = Path(args.file) if args.file else config.auth.password_file
    if args.password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    else:
        password = getpass.getpass(f"new password for {args.user}: ")
        if password != getpass.getpass("again: "):
            print("sluicegate passwd: the two passwords differ; nothing changed", file=sys.stderr)
            return 1
    if not password:
        print("sluicegate passwd: an empty password is not allowed; nothing changed", file=sys.stderr)
        return 1
    set_password(path, args.user, password)
    print(f"password for {args.user} set in {path}")
    return 0


def _token(args: argparse.Namespace) -> int:
    """create: a new token, printed once (only its hash is kept); list: ids, users, dates, comments; revoke."""
    import time

    from sluicegate.gateway.auth.providers import read_password_file
    from sluicegate.gateway.auth.tokens import create_token, list_tokens, revoke_tokens
    from sluicegate.gateway.config import load_config

    config = load_config(args.conf, warehouse=args.warehouse)
    path = Path(args.file) if args.file else config.auth.token_file
    assert path is not None
    if args.action == "create":
        passwords = config.auth.password_file
        known = passwords.exists() and args.user in read_password_file(passwords)
        if config.auth.mode == "password" and not known:
            print(f"sluicegate token: user {args.user} is not in {passwords}; add it with `sluicegate passwd "
                  f"{args.user}` first; nothing changed", file=sys.stderr)
            return 1
        record, token = create_token(path, args.user, args.comment or "")
        print(token)
        print(f"token {record.token_id} of {record.user} added to {path}; it is shown only now: keep it like a "
              "password", file=sys.stderr)
        return 0
    if args.action == "list":   # a header line over aligned columns, as a shell listing; nothing but it when empty
        rows = [(record.token_id, record.user, time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(record.created)),
                 record.comment) for record in list_tokens(path, args.user)]
        header = ("ID", "USER", "CREATED", "COMMENT")
        widths = [max(len(row[i]) for row in [header, *rows]) for i in range(3)]
        for row in [header, *rows]:
            cells = [cell.ljust(width) for cell, width in zip(row[:3], widths, strict=True)]
            print("  ".join([*cells, row[3]]).rstrip())
        if not rows:
            print(f"no tokens in {path}" + (f" for {args.user}" if args.user else ""), file=sys.stderr)
        return 0
    if (args.id is None) == (args.user is None):
        print("sluicegate token revoke: give a token id (or the token), or --user USER for all of a user's",
              file=sys.stderr)
        return 2
    removed = revoke_tokens(path, token_id=args.id, user=args.user)
    if not removed:
        print(f"sluicegate token revoke: no such token in {path}; `sluicegate token list` shows them",
              file=sys.stderr)
        return 1
    for record in removed:
        print(f"revoked token {record.token_id} of {record.user}")
    return 0


def _variable(text: str) -> tuple[str, str]:
    name, equals, value = text.partition("=")
    if not equals or not name.strip().isidentifier():
        raise argparse.ArgumentTypeError(f"'{text}' is not NAME=VALUE with NAME a plain identifier")
    return name.strip(), value


def _shell(args: argparse.Namespace) -> int:
    from sluicegate.gateway.shell.main import run_shell

    return run_shell(args)


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def _log_level(text: str) -> str:
    level = text.strip().upper()
    if level not in LOG_LEVELS:
        raise argparse.ArgumentTypeError(f"'{text}' is not one of {', '.join(LOG_LEVELS)}")
    return level


def _add_log_level(parser: argparse.ArgumentParser, default: str | None) -> None:
    """`--log-level` before the subcommand (`sluicegate --log-level DEBUG serve`) and after it (`./run serve
    --log-level DEBUG`, since `./run` puts the subcommand first): a subcommand's copy sets the value only when given."""
    parser.add_argument("--log-level", type=_log_level, default=default if default else argparse.SUPPRESS,
                        metavar="LEVEL", help="logging level: DEBUG, INFO (default), WARNING or ERROR")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sluicegate", description="SQL-first streaming warehouse gateway")
    _add_log_level(parser, "INFO")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="start the HiveServer2 gateway")
    serve.add_argument("--host", help="address to bind (default from conf: 127.0.0.1)")
    serve.add_argument("--port", type=int, help="Thrift port (default from conf: 10000; 0 = any free port)")
    serve.add_argument("--http-port", type=int,
                       help="Thrift over HTTP port (default from conf: -1 = off; 0 = any free port; Hive uses 10001)")
    serve.add_argument("--warehouse", help="warehouse folder (default from conf: ./warehouse)")
    serve.add_argument("--conf", help="a TOML file overriding conf/sluicegate.toml key by key")
    serve.set_defaults(run=_serve)

    shell = commands.add_parser("shell", help="an interactive SQL shell over the HiveServer2 protocol")
    shell.add_argument("--host", default="127.0.0.1")
    shell.add_argument("--port", type=int, default=10000)
    shell.add_argument("-u", "--user", default=getpass.getuser())
    shell.add_argument("-p", "--password", help="password (asked for when the server wants one and none is given)")
    shell.add_argument("-d", "--database", default="default")
    shell.add_argument("--tls", action="store_true", help="connect with TLS (the server has server.tls_cert)")
    shell.add_argument("--tls-ca", metavar="FILE",
                       help="PEM file of the CA (or self-signed certificate) to trust; implies --tls")
    shell.add_argument("--var", "--hivevar", dest="variables", action="append", default=[], metavar="NAME=VALUE",
                       type=_variable, help="a session variable: ${NAME} in statements is replaced by VALUE "
                       "(repeatable; as beeline's --hivevar)")
    shell.add_argument("-e", dest="execute", help="run these statements and exit")
    shell.add_argument("-f", dest="file", help="run the statements in this file and exit")
    shell.set_defaults(run=_shell)

    passwd = commands.add_parser("passwd", help="set a user's password for auth.mode = password")
    passwd.add_argument("user")
    passwd.add_argument("--conf", help="configuration file (to find the warehouse and password file)")
    passwd.add_argument("--warehouse", help="warehouse folder")
    passwd.add_argument("--file", help="password file (default: auth.password_file, or ~/.config/sluicegate/passwd)")
    passwd.add_argument("--password-stdin", action="store_true", help="read the password from standard input")
    passwd.set_defaults(run=_passwd)

    token = commands.add_parser("token", help="manage access tokens for the HTTP port (Bearer, or Basic token:...)")
    token_actions = token.add_subparsers(dest="action", required=True)
    create = token_actions.add_parser("create", help="create a token for USER and print it (only once)")
    create.add_argument("user")
    create.add_argument("--comment", help="what the token is for (shown by `token list`)")
    listing = token_actions.add_parser("list", help="list tokens under a header: id, user, creation time, comment")
    listing.add_argument("user", nargs="?", help="only this user's tokens")
    revoke = token_actions.add_parser("revoke", help="revoke a token by its id (or the token), or all of --user's")
    revoke.add_argument("id", nargs="?", help="the token's id, as `token list` shows it, or the token itself")
    revoke.add_argument("--user", help="revoke every token of this user")
    for action in (create, listing, revoke):
        action.add_argument("--conf", help="configuration file (to find the token file)")
        action.add_argument("--warehouse", help="warehouse folder")
        action.add_argument("--file", help="token file (default: auth.token_file, or `tokens` next to the password "
                            "file)")
    token.set_defaults(run=_token)
    for command in (serve, shell, passwd, create, listing, revoke):
        _add_log_level(command, None)
    return parser


def configure_logging(level: str) -> None:
    """The gateway's log on standard error at `level`; the processes it starts (Spark's JVM and Python workers,
    whose Kafka clients log through engine/streams/kafka_logging) learn the level from SLUICEGATE_LOG_LEVEL."""
    from sluicegate.engine.streams.kafka_logging import LEVEL_VARIABLE, LOG_FORMAT

    logging.basicConfig(level=level, format=LOG_FORMAT, stream=sys.stderr)
    os.environ[LEVEL_VARIABLE] = level
    for noisy in ("py4j", "pyspark"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    # sqlglot warns "contains unsupported syntax. Falling back to parsing as a 'Command'" for statements the dialect
    # then handles itself (`SET spark.sql.shuffle.partitions`): nothing for an operator, so only at DEBUG
    logging.getLogger("sqlglot").setLevel(logging.WARNING if level == "DEBUG" else logging.ERROR)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.log_level)
    try:
        return int(args.run(args))
    except ConfigError as exc:
        print(f"sluicegate: {exc.message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
