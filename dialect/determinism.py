"""Whether a query's text computes the same rows every time it reads the same data: what the exact result cache
(engine/result_cache.py, executor/result_cache.py) asks before it keeps or serves an answer.

An allow-list, not a deny-list: every function the query (or a view it reads) calls must be one known to depend on its
arguments alone. A function sqlglot does not type (`exp.Anonymous`) counts only if its name is listed below; anything
else, a UDF, a function of a newer Spark, `rand()`, `now()`, `current_user()`, `uuid()`, `input_file_name()`,
`monotonically_increasing_id()`, `first()` (order-dependent, Spark marks it non-deterministic), `collect_list()`,
makes the query uncacheable. So do the clauses that read something other than the tables' rows or read them at random
(TABLESAMPLE, STREAM, parameters) and table functions in FROM (`range()`, `read_files()`, `event_log()`: not Delta
tables at a version). `current_database()` and `current_catalog()` are allowed: the cache keys by both.
"""

from __future__ import annotations

from sqlglot import exp

# sqlglot's typed functions whose value depends on their arguments alone (Spark's meaning of each).
DETERMINISTIC_FUNCTIONS: frozenset[type[exp.Func]] = frozenset({
    # aggregates (order-independent)
    exp.Avg, exp.Count, exp.CountIf, exp.Max, exp.Min, exp.Sum, exp.Stddev, exp.StddevPop, exp.StddevSamp,
    exp.Variance, exp.VariancePop, exp.Corr, exp.CovarPop, exp.CovarSamp, exp.Kurtosis, exp.Skewness,
    exp.LogicalAnd, exp.LogicalOr, exp.ArgMax, exp.ArgMin, exp.Median, exp.PercentileCont, exp.PercentileDisc,
    exp.Grouping, exp.GroupingId, exp.BitwiseAndAgg, exp.BitwiseOrAgg, exp.BitwiseXorAgg,
    # window functions (over an ORDER BY the query gives)
    exp.RowNumber, exp.Rank, exp.DenseRank, exp.PercentRank, exp.CumeDist, exp.Ntile, exp.Lag, exp.Lead,
    exp.FirstValue, exp.LastValue, exp.NthValue,
    # conditionals and casts
    exp.Case, exp.If, exp.Coalesce, exp.Nullif, exp.Nvl2, exp.Greatest, exp.Least, exp.Cast, exp.TryCast,
    exp.Try, exp.EqualNull, exp.Exists, exp.Decode, exp.DecodeCase,
    # numbers
    exp.Abs, exp.Ceil, exp.Floor, exp.Round, exp.Sign, exp.Sqrt, exp.Cbrt, exp.Exp, exp.Ln, exp.Log, exp.Pow,
    exp.Pi, exp.Degrees, exp.Radians, exp.Sin, exp.Cos, exp.Tan, exp.Asin, exp.Acos, exp.Atan, exp.Atan2,
    exp.Sinh, exp.Cosh, exp.Tanh, exp.Cot, exp.Factorial, exp.Rint, exp.IsNan, exp.IsInf, exp.Nanvl,
    exp.WidthBucket, exp.SafeDivide, exp.Negative,
    # strings and bytes
    exp.Concat, exp.ConcatWs, exp.Substring, exp.SubstringIndex, exp.Upper, exp.Lower, exp.Initcap, exp.Trim,
    exp.Length, exp.BitLength, exp.ByteLength, exp.Left, exp.Right, exp.Pad, exp.Repeat, exp.Replace,
    exp.Reverse, exp.Translate, exp.StrPosition, exp.Split, exp.SplitPart, exp.RegexpExtract,
    exp.RegexpExtractAll, exp.RegexpReplace, exp.RegexpLike, exp.RegexpILike, exp.RegexpSplit, exp.StartsWith,
    exp.EndsWith, exp.Contains, exp.Ascii, exp.Chr, exp.Hex, exp.Unhex, exp.MD5, exp.MD5Digest, exp.SHA,
    exp.SHA2, exp.ToBase64, exp.FromBase64, exp.Format, exp.NumberToStr, exp.Levenshtein, exp.Soundex,
    exp.Space, exp.Overlay, exp.Encode,
    # dates and times (of a value the query gives: now() and its kin are not here)
    exp.Year, exp.Quarter, exp.Month, exp.Week, exp.WeekOfYear, exp.Day, exp.DayOfMonth, exp.DayOfWeek,
    exp.DayOfWeekIso, exp.DayOfYear, exp.Hour, exp.Minute, exp.Second, exp.Extract, exp.DateAdd, exp.DateSub,
    exp.DateDiff, exp.DateTrunc, exp.TimestampTrunc, exp.AddMonths, exp.MonthsBetween, exp.LastDay,
    exp.NextDay, exp.TsOrDsAdd, exp.TsOrDsDiff, exp.TsOrDsToDate, exp.TsOrDsToTimestamp, exp.StrToDate,
    exp.StrToTime, exp.TimeStrToTime, exp.TimeStrToDate, exp.TimeToStr, exp.UnixToStr, exp.UnixToTime,
    exp.UnixToTimeStr, exp.TimeToUnix, exp.DateFromParts, exp.TimestampFromParts, exp.MakeInterval,
    exp.DateFromUnixDate, exp.UnixDate, exp.UnixSeconds, exp.UnixMillis, exp.UnixMicros, exp.Dayname,
    exp.Monthname, exp.TimestampAdd, exp.TimestampDiff, exp.TimestampSub,
    # arrays, maps, structs and JSON
    exp.Array, exp.ArrayContains, exp.ArraySize, exp.ArrayDistinct, exp.ArrayExcept, exp.ArrayIntersect,
    exp.ArrayUnionAgg, exp.ArrayConcat, exp.ArraySort, exp.ArrayFilter, exp.ArrayPosition, exp.ArrayRemove,
    exp.ArrayMax, exp.ArrayMin, exp.ArraySlice, exp.ArrayToString, exp.ArraysZip, exp.Flatten, exp.Map,
    exp.VarMap, exp.MapKeys, exp.MapFromEntries, exp.MapContainsKey, exp.Struct, exp.StructExtract,
    exp.Explode, exp.Posexplode, exp.PosexplodeOuter, exp._ExplodeOuter, exp.Inline, exp.Transform,
    exp.ParseJSON, exp.JSONExtract, exp.JSONExtractScalar, exp.JSONFormat, exp.JSONObject, exp.JSONArray,
    exp.FromJson,
    # what the cache keys by: the session's current database and the gateway's catalog name
    exp.CurrentDatabase, exp.CurrentSchema, exp.CurrentCatalog,
})

# Spark functions sqlglot leaves untyped (`exp.Anonymous`), by lower-case name, that depend on their arguments alone.
DETERMINISTIC_NAMES: frozenset[str] = frozenset({
    "bround", "pmod", "mod", "div", "positive", "negative", "signum", "ceiling", "log10", "log2", "log1p", "expm1",
    "power", "hypot", "e", "bin", "conv", "shiftleft", "shiftright", "shiftrightunsigned", "bit_count", "bit_get",
    "hash", "xxhash64", "crc32", "sha1", "base64", "unbase64", "isnull", "isnotnull", "nvl", "ifnull",
    "char_length", "character_length", "ltrim", "rtrim", "btrim", "lcase", "ucase", "instr", "locate", "position",
    "lpad", "rpad", "elt", "format_number", "format_string", "printf", "concat", "named_struct", "struct",
    "element_at", "size", "cardinality", "sort_array", "array_join", "array_repeat", "sequence", "slice",
    "map_values", "map_entries", "map_concat", "str_to_map", "get_json_object", "json_tuple", "to_json",
    "json_array_length", "schema_of_json", "date_part", "datepart", "trunc", "make_date", "make_timestamp",
    "to_timestamp", "to_date", "date_format", "from_utc_timestamp", "to_utc_timestamp", "weekday", "dayofweek",
    "dayofmonth", "dayofyear", "timestamp_seconds", "timestamp_millis", "timestamp_micros", "date_from_unix_date",
    "unix_date", "any", "some", "every", "bool_and", "bool_or", "max_by", "min_by", "count_if", "std",
    "percentile", "regr_count", "regr_avgx", "regr_avgy", "regr_slope", "regr_intercept", "regr_r2",
    "try_add", "try_subtract", "try_multiply", "try_divide", "try_sum", "try_avg", "try_element_at", "typeof",
    "ascii", "char", "decode", "encode", "left", "right", "split_part", "substr", "substring", "replace",
    "translate", "nullifzero", "zeroifnull", "equal_null", "array_contains", "array_position", "array_remove",
    "array_union", "arrays_overlap", "array_compact", "array_append", "array_prepend", "array_insert",
    "exists", "forall", "filter", "aggregate", "reduce", "zip_with", "map_filter", "transform_keys",
    "transform_values", "width_bucket", "nanvl", "isnan", "stack", "explode_outer", "inline_outer",
    "grouping", "grouping_id", "cast", "try_cast", "if", "iff", "nvl2", "coalesce",
})

# Functions that read the clock, the session or the file a row came from unless given an argument: deterministic only
# with one (`unix_timestamp(d)` is a conversion, `unix_timestamp()` is the time now).
NEEDS_AN_ARGUMENT: frozenset[type[exp.Func]] = frozenset({exp.StrToUnix, exp.TimeStrToUnix})

# Clauses that read something other than the tables' rows (`(DESCRIBE HISTORY t)`: the log, whose versions no
# reference pins), or read them at random.
NOT_CACHEABLE_CLAUSES: tuple[type[exp.Expr], ...] = (exp.TableSample, exp.Stream, exp.Placeholder, exp.Parameter,
                                                     exp.SessionParameter, exp.Command, exp.Into, exp.Describe)


def nondeterminism(tree: exp.Expr) -> str | None:
    """Why the query in `tree` may compute other rows from the same data (the first reason found, as the query
    writes it: `rand()`, `TABLESAMPLE` ...), or None when every function and clause in it is deterministic."""
    for node in tree.walk():
        if isinstance(node, NOT_CACHEABLE_CLAUSES):
            return node.key.upper()
        if isinstance(node, exp.Table) and not isinstance(node.this, exp.Identifier):
            return f"the table function {_name(node.this)}"
        if not isinstance(node, exp.Func):
            continue
        if isinstance(node, exp.Anonymous):
            if node.name.lower() not in DETERMINISTIC_NAMES:
                return _name(node)
        elif type(node) in NEEDS_AN_ARGUMENT:
            if node.this is None:
                return _name(node)
        elif type(node) not in DETERMINISTIC_FUNCTIONS and not _operator(node):
            return _name(node)
    return None


def _operator(node: exp.Func) -> bool:
    """sqlglot models a few operators as functions (AND, OR, XOR are `exp.Func` too): those are deterministic."""
    return isinstance(node, (exp.Connector, exp.Binary, exp.Unary))


def _name(node: exp.Expr | None) -> str:
    if isinstance(node, exp.Anonymous):
        return f"{node.name.lower()}()"
    if isinstance(node, exp.Func):
        return f"{node.sql_name().lower()}()"
    return type(node).__name__.lower() if node is not None else "?"
