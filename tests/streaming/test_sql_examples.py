"""The scripts in sql_examples/ run as golden tests (the format is in sql_examples/README.md).

Each script runs through PyHive against the real gateway, in a database of its own: statements in file order, input
files landed atomically where the script says, the streams driven to completion with the manager's `wait_for`
(Spark's processAllAvailable, never a sleep), then each expectation query compared row by row with the script's
expected CSV lines.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from sluicegate.gateway.shell.splitter import Splitter, Statement

EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "sql_examples"
EXAMPLES = sorted(EXAMPLES_DIR.glob("*.sql"))

_SOURCE_FOLDER = re.compile(r"read_files\(\s*'\$\{input\}/([^']+)'")
_DIRECTIVE = re.compile(r"^-- (input|expect|produce):(.*)$|^-- (wait)\s*$")
_DATA = re.compile(r"^-- (.*\S)\s*$")
_CREATE_STREAMING = re.compile(
    r"^\s*CREATE\s+(?:OR\s+REFRESH\s+)?STREAMING\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([`\w.]+)", re.IGNORECASE)


@dataclass
class Land:
    path: str
    lines: list[str] = field(default_factory=list)
    line: int = 0


@dataclass
class Produce:
    """`-- produce: TOPIC`: the data lines as record values, in one committed transaction to partition 0."""

    topic: str
    lines: list[str] = field(default_factory=list)
    line: int = 0


@dataclass
class Wait:
    line: int = 0


@dataclass
class Expect:
    query: str
    rows: list[str] = field(default_factory=list)
    line: int = 0


Step = Statement | Land | Produce | Wait | Expect


def parse(text: str, source: str) -> list[Step]:
    """The script as steps in file order: its statements (split as the shell splits them) and its directives."""
    steps: list[Step] = []
    splitter = Splitter()
    block: Land | Produce | Expect | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        directive = _DIRECTIVE.match(line)
        data = _DATA.match(line)
        if directive is not None:
            if splitter.pending:
                raise ValueError(f"{source}:{number}: a directive inside a statement (a `;` missing before it?)")
            kind, argument = directive.group(1) or directive.group(3), (directive.group(2) or "").strip()
            if kind in ("input", "expect", "produce") and not argument:
                what = {"input": "path", "expect": "query", "produce": "topic"}[kind]
                raise ValueError(f"{source}:{number}: `-- {kind}:` needs a {what}")
            block = Land(argument, line=number) if kind == "input" else \
                Expect(argument, line=number) if kind == "expect" else \
                Produce(argument, line=number) if kind == "produce" else None
            steps.append(block if block is not None else Wait(line=number))
        elif block is not None and data is not None:
            (block.rows if isinstance(block, Expect) else block.lines).append(data.group(1))
        else:
            block = None
        # every line goes through the splitter, directives included (they are comments), so line numbers hold
        steps.extend(splitter.feed(line + "\n"))
    steps.extend(splitter.finish())
    return steps


def land(folder: Path, step: Land, source: str) -> None:
    """Write the file under a hidden name beside its final one, then rename it: it appears whole, at once."""
    target = folder / step.path
    assert folder in target.resolve().parents, f"{source}:{step.line}: {step.path} leaves the input folder"
    assert not target.exists(), f"{source}:{step.line}: {step.path} was landed already (a file is read once)"
    if target.suffix == ".json":
        for offset, row in enumerate(step.lines, start=1):
            try:
                json.loads(row)
            except ValueError as exc:
                raise AssertionError(f"{source}:{step.line + offset}: not a JSON line: {exc}") from exc
    target.parent.mkdir(parents=True, exist_ok=True)
    hidden = target.parent / f".{target.name}"
    hidden.write_text("".join(row + "\n" for row in step.lines), encoding="utf-8")
    os.rename(hidden, target)


def settle(streams: Any, database: str, tables: list[str]) -> None:
    """Every streaming table of the script processes all input available now; in creation order and twice, so each
    step of a chain sees what the step before it wrote."""
    for _ in range(2):
        for name in tables:
            flows = [f.stream for f in streams.store.list_flows(database, name)]
            own = [] if streams.store.get_stream(database, name) is None and flows else [None]
            for flow in own + [f.flow for f in flows]:   # the table's own stream, then its flows (CREATE FLOW)
                key = (database, name) if flow is None else (database, name, flow)
                if key not in streams.running():
                    entry = streams.store.get_stream(database, name, flow)
                    error = entry.last_error if entry is not None else "no such stream"
                    pytest.fail(f"stream {'.'.join(key)} is not running: {error}")
                streams.wait_for(database, name, flow=flow)


def as_text(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def as_csv(row: tuple[Any, ...]) -> str:
    """A row as beeline's csv2 prints it: comma-separated, quoted only where needed."""
    out = io.StringIO()
    csv.writer(out, lineterminator="", quoting=csv.QUOTE_MINIMAL).writerow([as_text(value) for value in row])
    return out.getvalue()


def test_every_example_has_expectations() -> None:
    assert {path.name for path in EXAMPLES} >= {
        "clicks_per_country.sql", "windowed_counts.sql", "yahoo_streaming_benchmark.sql", "medallion_chain.sql"}
    for path in EXAMPLES:
        steps = parse(path.read_text(encoding="utf-8"), path.name)
        assert path.read_text(encoding="utf-8").startswith("--"), f"{path.name} has no header comment"
        assert any(isinstance(step, Expect) and step.rows for step in steps), f"{path.name} expects nothing"
        assert any(isinstance(step, Statement) for step in steps), f"{path.name} has no statement"


_CREATED_NAME = re.compile(r"^\s*CREATE\s+(?:OR\s+(?:REFRESH|REPLACE)\s+)?"
                           r"(?:STREAMING\s+TABLE|TABLE|MATERIALIZED\s+VIEW|VIEW|FLOW)\s+(?:IF\s+NOT\s+EXISTS\s+)?([`\w.]+)",
                           re.IGNORECASE)
_MKDIR = re.compile(r"^--\s+mkdir -p (.+)$", re.MULTILINE)
_RUN_BY_HAND = re.compile(r"^--\s+\./run shell (.*)-f sql_examples/(\w+)\.sql$", re.MULTILINE)
_REFRESH_STREAM = re.compile(r"^\s*REFRESH\s+STREAMING\s+TABLE\b", re.IGNORECASE)


def _created(path: Path) -> set[str]:
    steps = parse(path.read_text(encoding="utf-8"), path.name)
    return {found.group(1).replace("`", "").split(".")[-1].lower() for step in steps
            if isinstance(step, Statement) and (found := _CREATED_NAME.match(step.text)) is not None}


def test_no_two_examples_make_the_same_name() -> None:
    """Run by hand one after the other in `default` (newcomer report 1.8), no script finds another's table."""
    seen: dict[str, str] = {}
    for path in EXAMPLES:
        for name in _created(path):
            assert name not in seen, f"{path.name} and {seen[name]} both create `{name}`"
            seen[name] = path.name


@pytest.mark.parametrize("path", EXAMPLES, ids=[path.stem for path in EXAMPLES])
def test_the_header_runs_the_example_by_hand(path: Path) -> None:
    """The header's commands create every folder the script reads, in a landing folder of the script's own, before
    the shell runs it (a missing folder is STREAMING_SOURCE_NOT_FOUND; newcomer report 1.8 and 4.1)."""
    text = path.read_text(encoding="utf-8")
    run = _RUN_BY_HAND.search(text)
    assert run is not None and run.group(2) == path.stem, f"{path.name}: no `./run shell ... -f` line for itself"
    folders = _SOURCE_FOLDER.findall(text)
    if "${kafka}" in text:
        assert "--var kafka=" in run.group(1), path.name
    if not folders:
        return
    own = f"warehouse/landing/{path.stem}"
    assert f"--var input=$PWD/{own} " in run.group(1), f"{path.name}: ${{input}} is not its own folder"
    made = _MKDIR.search(text)
    assert made is not None and made.start() < run.start(), f"{path.name}: no `mkdir -p` before the shell runs"
    assert set(made.group(1).split()) == {f"{own}/{folder}" for folder in folders}, path.name


@pytest.mark.parametrize("path", EXAMPLES, ids=[path.stem for path in EXAMPLES])
def test_statements_after_an_input_wait_for_it(path: Path) -> None:
    """By hand, the shell stops at an `-- input:` until the file has landed; a statement about that data (DROP FLOW,
    UPDATE, REFRESH MATERIALIZED VIEW...) then runs only after a REFRESH STREAMING TABLE, which waits until the
    streams have read it (newcomer report 1.8: flows.sql and the medallion example ran their later statements at
    once). The golden run below checks that the results are the ones the comments promise."""
    pending: int | None = None     # the line of an input no REFRESH STREAMING TABLE has waited for yet
    for step in parse(path.read_text(encoding="utf-8"), path.name):
        if isinstance(step, Land):
            pending = pending or step.line
        elif isinstance(step, Statement) and _REFRESH_STREAM.match(step.text):
            pending = None
        elif isinstance(step, Statement):
            assert pending is None, (f"{path.name}:{step.line}: runs before the streams have read the input of line "
                                     f"{pending}; REFRESH STREAMING TABLE first")


def test_parse_keeps_file_order_and_line_numbers() -> None:
    steps = parse("-- header\nCREATE TABLE t (a INT);\n\n-- input: x/1.json\n-- {\"a\": 1}\n-- {\"a\": 2}\n\n"
                  "-- free text\n-- wait\n-- expect: SELECT a FROM t ORDER BY a\n-- 1\n-- 2\n--\n-- not a row\n"
                  "SELECT\n  ';' -- input: not a directive here\n;\n-- expect: SELECT 1 WHERE false\n", "s")
    assert steps == [Statement("CREATE TABLE t (a INT)", line=2), Land("x/1.json", ['{"a": 1}', '{"a": 2}'], 4),
                     Wait(9), Expect("SELECT a FROM t ORDER BY a", ["1", "2"], 10),
                     Statement("SELECT\n  ';' -- input: not a directive here", line=15),
                     Expect("SELECT 1 WHERE false", [], 18)]
    with pytest.raises(ValueError, match="s:2: a directive inside a statement"):
        parse("SELECT 1\n-- wait\n;", "s")
    assert as_csv(("a,b", None, True, 3, 'say "hi"')) == '"a,b",NULL,true,3,"say ""hi"""'


@pytest.mark.parametrize("path", EXAMPLES, ids=[path.stem for path in EXAMPLES])
def test_sql_example(path: Path, connect: Any, streams: Any, tmp_path: Path) -> None:
    from kafka_broker import MockKafka

    source = path.name
    steps = parse(path.read_text(encoding="utf-8"), source)
    kafka = MockKafka() if "${kafka}" in path.read_text(encoding="utf-8") else None   # a broker for this script
    inputs = (tmp_path / "input").resolve()
    inputs.mkdir()
    for folder in _SOURCE_FOLDER.findall(path.read_text(encoding="utf-8")):
        (inputs / folder).mkdir(parents=True, exist_ok=True)  # landing folders exist before their streams
    database = f"ex_{path.stem}".lower()
    cursor = connect().cursor()
    cursor.execute(f"CREATE DATABASE {database}")
    cursor.execute(f"USE {database}")
    created: list[str] = []
    try:
        for step in steps:
            if isinstance(step, Statement):
                sql = step.text.replace("${input}", str(inputs))
                sql = sql.replace("${kafka}", kafka.bootstrap) if kafka is not None else sql
                try:
                    cursor.execute(sql)
                except Exception as exc:  # noqa: BLE001 - re-raised with the script's line
                    pytest.fail(f"{source}:{step.line}: the statement failed: {exc}")
                named = _CREATE_STREAMING.match(sql)
                if named is not None:
                    created.append(named.group(1).replace("`", "").split(".")[-1].lower())
            elif isinstance(step, Land):
                land(inputs, step, source)
            elif isinstance(step, Produce):
                assert kafka is not None, f"{source}:{step.line}: `-- produce:` in a script without ${{kafka}}"
                kafka.produce_transaction(step.topic, [(None, line.encode(), 0) for line in step.lines],
                                          transactional_id=f"{database}-{step.topic}")
            elif isinstance(step, Wait):
                settle(streams, database, created)
            else:
                settle(streams, database, created)
                cursor.execute(step.query.replace("${input}", str(inputs)))
                got = [as_csv(tuple(row)) for row in cursor.fetchall()]
                assert got == step.rows, f"{source}:{step.line}: {step.query}"
    finally:
        for name in reversed(created):  # stop the streams: the machine is shared with the other tests
            cursor.execute(f"DROP STREAMING TABLE IF EXISTS {name}")
        if kafka is not None:
            kafka.close()
    assert not [key for key in streams.running() if key[0] == database]
