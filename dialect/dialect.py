"""The StreamingSpark dialect: Databricks SQL as sqlglot reads it (which already knows `CREATE STREAMING TABLE`,
`STREAM t` and `VERSION AS OF`), plus Databricks' `WATERMARK col DELAY OF INTERVAL ...` clause in FROM and
`window(...)` as a GROUP BY key, the base every statement of the gateway is parsed with."""

from __future__ import annotations

import typing as t

from sqlglot import exp
from sqlglot.dialects.databricks import Databricks
from sqlglot.tokens import TokenType

from dialect.streaming.grammar import Watermark, watermark_sql


class StreamingSpark(Databricks):
    """Registered with sqlglot as `streamingspark`."""

    class Tokenizer(Databricks.Tokenizer):
        pass

    class Parser(Databricks.Parser):
        def _match_set(self, types: t.Collection[TokenType], advance: bool = True) -> bool:
            # GROUP BY stops at query-modifier keywords, WINDOW among them; `window(` is the time-window function.
            if (types is self.QUERY_MODIFIER_TOKENS and self._curr is not None
                    and self._curr.token_type == TokenType.WINDOW
                    and self._next is not None and self._next.token_type == TokenType.L_PAREN):
                return False
            return super()._match_set(types, advance)

        def _parse_table_alias(self, alias_tokens: t.Collection[TokenType] | None = None) -> exp.TableAlias | None:
            # `STREAM t WATERMARK ts ...`: WATERMARK starts the clause, it is not the alias of t.
            if self._curr is not None and self._curr.text.upper() == "WATERMARK":
                return None
            return super()._parse_table_alias(alias_tokens=alias_tokens)

        def _parse_stream(self) -> exp.Expression | None:
            stream = super()._parse_stream()
            if stream is None or not self._match_text_seq("WATERMARK"):
                return stream
            column = self._parse_assignment()  # not _parse_expression: it would take DELAY as an alias
            name = self._parse_id_var(any_token=False) if self._match(TokenType.ALIAS) else None
            if not self._match_text_seq("DELAY", "OF"):
                self.raise_error("Expected DELAY OF INTERVAL ... after the WATERMARK column")
            delay = self._parse_interval()
            if delay is None:
                self.raise_error("Expected an INTERVAL after DELAY OF")
            alias = self._parse_table_alias()
            return self.expression(Watermark(this=stream, column=column, name=name, delay=delay, alias=alias))

    class Generator(Databricks.Generator):
        TRANSFORMS = {**Databricks.Generator.TRANSFORMS, Watermark: watermark_sql}
