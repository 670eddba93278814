"""The FROM items of a streaming query: STREAM sources (catalog table, read_files, read_kafka, rate) with their
WATERMARK, static catalog tables, and the rewrite of the query over the view names the runtime registers for them."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlglot import exp

from sluicegate.dialect.expressions import Watermark
from sluicegate.dialect.positions import start_of
from sluicegate.dialect.streaming.kafka import canonical_name
from sluicegate.dialect.streaming.plan import SourceSpec, StaticTableSpec, WatermarkSpec

SOURCE_FUNCTIONS = ("read_files", "rate", "read_kafka")
FILE_FORMATS = ("json", "csv", "parquet")
RESCUED_DATA = "_rescued_data"
RESCUING_FORMATS = ("json", "csv")     # Spark's PERMISSIVE mode keeps a bad record's text for these only


@dataclass
class FoundSource:
    """One STREAM item as written: `node` is what the rewrite replaces (the Watermark clause when there is one)."""

    node: exp.Expr
    stream: exp.Stream | None           # None: a batch read_files(...) in a plain query
    target: exp.Table                   # its `this` is a function for read_files/rate
    alias: str | None
    watermark: Watermark | None

    @property
    def function(self) -> exp.Func | None:
        return self.target.this if isinstance(self.target, exp.Table) and isinstance(self.target.this, exp.Func) \
            else None

    def function_name(self) -> str | None:
        func = self.function
        if func is None:
            return None
        return (func.name if isinstance(func, exp.Anonymous) else func.sql_name()).lower()

    def arguments(self) -> tuple[list[exp.Expr], dict[str, exp.Expr]]:
        func = self.function
        positional: list[exp.Expr] = []
        named: dict[str, exp.Expr] = {}
        for arg in (func.expressions if func is not None else []):
            if isinstance(arg, (exp.Kwarg, exp.PropertyEQ, exp.EQ)):
                named[arg.this.name.lower()] = arg.expression
            else:
                positional.append(arg)
        return positional, named


def cte_names(tree: exp.Expr) -> set[str]:
    return {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}


def _alias_of(*nodes: exp.Expr | None) -> str | None:
    for node in nodes:
        if node is not None and node.args.get("alias") is not None:
            return node.args["alias"].name
    return None


def find_sources(query: exp.Expr) -> list[FoundSource]:
    found = []
    for stream in query.find_all(exp.Stream):
        outer = stream.parent if isinstance(stream.parent, Watermark) else stream
        target = stream.this
        wrapper = target if isinstance(target, exp.Subquery) else None
        if wrapper is not None:
            target = wrapper.this   # FIXME: STREAM (SELECT ...) makes this a Select, not the Table the rules expect
        watermark = outer if isinstance(outer, Watermark) else None
        alias = _alias_of(watermark, wrapper, target)
        found.append(FoundSource(outer, stream, target, alias, watermark))
    return sorted(found, key=lambda s: start_of(s.node) or 0)  # view names follow the text order


def find_static_tables(query: exp.Expr) -> list[exp.Table]:
    ctes = cte_names(query)
    tables = []
    for table in sorted(query.find_all(exp.Table), key=lambda t: start_of(t) or 0):
        if isinstance(table.this, exp.Func) or not table.name or table.find_ancestor(exp.Stream) is not None:
            continue
        if not table.db and table.name.lower() in ctes:
            continue
        tables.append(table)
    return tables


def literal_text(node: exp.Expr) -> str:
    if isinstance(node, exp.Boolean):
        return "true" if node.this else "false"
    return node.name if isinstance(node, (exp.Literal, exp.Var, exp.Identifier, exp.Column)) else node.sql("spark")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def interval_text(interval: exp.Expr) -> str:
    """`INTERVAL 10 SECONDS` / `INTERVAL '10 seconds'` -> "10 seconds" (what withWatermark takes)."""
    if isinstance(interval, exp.Interval):
        value = interval.this.name if interval.this is not None else ""
        unit = interval.args.get("unit")
        text = f"{value} {unit.name}" if unit is not None else value
    else:
        text = interval.name
    return re.sub(r"\s+", " ", text.strip()).lower()


def source_spec(found: FoundSource, view_name: str) -> SourceSpec:
    """The plan's description of a checked source (the rules have already rejected unknown functions/formats)."""
    watermark = None
    if found.watermark is not None:
        watermark = WatermarkSpec(found.watermark.args["column"].name, interval_text(found.watermark.args["delay"]))
    name = found.function_name()
    if name is None:
        table = found.target
        return SourceSpec(view_name, "table", database=table.db or None, table=table.name, watermark=watermark)
    positional, named = found.arguments()
    if name == "read_kafka":     # the names as the source reads them (the rules have checked each)
        options = {canonical_name(key) or key: literal_text(value) for key, value in named.items()}
        return SourceSpec(view_name, "kafka", options=options, watermark=watermark)
    if name == "rate":
        options = {_camel(key): literal_text(value) for key, value in named.items()}
        return SourceSpec(view_name, "rate", options=options, watermark=watermark)
    path = literal_text(positional[0]) if positional else literal_text(named.pop("path"))
    file_format = literal_text(named.pop("format")).lower()
    schema = literal_text(named.pop("schema")) if "schema" in named else None
    named.pop("path", None)
    options = {key: literal_text(value) for key, value in named.items()}
    return SourceSpec(view_name, "files", path=path, format=file_format, schema=schema, options=options,
                      watermark=watermark, rescued_data=rescued_data_column(file_format, options))


def option(options: dict[str, str], name: str) -> str | None:
    """A reader option's value: Spark matches option names without regard to case."""
    return next((value for key, value in options.items() if key.lower() == name.lower()), None)


def rescued_data_column(file_format: str, options: dict[str, str]) -> str | None:
    """Where read_files keeps what it cannot parse or cast (as Databricks' Auto Loader): `_rescued_data`, or the
    name `rescuedDataColumn` (or Spark's `columnNameOfCorruptRecord`) gives; None for parquet and when `mode`
    says FAILFAST (fail on a bad record) or DROPMALFORMED (drop it)."""
    if file_format not in RESCUING_FORMATS or (option(options, "mode") or "PERMISSIVE").upper() != "PERMISSIVE":
        return None
    return option(options, "rescuedDataColumn") or option(options, "columnNameOfCorruptRecord") or RESCUED_DATA


def _view(name: str, alias: str | None) -> exp.Expr:
    table = exp.to_table(name)
    return exp.alias_(table, alias, table=True) if alias else table


def rewrite(query: exp.Expr) -> tuple[str, tuple[SourceSpec, ...], tuple[StaticTableSpec, ...]]:
    """Replace each source and static table by its view (keeping the name the query qualifies columns with)."""
    query = query.copy()
    sources = find_sources(query)
    specs = tuple(source_spec(found, f"__sg_source_{i}") for i, found in enumerate(sources))
    statics = find_static_tables(query)
    static_specs = tuple(StaticTableSpec(f"__sg_static_{i}", t.db or None, t.name) for i, t in enumerate(statics))
    replacements: list[tuple[exp.Expr, exp.Expr]] = []
    for found, spec in zip(sources, specs, strict=True):
        alias = found.alias or (found.target.name if spec.kind == "table" else None)
        replacements.append((found.node, _view(spec.view_name, alias)))
    for table, static_spec in zip(statics, static_specs, strict=True):
        alias = _alias_of(table) or table.name
        replacements.append((table, _view(static_spec.view_name, alias)))
    for node, replacement in replacements:
        node.replace(replacement)
    return query.sql("spark"), specs, static_specs
