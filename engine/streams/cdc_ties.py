"""An AUTO CDC event's tie, written on the driver: its kept values as JSON, exactly the text Spark's
`to_json(struct(...))` gives them (engine/streams/cdc_sink.py ranks events of an equal sequence by it, and keeps it in
the state). Spark computing it for every event of a batch was a third of SCD 1's batch job (issue 29); Arrow writes it
in a few milliseconds, for the types whose text is plain to reproduce: integers, booleans and strings (Jackson's
escapes: `\\"`, `\\\\`, `\\b \\t \\n \\f \\r`, `\\u00XX` for the other control characters, nothing else). A NULL
value's field is left out, as Spark does while `spark.sql.jsonGenerator.ignoreNullFields` holds (its default).
Other types (dates, timestamps, decimals, floating point, binary, nested) keep Spark's to_json.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

IGNORE_NULL_FIELDS = "spark.sql.jsonGenerator.ignoreNullFields"
# Jackson's short escapes; every other character below 0x20 is written \u00XX (upper-case hex)
_SHORT_ESCAPES = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def ties_on_driver(types: Sequence[Any], ignore_null_fields: str) -> bool:
    """Whether `json_ties` writes the JSON of values of these Spark `types` exactly as to_json would, under the
    session's `spark.sql.jsonGenerator.ignoreNullFields` setting."""
    from pyspark.sql.types import BooleanType, ByteType, IntegerType, LongType, ShortType, StringType

    plain = (BooleanType, ByteType, ShortType, IntegerType, LongType, StringType)
    return ignore_null_fields.strip().lower() == "true" and all(isinstance(t, plain) for t in types)


def json_ties(rows: pa.Table, columns: Sequence[str]) -> pa.Array | pa.ChunkedArray:
    """`to_json(struct(columns))` of each row of `rows` (the columns of types `ties_on_driver` accepts)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    texts: list[tuple[str, Any, str]] = []   # each field: what comes before its value's text, the text, what after
    for name in columns:
        values = rows.column(name)
        label = _escaped(pa.array([name], pa.string()))[0].as_py()
        if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
            texts.append((f'"{label}":"', _escaped(values.cast(pa.string())), '"'))
        else:   # integers and booleans: Arrow writes them as Jackson does (-5, 1099511627776, true)
            texts.append((f'"{label}":', values.cast(pa.string()), ""))
    if not texts:
        return pa.array(["{}"] * rows.num_rows, pa.string())
    if not any(rows.column(name).null_count for name in columns):
        # every field present: one concatenation of the values and the text between them
        pieces: list[Any] = []
        literal = "{"
        for number, (label, values, closing) in enumerate(texts):
            pieces += [literal + ("," if number else "") + label, values]
            literal = closing
        return pc.binary_join_element_wise(*pieces, literal + "}", "")
    # a field per value, NULL where the value is (its field is left out), each after a comma: the first one dropped
    fields = [pc.binary_join_element_wise("," + label, values, closing, "") for label, values, closing in texts]
    joined = pc.binary_join_element_wise(*fields, "", null_handling="replace", null_replacement="")
    return pc.binary_join_element_wise("{", pc.utf8_slice_codeunits(joined, 1), "}", "")


def _escaped(values: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Strings escaped as Jackson escapes them inside a JSON string literal; untouched when no byte needs it (UTF-8
    writes every character from 0x80 on in bytes from 0x80 on, so a byte below 0x20, `"` or `\\` is that
    character)."""
    import pyarrow.compute as pc

    found = _bytes_present(values)
    if not found:
        return values
    if found & {ord("\\"), ord('"')}:
        values = pc.replace_substring(pc.replace_substring(values, "\\", "\\\\"), '"', '\\"')
    for code in sorted(c for c in found if c < 0x20):
        character = chr(code)
        values = pc.replace_substring(values, character, _SHORT_ESCAPES.get(character, f"\\u{code:04X}"))
    return values


def _bytes_present(values: pa.Array | pa.ChunkedArray) -> set[int]:
    """Which bytes that need escaping the strings' data holds (a superset: a sliced array's whole buffer)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    found: set[int] = set()
    quoting = pa.array([ord('"'), ord("\\")], pa.uint8())
    for chunk in chunks:
        data = chunk.buffers()[2]
        if data is None:
            continue
        raw = pa.Array.from_buffers(pa.uint8(), data.size, [None, data])
        special = pc.or_(pc.less(raw, pa.scalar(0x20, pa.uint8())), pc.is_in(raw, value_set=quoting))
        found.update(pc.unique(raw.filter(special)).to_pylist())
    return found
