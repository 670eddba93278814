"""`AUTO CDC` checked before anything runs: `analyze_cdc` turns `CREATE [OR REFRESH] STREAMING TABLE t ... FLOW AUTO
CDC FROM src KEYS (...) SEQUENCE BY ...` and `CREATE FLOW f AS AUTO CDC INTO t FROM src ...` into a `StreamingPlan`
whose query reads the source's change events as they are (`SELECT * FROM <source>`, checked by every streaming rule,
so a source is what any streaming table may read) and whose `cdc` says how they are applied.

What the text alone can tell is checked here, with the offending node's position: keys and SEQUENCE BY are columns
(SEQUENCE BY also `struct(a, b)`, ordered field by field), written once each; COLUMNS and TRACK HISTORY lists do not
drop a key; APPLY AS TRUNCATE only with SCD type 1 (a truncate would erase history, as Databricks refuses); TRACK
HISTORY only with SCD type 2; conditions are row predicates (no subquery, no aggregate); with a declared column list
the keys and COLUMNS are among its columns. Whether the source has these columns, with usable types, is only known
once its schema is (the executor checks that at CREATE, before the stream starts).
"""

from __future__ import annotations

from sqlglot import exp

from sluicegate.dialect.dialect import StreamingSpark
from sluicegate.dialect.errors import DialectError
from sluicegate.dialect.expressions import AutoCdc, CreateAutoCdcCommand
from sluicegate.dialect.parse import parse
from sluicegate.dialect.positions import line_column, start_of
from sluicegate.dialect.streaming.analyze import analyze
from sluicegate.dialect.streaming.context import TableKindLookup
from sluicegate.dialect.streaming.plan import CdcSpec, Operator, StreamingPlan


class InvalidCdcClauseError(DialectError):
    """A clause of AUTO CDC that cannot mean anything with the others (TRUNCATE with SCD type 2, ...)."""

    error_class = "INVALID_AUTO_CDC_CLAUSE"
    sqlstate = "42000"


class CdcColumnNotFoundError(DialectError):
    """A key, the sequence or a listed column that the table (or, at CREATE, the source) does not have."""

    error_class = "UNRESOLVED_COLUMN.WITH_SUGGESTION"
    sqlstate = "42703"


def _parsed(sql: str) -> CreateAutoCdcCommand:
    """The tree of a statement's text the caller knows is an AUTO CDC table or flow (the classifier said so)."""
    tree = parse(sql)
    if not isinstance(tree, CreateAutoCdcCommand):
        raise DialectError("expected CREATE ... FLOW AUTO CDC or CREATE FLOW ... AS AUTO CDC INTO")
    return tree


def _error(kind: type[DialectError], sql: str, node: exp.Expr, message: str, hint: str) -> DialectError:
    start = start_of(node)
    line, column = line_column(sql, start) if start is not None else (None, None)
    return kind(message, hint=hint, line=line, column=column)


def _column_names(sql: str, nodes: list[exp.Expr], what: str) -> tuple[str, ...]:
    names: list[str] = []
    for node in nodes:
        if not isinstance(node, exp.Column) or node.table:
            raise _error(InvalidCdcClauseError, sql, node, f"{what} names columns of the source, not "
                         f"`{node.sql(StreamingSpark)}`", f"write {what} (a, b) with the source's column names")
        if node.name.lower() in {n.lower() for n in names}:
            raise _error(InvalidCdcClauseError, sql, node, f"`{node.name}` is written twice in {what}",
                         f"name each column once in {what}")
        names.append(node.name)
    return tuple(names)


def _sequence(sql: str, node: exp.Expr) -> tuple[str, tuple[str, ...]]:
    """SEQUENCE BY as Spark SQL, and the columns it reads: a column, or struct(a, b, ...) of columns."""
    hint = "SEQUENCE BY a column (a number, a timestamp ...) or struct(a, b) to order by several"
    if isinstance(node, exp.Column) and not node.table:
        return node.sql("spark"), (node.name,)
    if isinstance(node, exp.Struct):
        fields = [f.expression if isinstance(f, exp.PropertyEQ) else f.this if isinstance(f, exp.Alias) else f
                  for f in node.expressions]
        if fields and all(isinstance(f, exp.Column) and not f.table for f in fields):
            names = tuple(f.name for f in fields)
            if len({n.lower() for n in names}) != len(names):
                raise _error(InvalidCdcClauseError, sql, node, "SEQUENCE BY struct(...) names a column twice", hint)
            return f"struct({', '.join(f.sql('spark') for f in fields)})", names
    raise _error(InvalidCdcClauseError, sql, node, f"SEQUENCE BY takes a column or struct(columns), not "
                 f"`{node.sql(StreamingSpark)}`", hint)


def _condition(sql: str, node: exp.Expr | None, what: str) -> str | None:
    if node is None:
        return None
    for bad, why in ((exp.Subquery, "a subquery"), (exp.AggFunc, "an aggregate"), (exp.Select, "a subquery")):
        found = node.find(bad)
        if found is not None:
            raise _error(InvalidCdcClauseError, sql, found, f"APPLY AS {what} WHEN is judged on each change event "
                         f"alone; it cannot hold {why}", "compare the event's own columns, e.g. operation = 'DELETE'")
    return node.sql("spark")


def _keep_keys(sql: str, cdc: AutoCdc, keys: tuple[str, ...], listed: str, excepted: str, what: str) -> None:
    """A COLUMNS / TRACK HISTORY list keeps every key: the table is keyed by them."""
    wanted = {k.lower() for k in keys}
    for node in cdc.args.get(excepted) or []:
        if node.name.lower() in wanted:
            raise _error(InvalidCdcClauseError, sql, node, f"{what} * EXCEPT cannot leave out the key `{node.name}`",
                         f"keep every key in {what}")
    listed_nodes = cdc.args.get(listed) or []
    if what == "COLUMNS" and listed_nodes:
        have = {n.name.lower() for n in listed_nodes}
        missing = [k for k in keys if k.lower() not in have]
        if missing:
            raise _error(InvalidCdcClauseError, sql, listed_nodes[0], f"COLUMNS leaves out the key `{missing[0]}`",
                         "list every key in COLUMNS: the table is keyed by them")


def _declared(sql: str, tree: CreateAutoCdcCommand, cdc: AutoCdc) -> None:
    """With a column list in CREATE, keys and COLUMNS name its columns."""
    target = tree.this
    if not isinstance(target, exp.Schema):
        return
    declared = {c.name.lower() for c in target.expressions if isinstance(c, exp.ColumnDef)}
    for node in [*cdc.args["keys"], *(cdc.args.get("columns") or [])]:
        if node.name.lower() not in declared:
            raise _error(CdcColumnNotFoundError, sql, node, f"`{node.name}` is not one of the columns the streaming "
                         "table declares", "declare it in the table's column list, or name a declared column")


def cdc_spec(sql: str, tree: CreateAutoCdcCommand) -> CdcSpec:
    """The AUTO CDC clause checked on its own (see the module's docstring)."""
    cdc: AutoCdc = tree.args["cdc"]
    keys = _column_names(sql, cdc.args.get("keys") or [], "KEYS")
    if not keys:
        raise _error(InvalidCdcClauseError, sql, cdc, "AUTO CDC needs KEYS: the columns that identify a row",
                     "write KEYS (id) or KEYS (a, b)")
    sequence_sql, sequence_columns = _sequence(sql, cdc.args["sequence"])
    scd_type = cdc.args.get("scd_type") or 1
    truncate = cdc.args.get("truncate")
    if truncate is not None and scd_type == 2:
        raise _error(InvalidCdcClauseError, sql, truncate, "APPLY AS TRUNCATE WHEN is supported only with SCD type "
                     "1: truncating would erase an SCD type 2 table's history",
                     "leave APPLY AS TRUNCATE out, or store the table as SCD TYPE 1")
    tracked = cdc.args.get("track") or cdc.args.get("track_except") or cdc.args.get("track_all")
    if tracked and scd_type != 2:
        node = (cdc.args.get("track") or cdc.args.get("track_except") or [cdc])[0]
        raise _error(InvalidCdcClauseError, sql, node, "TRACK HISTORY ON applies to SCD type 2 only: an SCD type 1 "
                     "table keeps no history", "add STORED AS SCD TYPE 2, or leave TRACK HISTORY ON out")
    columns = _column_names(sql, cdc.args.get("columns") or [], "COLUMNS")
    except_columns = _column_names(sql, cdc.args.get("except_columns") or [], "COLUMNS * EXCEPT")
    _keep_keys(sql, cdc, keys, "columns", "except_columns", "COLUMNS")
    track = _column_names(sql, cdc.args.get("track") or [], "TRACK HISTORY ON")
    track_except = _column_names(sql, cdc.args.get("track_except") or [], "TRACK HISTORY ON * EXCEPT")
    _declared(sql, tree, cdc)
    flow = tree.args.get("flow")
    return CdcSpec(
        keys=keys, sequence_sql=sequence_sql, sequence_columns=sequence_columns, scd_type=scd_type,
        ignore_null_updates=bool(cdc.args.get("ignore_null_updates")),
        delete_sql=_condition(sql, cdc.args.get("delete"), "DELETE"),
        truncate_sql=_condition(sql, truncate, "TRUNCATE"),
        columns=columns, except_columns=except_columns, track_history=track, track_except=track_except,
        flow=flow.name if flow is not None else None)


def _listed(what: str, listed: tuple[str, ...], excepted: tuple[str, ...]) -> list[str]:
    if listed:
        return [f"{what} {', '.join(listed)}"]
    return [f"{what} * except ({', '.join(excepted)})"] if excepted else []


def describe_cdc(spec: CdcSpec) -> str:
    """One line for EXPLAIN and DESCRIBE: keys, sequence, SCD type and what is kept."""
    parts = [f"auto cdc: keys ({', '.join(spec.keys)}), sequence by {spec.sequence_sql}, SCD type {spec.scd_type}"]
    parts += ["ignore null updates"] if spec.ignore_null_updates else []
    parts += [f"{what} when {condition}" for what, condition in (("delete", spec.delete_sql),
                                                                  ("truncate", spec.truncate_sql)) if condition]
    parts += _listed("columns", spec.columns, spec.except_columns)
    if spec.scd_type == 2:
        parts += (_listed("track history on", spec.track_history, spec.track_except)
                  or ["track history on every column but the keys"])
    return "; ".join(parts)


def analyze_cdc(sql: str, tree: CreateAutoCdcCommand | None = None,
                table_kind: TableKindLookup | None = None) -> StreamingPlan:
    """The plan of an AUTO CDC table or flow: its source read as a streaming table's query is (every streaming rule,
    positions in the statement as typed), its change events applied by key as `cdc` says. `tree`: the statement's
    (parsed from `sql` when not given); `table_kind` as for `analyze`."""
    tree = tree if tree is not None else _parsed(sql)
    spec = cdc_spec(sql, tree)
    cdc: AutoCdc = tree.args["cdc"]
    query = exp.Select(expressions=[exp.Star()]).from_(cdc.this.copy())
    create = exp.Create(this=tree.this.copy(), kind="TABLE", expression=query,
                        properties=tree.args["properties"].copy() if tree.args.get("properties") else None,
                        refresh=bool(tree.args.get("refresh")), exists=bool(tree.args.get("exists")))
    plan = analyze(sql, table_kind, create=create)
    project = Operator("project", describe_cdc(spec))
    if spec.scd_type == 2:
        reason = (f"AUTO CDC, SCD type 2: one row per version of a key, from __START_AT to __END_AT (values of "
                  f"{spec.sequence_sql}); a change of a tracked column starts a new version")
        state = ("per key, every change (one per sequence value), from which the versions of a key a batch touches "
                 "are computed again, so that a change arriving late takes its place in the history")
    else:
        reason = f"AUTO CDC: each key's change with the highest {spec.sequence_sql} is applied to the table"
        state = ("per key, the sequence of its latest change and, for a deleted key, a tombstone (kept out of the "
                 "table) so that an older change arriving later does not bring the row back"
                 + ("; and the sequence of the latest truncate" if spec.truncate_sql else ""))
    return StreamingPlan(**{
        **{name: getattr(plan, name) for name in plan.__dataclass_fields__},
        "output_mode": "append", "keys": spec.keys, "cdc": spec, "mode_reason": reason, "state": state,
        "operators": (*plan.operators[:-1], project),
    })


class CdcColumnTypeError(DialectError):
    """A key or the sequence of a type rows cannot be grouped or ordered by (a map, a variant)."""

    error_class = "DATATYPE_MISMATCH.INVALID_ORDERING_TYPE"
    sqlstate = "42K09"


_UNORDERED = ("map<", "variant")


def _unordered(type_sql: str) -> bool:
    """Spark can group and order every type but maps and variants (also inside a struct or an array)."""
    lowered = type_sql.lower()
    return any(kind in lowered for kind in _UNORDERED)


def check_cdc_source(sql: str, source_columns: dict[str, str]) -> None:
    """At CREATE, once the source's schema is known (`source_columns`: each column's name and Spark type, as
    `simpleString` spells it): keys, sequence, COLUMNS and TRACK HISTORY name source columns, keys and sequence of
    types rows can be grouped and ordered by. Errors point at the name in `sql`, which is parsed again here."""
    cdc: AutoCdc = _parsed(sql).args["cdc"]
    by_name = {name.lower(): type_sql for name, type_sql in source_columns.items()}
    listed = ", ".join(f"`{name}`" for name in source_columns)
    sequence = cdc.args["sequence"]
    sequence_nodes = [sequence] if isinstance(sequence, exp.Column) else [
        f.expression if isinstance(f, exp.PropertyEQ) else f for f in sequence.expressions]
    named: list[tuple[exp.Expr, str]] = [(node, "key") for node in cdc.args["keys"]]
    named += [(node, "sequence") for node in sequence_nodes]
    for clause in ("columns", "except_columns", "track", "track_except"):
        named += [(node, "column") for node in cdc.args.get(clause) or []]
    for node, role in named:
        type_sql = by_name.get(node.name.lower())
        if type_sql is None:
            raise _error(CdcColumnNotFoundError, sql, node, f"A column with name `{node.name}` cannot be resolved: "
                         f"the AUTO CDC source has {listed}.", f"name one of the source's columns as the {role}")
        if role != "column" and _unordered(type_sql):
            raise _error(CdcColumnTypeError, sql, node, f"The {role} `{node.name}` is of type {type_sql}, which rows "
                         "cannot be grouped or ordered by.", f"use a column of another type as the {role} (a number, a "
                         "string, a date or timestamp, or a struct of them)")


def check_agrees(sql: str, spec: CdcSpec, other: CdcSpec, other_name: str) -> None:
    """`CREATE FLOW f AS AUTO CDC INTO t` (in `sql`, whose `spec` it is) into a table another AUTO CDC writer fills
    (`other`, named `other_name`): their events are ranked together per key, so they must name the same keys (in any
    order) and the same SCD type; with SCD type 2, whichever writer's batch touches a key computes its versions
    again from every writer's events, so they also track the same columns with the same IGNORE NULL UPDATES. The
    error points at the flow's KEYS (or its AUTO CDC clause for the rest)."""
    cdc: AutoCdc = _parsed(sql).args["cdc"]
    if sorted(k.lower() for k in spec.keys) != sorted(k.lower() for k in other.keys):
        raise _error(InvalidCdcClauseError, sql, cdc.args["keys"][0],
                     f"KEYS ({', '.join(spec.keys)}) differ from KEYS ({', '.join(other.keys)}) of {other_name}, "
                     "which applies changes to the same table: every AUTO CDC flow into a table ranks its events "
                     "with the others' by the same keys", f"write KEYS ({', '.join(other.keys)})")
    if spec.scd_type != other.scd_type:
        raise _error(InvalidCdcClauseError, sql, cdc,
                     f"STORED AS SCD TYPE {spec.scd_type} differs from SCD TYPE {other.scd_type} of {other_name}, "
                     "which applies changes to the same table", f"write STORED AS SCD TYPE {other.scd_type}")
    if spec.scd_type == 2 and _history(spec) != _history(other):
        raise _error(InvalidCdcClauseError, sql, cdc,
                     f"{_history_sql(spec)} differs from {_history_sql(other)} of {other_name}, which applies "
                     "changes to the same SCD type 2 table: each writer computes the versions of a key again from "
                     "every writer's events", f"write {_history_sql(other)}")


def _history(spec: CdcSpec) -> tuple[frozenset[str], frozenset[str], bool]:
    """What makes an SCD type 2 writer's versions: its TRACK HISTORY clause (names in any order and case) and
    IGNORE NULL UPDATES."""
    return (frozenset(c.lower() for c in spec.track_history), frozenset(c.lower() for c in spec.track_except),
            spec.ignore_null_updates)


def _history_sql(spec: CdcSpec) -> str:
    track = (f"TRACK HISTORY ON {', '.join(spec.track_history)}" if spec.track_history else
             f"TRACK HISTORY ON * EXCEPT ({', '.join(spec.track_except)})" if spec.track_except else
             "no TRACK HISTORY (every column tracked)")
    return track + (" with IGNORE NULL UPDATES" if spec.ignore_null_updates else "")


def kept_columns(source_columns: list[str], spec: CdcSpec) -> list[str]:
    """The source's columns the table keeps, as the source spells them: COLUMNS' in its order, every column but
    `* EXCEPT`'s, or all of them."""
    by_name = {name.lower(): name for name in source_columns}
    if spec.columns:
        return [by_name[name.lower()] for name in spec.columns if name.lower() in by_name]
    dropped = {name.lower() for name in spec.except_columns}
    return [name for name in source_columns if name.lower() not in dropped]


START_AT, END_AT = "__START_AT", "__END_AT"   # an SCD type 2 table's version columns (Databricks' names)


def tracked_columns(kept: list[str], spec: CdcSpec) -> list[str]:
    """The kept columns whose change starts a new version of an SCD type 2 table: TRACK HISTORY ON's, every kept
    column but the keys and `* EXCEPT`'s, or (no TRACK HISTORY) every kept column but the keys."""
    keys = {key.lower() for key in spec.keys}
    values = [name for name in kept if name.lower() not in keys]
    if spec.track_history:
        wanted = {name.lower() for name in spec.track_history}
        return [name for name in values if name.lower() in wanted]
    dropped = {name.lower() for name in spec.track_except}
    return [name for name in values if name.lower() not in dropped]
