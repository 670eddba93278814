"""Which materialized-view queries can be refreshed from their inputs' changes, and the SQL that does it.

A view refreshes incrementally when its query is one SELECT over catalog tables joined by inner joins, deterministic,
without subqueries, windows, DISTINCT, ORDER BY or LIMIT, and either
- a projection (select-project-join): the view is the multiset of the query's rows, changed by the rows the inputs'
  changes add and remove; or
- an aggregation at the top with GROUP BY keys that are select items (or no GROUP BY: one row) and aggregates
  count, sum, avg, min and max: the view keeps, per group, hidden state columns from which every aggregate is
  computed again (`__sg_mv_rows`, and per aggregate a sum or extreme and a count of non-null arguments), and a
  change is aggregated and merged into the groups it touches.
Anything else is recomputed in full, with Databricks' reason (`MATERIALIZED_VIEW_NOT_INCREMENTALIZABLE.<reason>`).

The change of a join is the sum, over the references in text order, of the query with the earlier references at
their new version, this reference's added (or removed) rows, and the later references at their old version; each
term is the user's own text with the references replaced (as the binder does) and, for an aggregation, the select
list replaced by the group keys and aggregate arguments and GROUP BY dropped. This module is pure: it builds text,
the runtime (executor/materialized_views/incremental.py) binds and runs it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.tokens import TokenType

from sluicegate.dialect.dialect import StreamingSpark
from sluicegate.dialect.parse import parse
from sluicegate.dialect.references import TableReference, splice, table_references

PREFIX = "__sg_mv_"
ROWS = f"{PREFIX}rows"                  # the number of input rows in a group (a group with none is gone)
SIGN = f"{PREFIX}sign"                  # +1 for a row a change added, -1 for one it removed

NONDETERMINISTIC = frozenset({
    "rand", "randn", "random", "uuid", "shuffle", "current_timestamp", "now", "current_date", "curdate",
    "localtimestamp", "unix_timestamp", "monotonically_increasing_id", "spark_partition_id", "input_file_name",
    "current_user", "session_user", "user", "try_reflect", "reflect", "java_method",
})
_AGGREGATES: dict[type[exp.Expr], str] = {exp.Count: "COUNT", exp.Sum: "SUM", exp.Avg: "AVG",
                                                exp.Min: "MIN", exp.Max: "MAX"}


def _sql(node: exp.Expr) -> str:
    return node.sql(dialect=StreamingSpark)


@dataclass(frozen=True)
class Aggregate:
    """One aggregate call of the select list and the hidden columns that keep it."""

    index: int
    function: str                       # COUNT_STAR, COUNT, SUM, AVG, MIN or MAX
    argument: str | None                # the argument as Spark SQL; None for count(*)

    @property
    def state(self) -> str:             # the count, the sum, or the extreme
        return f"{PREFIX}s{self.index}"

    @property
    def count(self) -> str | None:      # the count of non-null arguments, beside a sum (SUM, AVG)
        return f"{PREFIX}c{self.index}" if self.function in ("SUM", "AVG") else None

    @property
    def argument_column(self) -> str:   # the argument's column in a change's rows
        return f"{PREFIX}x{self.index}"

    def state_sql(self) -> list[str]:
        """The hidden columns of a full recompute: what a change is later added to."""
        if self.function == "COUNT_STAR":
            return [f"count(*) AS {self.state}"]
        if self.function == "COUNT":
            return [f"count({self.argument}) AS {self.state}"]
        if self.function in ("SUM", "AVG"):
            return [f"sum({self.argument}) AS {self.state}", f"count({self.argument}) AS {self.count}"]
        return [f"{self.function.lower()}({self.argument}) AS {self.state}"]


@dataclass(frozen=True)
class Incrementality:
    incremental: bool
    reason: str | None = None           # Databricks' reason code when not incrementalizable
    detail: str = ""                    # what in the query decided it
    references: tuple[TableReference, ...] = ()      # the tables read, in text order (a table may appear twice)
    aggregates: tuple[Aggregate, ...] = ()
    keys: tuple[int, ...] = ()          # for an aggregation: the select items that are its GROUP BY keys
    items: tuple[exp.Expr, ...] = field(default=(), compare=False)   # an aggregation's select items
    aggregation: bool = False


def _function_name(node: exp.Func) -> str:
    return (node.name if isinstance(node, exp.Anonymous) else node.sql_name()).lower()


def _no(reason: str, detail: str) -> Incrementality:
    return Incrementality(False, reason, detail)


def analyse(query_sql: str) -> Incrementality:
    """Whether the view of `query_sql` can be refreshed from its inputs' changes, and how (or why not)."""
    tree = parse(query_sql)
    if not isinstance(tree, exp.Select) or tree.args.get("with"):
        return _no("OPERATOR_NOT_INCREMENTALIZABLE", "the query is not one SELECT (a set operation, VALUES or WITH)")
    if tree.find(exp.Window) is not None:
        return _no("OPERATOR_NOT_INCREMENTALIZABLE", "a window function")
    if tree.args.get("distinct") or tree.args.get("limit") or tree.args.get("order"):
        return _no("OPERATOR_NOT_INCREMENTALIZABLE", "DISTINCT, LIMIT or ORDER BY")
    if tree.args.get("laterals") or tree.args.get("pivots"):
        return _no("OPERATOR_NOT_INCREMENTALIZABLE", "LATERAL VIEW or PIVOT")
    if any(isinstance(node, exp.Query) for node in tree.find_all(exp.Subquery, exp.Select) if node is not tree):
        return _no("SUBQUERY_EXPRESSION_NOT_INCREMENTALIZABLE", "a subquery")
    for function in tree.find_all(exp.Func):
        if _function_name(function) in NONDETERMINISTIC or isinstance(function, (exp.Rand, exp.Randn)):
            return _no("EXPRESSION_NOT_DETERMINISTIC", f"{_function_name(function)}() is not deterministic")
    for join in tree.args.get("joins") or ():
        kind = (join.args.get("kind") or "").upper()
        if join.args.get("side") or kind not in ("", "INNER", "CROSS") or join.args.get("method"):
            what = " ".join(p for p in (join.args.get("method"), join.args.get("side"), kind) if p) or "this"
            return _no("OPERATOR_NOT_INCREMENTALIZABLE", f"a {what} join (only inner joins are incremental)")
    tables = list(tree.find_all(exp.Table))
    refs = table_references(query_sql, tree)
    if not refs or len(tables) != len(refs) or any(r.version is not None or r.timestamp is not None for r in refs):
        return _no("INPUT_NOT_IN_DELTA", "the query reads a table function or time-travels")
    names = ", ".join(r.name for r in refs)
    if tree.find(exp.AggFunc) is None and not tree.args.get("group") and not tree.args.get("having"):
        what = f"a projection of {names}" if len(refs) == 1 else f"an inner join of {names}"
        return Incrementality(True, detail=what, references=tuple(refs))
    return _aggregation(tree, tuple(refs), names)


def _aggregation(tree: exp.Select, refs: tuple[TableReference, ...], names: str) -> Incrementality:
    if tree.args.get("having"):
        return _no("OPERATOR_NOT_INCREMENTALIZABLE", "HAVING (filter the view's rows in a query over it instead)")
    group = tree.args.get("group")
    if group is not None and any(group.args.get(k) for k in ("rollup", "cube", "grouping_sets", "totals")):
        return _no("OPERATOR_NOT_INCREMENTALIZABLE", "ROLLUP, CUBE or GROUPING SETS")
    items = list(tree.expressions)
    inner = [item.this if isinstance(item, exp.Alias) else item for item in items]
    keys: list[int] = []
    for expression in group.expressions if group is not None else []:
        found = _select_item_of(expression, items, inner)
        if found is None:
            return _no("OPERATOR_NOT_INCREMENTALIZABLE",
                       f"the GROUP BY key {_sql(expression)} is not in the select list (select it)")
        keys.append(found)
    aggregates: list[Aggregate] = []
    for position, expression in enumerate(inner):
        if position in keys:
            continue
        for call in expression.find_all(exp.AggFunc):
            aggregate = _aggregate(call, len(aggregates))
            if isinstance(aggregate, Incrementality):
                return aggregate
            aggregates.append(aggregate)
        if _outside_aggregates(expression, [inner[k] for k in keys]):
            return _no("OPERATOR_NOT_INCREMENTALIZABLE",
                       f"{_sql(expression)} reads a column that is neither a GROUP BY key nor inside an aggregate")
    if any(inner[k].find(exp.AggFunc) is not None for k in keys):
        return _no("OPERATOR_NOT_INCREMENTALIZABLE", "a GROUP BY key holds an aggregate")
    what = ", ".join(sorted({a.function.replace("_STAR", "(*)").lower() for a in aggregates}))
    over = refs[0].name if len(refs) == 1 else f"an inner join of {names}"
    detail = f"an aggregation ({what}) of {over}" + (f" by {len(keys)} key(s)" if keys else "")
    return Incrementality(True, detail=detail, references=refs, aggregates=tuple(aggregates), keys=tuple(keys),
                          items=tuple(items), aggregation=True)


def _select_item_of(key: exp.Expr, items: list[exp.Expr], inner: list[exp.Expr]) -> int | None:
    """The select item a GROUP BY expression names: by position (`GROUP BY 2`), the same expression, or an alias."""
    if isinstance(key, exp.Literal) and not key.is_string and key.name.isdigit():
        position = int(key.name) - 1
        return position if 0 <= position < len(items) else None
    for position, expression in enumerate(inner):
        if expression == key:
            return position
    if isinstance(key, exp.Column) and not key.table:
        for position, item in enumerate(items):
            if isinstance(item, exp.Alias) and item.alias.lower() == key.name.lower():
                return position
    return None


def _aggregate(call: exp.AggFunc, index: int) -> Aggregate | Incrementality:
    function = _AGGREGATES.get(type(call))
    if function is None:
        return _no("OPERATOR_NOT_INCREMENTALIZABLE", f"the aggregate {_function_name(call)}() is not one of count, "
                                                     "sum, avg, min and max")
    if isinstance(call.parent, exp.Filter) or call.find_ancestor(exp.AggFunc) is not None:
        return _no("OPERATOR_NOT_INCREMENTALIZABLE", f"{_sql(call)}: an aggregate with FILTER or inside another")
    argument = call.this
    if isinstance(argument, exp.Distinct) or call.args.get("expressions"):
        return _no("OPERATOR_NOT_INCREMENTALIZABLE", f"{_sql(call)}: DISTINCT or several arguments")
    if argument is None or argument.find(exp.AggFunc) is not None:
        return _no("OPERATOR_NOT_INCREMENTALIZABLE", f"{_sql(call)}: no argument, or an aggregate inside")
    if function == "COUNT" and (isinstance(argument, exp.Star) or
                                (isinstance(argument, exp.Literal) and argument.name.upper() != "NULL")):
        return Aggregate(index, "COUNT_STAR", None)
    return Aggregate(index, function, _sql(argument))


def _outside_aggregates(expression: exp.Expr, keys: list[exp.Expr]) -> bool:
    """Whether `expression` reads a column outside its aggregate calls that is not (inside) a GROUP BY key."""
    if any(expression == key for key in keys):
        return False
    if isinstance(expression, exp.AggFunc):
        return False
    if isinstance(expression, exp.Column):
        return True
    return any(_outside_aggregates(child, keys) for child in expression.iter_expressions())


# ------------------------------------------------------------------------------------------------ the SQL it runs

@dataclass(frozen=True)
class _Clauses:
    from_at: int            # where the top-level FROM starts
    group_at: int | None    # where the top-level GROUP BY starts


def _clauses(sql: str) -> _Clauses:
    """The offsets of the top-level FROM and GROUP BY of a SELECT (parentheses skipped: EXTRACT(x FROM y))."""
    depth, from_at, group_at = 0, None, None
    for token in StreamingSpark().tokenize(sql):
        if token.token_type == TokenType.L_PAREN:
            depth += 1
        elif token.token_type == TokenType.R_PAREN:
            depth -= 1
        elif depth == 0 and token.token_type == TokenType.FROM and from_at is None:
            from_at = token.start
        elif depth == 0 and token.token_type == TokenType.GROUP_BY:
            group_at = token.start
    if from_at is None:
        raise ValueError("the query has no FROM")
    return _Clauses(from_at, group_at)


def state_query(query_sql: str, found: Incrementality) -> str:
    """The view's query as the user wrote it with the hidden state columns appended to its select list: what a
    full recompute of an incremental aggregation writes."""
    if not found.aggregation:
        return query_sql
    states = [f"count(*) AS {ROWS}"] + [column for aggregate in found.aggregates for column in aggregate.state_sql()]
    at = _clauses(query_sql).from_at
    return f"{query_sql[:at].rstrip()}, {', '.join(states)}\n{query_sql[at:]}"


def key_column(position: int) -> str:
    return f"{PREFIX}k{position}"


def term_query(query_sql: str, found: Incrementality, replacements: list[tuple[TableReference, str]]) -> str:
    """One term of the change: the query with its references replaced by views (new, changed or old rows). For a
    projection, the query's own rows; for an aggregation, the group keys (`__sg_mv_k<i>`) and the aggregate
    arguments (`__sg_mv_x<i>`) of each row, before grouping."""
    spliced = splice(query_sql, replacements).sql
    if not found.aggregation:
        return spliced
    columns = [f"{_sql(_unaliased(found.items[k]))} AS {key_column(k)}" for k in found.keys]
    columns += [f"{a.argument} AS {a.argument_column}" for a in found.aggregates if a.argument is not None]
    clauses = _clauses(spliced)
    end = clauses.group_at if clauses.group_at is not None else len(spliced)
    return f"SELECT {', '.join(columns) or '1 AS ' + PREFIX + 'one'}\n{spliced[clauses.from_at:end]}"


def visible_expression(found: Incrementality, position: int, key_columns: dict[int, str],
                       avg_types: dict[int, str]) -> str:
    """Select item `position` computed from a group's keys (`key_columns`: item -> column) and its state columns:
    each aggregate call replaced by the value its state gives (`avg_types`: the SQL type of each avg), each GROUP BY
    key outside them by its column."""
    if position in key_columns:
        return _quoted(key_columns[position])
    item = found.items[position]
    expression = (item.this if isinstance(item, exp.Alias) else item).copy()
    keys = {k: _unaliased(found.items[k]) for k in found.keys}
    # analyse met this item's calls in find_all's order, after those of the items before it
    first = sum(len(list(_unaliased(found.items[p]).find_all(exp.AggFunc)))
                for p in range(position) if p not in found.keys)
    calls = list(expression.find_all(exp.AggFunc))
    states = {id(call): _from_state(found.aggregates[first + i], avg_types) for i, call in enumerate(calls)}

    def substitute(node: exp.Expr) -> exp.Expr:
        if id(node) in states:
            return parse_expression(states[id(node)])
        for k, key in keys.items():
            if node == key:
                return exp.column(key_columns[k], quoted=True)
        return node

    return _sql(expression.transform(substitute, copy=False))


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _unaliased(item: exp.Expr) -> exp.Expr:
    return item.this if isinstance(item, exp.Alias) else item


def _from_state(aggregate: Aggregate, avg_types: dict[int, str]) -> str:
    if aggregate.function == "AVG":
        kind = avg_types[aggregate.index]
        divisor = "CAST({c} AS DECIMAL(20,0))" if kind.startswith("decimal") else "CAST({c} AS DOUBLE)"
        dividend = "{s}" if kind.startswith("decimal") else "CAST({s} AS DOUBLE)"
        text = f"CASE WHEN {{c}} = 0 THEN NULL ELSE CAST({dividend} / {divisor} AS {kind}) END"
        return text.format(s=aggregate.state, c=aggregate.count)
    return aggregate.state


def parse_expression(text: str) -> exp.Expr:
    return parse(f"SELECT {text}").expressions[0]


# ------------------------------------------------------------------------------------------------ applying a change

# A column of merge_query's rows: true where a row the change removed may have been the group's min/max and no added
# row replaces it. Only a recompute knows the next extreme, so a refresh that finds it true writes none of the rows.
EXTREME_LOST = f"{PREFIX}extreme_lost"
_OLD = f"{PREFIX}old_"


def change_query(terms: list[tuple[int, str]]) -> str:
    """The change's rows in one query: each term's rows (`term_query`) with its sign (+1 added, -1 removed)."""
    return "\nUNION ALL\n".join(f"SELECT *, {sign} AS {SIGN} FROM (\n{text}\n) AS {PREFIX}term{i}"
                                for i, (sign, text) in enumerate(terms))


def merge_query(found: Incrementality, change: str, old: str, columns: list[str], hidden: list[str],
                types: dict[str, str], avg_types: dict[int, str], one_task: bool = False) -> str:
    """The view's new rows, in one aggregation (one shuffle; none with `one_task`, where little is read: the rows
    are coalesced into one partition, after which the aggregation needs no exchange): the view's current rows (the
    view `old`: every column, the hidden state too) stacked with the change's rows (`change`: a quoted view name or
    a parenthesised query, with `change_query`'s columns) and grouped by the keys, each group's state being its old
    one plus what the change added minus what it removed. A group left with no row goes; a group whose min/max row
    a change removed (and no added row replaces) is marked in the last column, EXTREME_LOST. `types`: each column's
    SQL type; `avg_types`: each avg's, as `visible_expression`."""
    keys = [key_column(k) for k in found.keys]
    old_state = [ROWS] + [c for a in found.aggregates for c in (a.state, a.count) if c is not None]
    arguments = [a.argument_column for a in found.aggregates if a.argument is not None]
    old_side = ([f"{_quoted(columns[k])} AS {_quoted(key_column(k))}" for k in found.keys]
                + [f"{_quoted(c)} AS {_quoted(_OLD + c)}" for c in old_state]
                + [f"NULL AS {_quoted(x)}" for x in arguments] + [f"NULL AS {SIGN}"])
    change_side = ([_quoted(k) for k in keys] + [f"NULL AS {_quoted(_OLD + c)}" for c in old_state]
                   + [_quoted(x) for x in arguments] + [SIGN])
    stacked = (f"SELECT {_list(old_side)} FROM {_quoted(old)}\nUNION ALL\n"
               f"SELECT {_list(change_side)} FROM {change} AS {PREFIX}change")
    coalesced = f"SELECT /*+ COALESCE(1) */ * FROM (\n{stacked}\n) AS {PREFIX}rows" if one_task else stacked
    grouped = [_quoted(k) for k in keys] + [f"max({_quoted(_OLD + c)}) AS {_quoted(_OLD + c)}" for c in old_state]
    grouped += [f"sum({SIGN}) AS {PREFIX}d_rows"] + [d for a in found.aggregates for d in _change_of(a)]
    by = f" GROUP BY {_list([_quoted(k) for k in keys])}" if keys else ""
    remaining = f"coalesce({_quoted(_OLD + ROWS)}, 0) + coalesce({PREFIX}d_rows, 0)"
    keep = [f"{remaining} > 0"] if keys else []
    extremes = [_extreme_removed(a) for a in found.aggregates if a.function in ("MIN", "MAX")]
    # a group the change empties needs no extreme
    lost = f"coalesce(({' OR '.join(extremes)}) AND {remaining} > 0, FALSE)" if extremes else "FALSE"
    state = [f"{remaining} AS {_quoted(ROWS)}"] + [s for a in found.aggregates for s in _state_of(a, types)]
    state.append(f"{lost} AS {EXTREME_LOST}")
    key_columns = {k: key_column(k) for k in found.keys}
    visible = [f"CAST(({visible_expression(found, p, key_columns, avg_types)}) AS {types[c]}) AS {_quoted(c)}"
               for p, c in enumerate(columns)]
    visible += [f"CAST({_quoted(c)} AS {types[c]}) AS {_quoted(c)}" for c in hidden] + [EXTREME_LOST]
    where = f"\nWHERE {' AND '.join(keep)}" if keep else ""
    return (f"SELECT {_list(visible)} FROM (\nSELECT {_list([_quoted(k) for k in keys] + state)} FROM (\n"
            f"SELECT {_list(grouped)} FROM (\n{coalesced}\n) AS {PREFIX}stacked{by}\n) AS {PREFIX}merged{where}\n"
            f") AS {PREFIX}groups")


def _list(items: list[str]) -> str:
    return ", ".join(items)


def _change_of(a: Aggregate) -> list[str]:
    """What the change adds to and removes from one aggregate (in a group): its `d_` columns."""
    x, index = _quoted(a.argument_column), a.index
    counted = f"sum(CASE WHEN {x} IS NOT NULL THEN {SIGN} ELSE 0 END)"
    if a.function == "COUNT_STAR":
        return [f"sum({SIGN}) AS {PREFIX}d_s{index}"]
    if a.function == "COUNT":
        return [f"{counted} AS {PREFIX}d_s{index}"]
    extreme = {"SUM": "sum", "AVG": "sum", "MIN": "min", "MAX": "max"}[a.function]
    columns = [f"{extreme}(CASE WHEN {SIGN} > 0 THEN {x} END) AS {PREFIX}d_p{index}",
               f"{extreme}(CASE WHEN {SIGN} < 0 THEN {x} END) AS {PREFIX}d_n{index}"]
    return columns + ([f"{counted} AS {PREFIX}d_c{index}"] if a.function in ("SUM", "AVG") else [])


def _state_of(a: Aggregate, types: dict[str, str]) -> list[str]:
    """An aggregate's state columns after the change: old plus added minus removed."""
    old = _quoted(_OLD + a.state)
    if a.function in ("COUNT_STAR", "COUNT"):
        return [f"coalesce({old}, 0) + coalesce({PREFIX}d_s{a.index}, 0) AS {_quoted(a.state)}"]
    if a.function in ("SUM", "AVG"):
        count = f"coalesce({_quoted(_OLD + (a.count or ''))}, 0) + coalesce({PREFIX}d_c{a.index}, 0)"
        total = (f"CAST(coalesce({old}, 0) + coalesce({PREFIX}d_p{a.index}, 0) - coalesce({PREFIX}d_n{a.index}, 0)"
                 f" AS {types[a.state]})")
        return [f"CASE WHEN {count} = 0 THEN NULL ELSE {total} END AS {_quoted(a.state)}",
                f"{count} AS {_quoted(a.count or '')}"]
    merge = "least" if a.function == "MIN" else "greatest"
    return [f"{merge}({old}, {PREFIX}d_p{a.index}) AS {_quoted(a.state)}"]


def _extreme_removed(a: Aggregate) -> str:
    """Whether a row the change removed may have been the group's min (max) and no added row reaches it: then only
    a recompute knows the next one. (An added row at or beyond the old extreme is the new one.)"""
    removed, added, current = f"{PREFIX}d_n{a.index}", f"{PREFIX}d_p{a.index}", _quoted(_OLD + a.state)
    compare = "<=" if a.function == "MIN" else ">="
    return (f"({removed} IS NOT NULL AND ({current} IS NULL OR ({removed} {compare} {current} AND "
            f"({added} IS NULL OR NOT ({added} {compare} {current})))))")
