"""What every rule looks at: the statement, its tokens, the query tree, its sources and properties, plus the small
questions several rules ask of the tree (is this SELECT an aggregation? which columns carry a watermark?)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property

from sqlglot import exp
from sqlglot.tokens import Token

from sluicegate.dialect.expressions import Watermark
from sluicegate.dialect.positions import position
from sluicegate.dialect.streaming.errors import StreamingQueryError
from sluicegate.dialect.streaming.sources import FoundSource, cte_names

# Tells the analysis how a catalog table changes: "append" (rows only added), or "complete" / "update" /
# "overwritten" / "auto_cdc" (rows rewritten in place; "auto_cdc": updated and deleted by key by AUTO CDC); None
# when the table is unknown. Supplied by the runtime.
TableKindLookup = Callable[[str | None, str], str | None]

OUTPUT_MODE_KEY = "sluicegate.output_mode"
TRIGGER_KEY = "pipelines.trigger.interval"
TIME_WINDOWS = ("window", "session_window")


def function_name(node: exp.Expr) -> str:
    return (node.name if isinstance(node, exp.Anonymous) else node.sql_name()).lower() \
        if isinstance(node, exp.Func) else ""


def is_time_window(node: exp.Expr) -> bool:
    return isinstance(node, exp.Func) and function_name(node) in TIME_WINDOWS


def own_nodes(select: exp.Expr, kind: type[exp.Expr]) -> Iterator[exp.Expr]:
    """Nodes of `kind` belonging to this SELECT itself (not to a subquery nested in it)."""
    for node in select.find_all(kind):
        if node.find_ancestor(exp.Select) is select or node is select:
            yield node


def aggregates(select: exp.Select) -> list[exp.Expr]:
    return [a for a in own_nodes(select, exp.AggFunc) if a.find_ancestor(exp.Window) is None]


def is_aggregating(select: exp.Select) -> bool:
    return select.args.get("group") is not None or bool(aggregates(select))


def left_of(join: exp.Join) -> list[exp.Expr]:
    """The FROM items a join joins to: the FROM item and every join before it in its SELECT."""
    select = join.find_ancestor(exp.Select)
    if select is None or select.args.get("from_") is None:
        return []
    items = [select.args["from_"].this]
    for earlier in select.args.get("joins") or []:
        if earlier is join:
            break
        items.append(earlier.this)
    return items


@dataclass
class Context:
    sql: str
    tokens: list[Token]
    create: exp.Create
    query: exp.Query
    sources: list[FoundSource]
    properties: dict[str, str]
    property_values: dict[str, exp.Expr] = field(default_factory=dict)
    table_kind: TableKindLookup | None = None

    def error(self, kind: type[StreamingQueryError], message: str, node: exp.Expr | None, hint: str,
              keyword: tuple[str, ...] = ()) -> StreamingQueryError:
        line, column = position(self.sql, self.tokens, node, keyword)
        return kind(message, line=line, column=column, hint=hint)

    @cached_property
    def selects(self) -> list[exp.Select]:
        return list(self.query.find_all(exp.Select))

    @cached_property
    def ctes(self) -> dict[str, exp.Expr]:
        return {cte.alias_or_name.lower(): cte.this for cte in self.query.find_all(exp.CTE)}

    @cached_property
    def aggregation(self) -> exp.Select | None:
        """The SELECT that aggregates (the chained-aggregation rule leaves at most one per branch)."""
        return next((s for s in self.selects if is_aggregating(s)), None)

    @cached_property
    def distinct(self) -> exp.Select | None:
        return next((s for s in self.selects if s.args.get("distinct") is not None), None)

    @cached_property
    def watermark_columns(self) -> set[str]:
        return {s.watermark.args["column"].name.lower() for s in self.sources if s.watermark is not None}

    @cached_property
    def order(self) -> exp.Order | None:
        """The first ORDER BY that sorts rows (not one inside an OVER clause)."""
        return next((o for o in self.query.find_all(exp.Order) if o.find_ancestor(exp.Window) is None), None)

    @cached_property
    def requested_mode(self) -> str | None:
        mode = self.properties.get(OUTPUT_MODE_KEY)
        return mode.strip().lower() if mode is not None else None

    def is_streaming(self, node: exp.Expr | None, seen: frozenset[str] = frozenset()) -> bool:
        """Whether a FROM item (or a subtree) reads a stream, following CTE names."""
        if node is None:
            return False
        if isinstance(node, exp.Stream) or node.find(exp.Stream) is not None:
            return True
        names = cte_names(self.query)
        for table in ([node] if isinstance(node, exp.Table) else []) + list(node.find_all(exp.Table)):
            name = table.name.lower()
            if (not table.db and name in names and name not in seen and name in self.ctes
                    and self.is_streaming(self.ctes[name], seen | {name})):
                return True
        return False

    def has_watermark(self, node: exp.Expr) -> bool:
        if isinstance(node, Watermark) or node.find(Watermark) is not None:
            return True
        for table in ([node] if isinstance(node, exp.Table) else []) + list(node.find_all(exp.Table)):
            body = self.ctes.get(table.name.lower()) if not table.db else None
            if body is not None and body.find(Watermark) is not None:
                return True
        return False
