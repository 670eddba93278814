"""The StreamingSpark dialect: Databricks SQL as sqlglot reads it (which already knows `CREATE STREAMING TABLE`,
`STREAM t` and `VERSION AS OF`), the base every statement of the gateway is parsed with."""

from __future__ import annotations

from sqlglot.dialects.databricks import Databricks


class StreamingSpark(Databricks):
    """Registered with sqlglot as `streamingspark`. Grows the streaming grammar (WATERMARK, window()) later."""

    class Tokenizer(Databricks.Tokenizer):
        pass

    class Parser(Databricks.Parser):
        pass

    class Generator(Databricks.Generator):
        pass
