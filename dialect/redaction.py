"""What of a statement's text may be kept where others can read it (the query history, the statement log, the live
queries): literals replaced by `?` by default, and the values of secret options (passwords, tokens, keys,
`kafka.sasl.jaas.config`, AWS keys) replaced by `'***'` always, even when the operator keeps the text whole.

The text is read as sqlglot's tokens, not parsed: every literal token (quoted strings of every kind, numbers) becomes
`?`, whatever the spacing, so `WHERE name = 'alice'` becomes `WHERE name = ?`; an option's name (`'delta.appendOnly'`
in TBLPROPERTIES) is a name, not data, and stays. The rest is written back as the statement had it, normalised as
sqlglot writes a statement: keywords and function names in upper case, each run of spaces, line breaks and comments
(which may hold anything) as one space. A pass over the tokens costs a fraction of a parse, and the query history
redacts every statement a client sends (on its writer thread, where a parse held the interpreter's lock from the
statements being served).

Text that does not parse (or that sqlglot keeps as an opaque command), and text it cannot even tokenize (an
unterminated quote), are kept only as a short prefix with every quoted string and number replaced, since nothing can
tell their secrets from the rest. Whether a text parses is the caller's to say when it knows (the statement was
classified as it ran); else it is parsed here to find out. Pure: no Spark, no catalog.
"""

from __future__ import annotations

import re
import threading

import sqlglot
from sqlglot import exp
from sqlglot.tokens import Token, Tokenizer, TokenType

from sluicegate.dialect.dialect import StreamingSpark

PLACEHOLDER = "?"
MASK = "'***'"
PREFIX_CHARS = 200     # how much of a text that does not parse is kept
_DIALECT = StreamingSpark()
_TOKENIZERS = threading.local()
_LITERALS = frozenset({TokenType.STRING, TokenType.NUMBER, TokenType.NATIONAL_STRING, TokenType.RAW_STRING,
                       TokenType.HEX_STRING, TokenType.BIT_STRING, TokenType.BYTE_STRING, TokenType.HEREDOC_STRING,
                       TokenType.UNICODE_STRING, TokenType.NATIONAL_RAW_STRING})
_KEY_PARTS = frozenset({TokenType.VAR, TokenType.IDENTIFIER, TokenType.STRING}) | frozenset(
    kind for kind in TokenType if kind not in _LITERALS and kind.name.isalpha())   # keywords may name keys
_OPTION_LISTS = frozenset({"OPTIONS", "TBLPROPERTIES", "DBPROPERTIES", "PROPERTIES", "SERDEPROPERTIES"})
_AFTER_OPTION_NAME = frozenset({TokenType.EQ, TokenType.COMMA, TokenType.R_PAREN}) | _LITERALS
_NO_SPACE_BEFORE = frozenset({TokenType.COMMA, TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.DOT})
_NO_SPACE_AFTER = frozenset({TokenType.L_PAREN, TokenType.L_BRACKET, TokenType.DOT})
# a name followed by `(` that is not a call: the table or view a column list belongs to (CREATE TABLE t(...)),
# an alias's column names (AS t(a, b)), a qualified name's last part
_NAMED_BY = frozenset({TokenType.TABLE, TokenType.VIEW, TokenType.INTO, TokenType.ALIAS, TokenType.DOT})
# an option key names a secret when one of its dot/underscore-separated words is one of these (or it is one of the
# whole keys below): `password`, `kafka.sasl.password`, `fs.s3a.secret.key`, `aws_access_key_id`, `token` ...
_SECRET_WORDS = frozenset({"password", "passwd", "pwd", "secret", "token", "key", "credential", "credentials",
                           "jaas", "passphrase", "signature", "sas", "apikey", "accesskey", "secretkey"})
_SECRET_KEYS = frozenset({"kafka.sasl.jaas.config", "sasl.jaas.config", "authorization"})
# `key = 'value'`, `key => 'value'`, `'key' = 'value'`, `SET key=value`; then `key 'value'` (OPTIONS pairs)
_KEY = r"""(?P<key>[`'"]?[A-Za-z_][\w.\-]*[`'"]?)"""
_QUOTED_VALUE = r"""'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.)*["]"""
_ASSIGNMENT = re.compile(_KEY + r"(?P<sep>\s*=>\s*|\s*=\s*)(?P<value>" + _QUOTED_VALUE + r"|[^\s,;)]+)")
_PAIR = re.compile(_KEY + r"(?P<sep>\s+)(?P<value>" + _QUOTED_VALUE + r")")
_QUOTED = re.compile(r"""'(?:[^'\\]|\\.|'')*'?|"(?:[^"\\]|\\.)*"?""")
_NUMBER = re.compile(r"(?<![\w.`])[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?[LSYDBF]?(?![\w`])", re.IGNORECASE)


def is_secret_key(key: str) -> bool:
    """Whether an option, property or setting named `key` holds a secret."""
    name = key.strip("`'\" ").lower()
    if name in _SECRET_KEYS:
        return True
    words = [w for w in re.split(r"[._\-]", name) if w]
    return any(word in _SECRET_WORDS for word in words) or name.endswith(("password", "secret", "token"))


def redact_statement(sql: str, *, keep_literals: bool = False, parsed: bool | None = None) -> str:
    """`sql` as it may be stored: literals replaced by `?` unless `keep_literals`; secrets masked always. `parsed`:
    whether sqlglot parses the text into a statement (not an opaque command), when the caller knows; None: found
    out here, with a parse."""
    text = sql.strip().rstrip(";").strip()
    if not text:
        return ""
    if parsed is None:
        parsed = _parses(text)
    if not parsed:
        return redacted_prefix(text)
    try:
        tokens = _tokenizer().tokenize(text)
    except Exception:  # noqa: BLE001 - sqlglot's TokenError, and bugs on odd input: kept as a prefix
        return redacted_prefix(text)
    if not tokens or tokens[0].token_type in StreamingSpark.tokenizer_class.COMMANDS:
        return redacted_prefix(text)   # the rest of an opaque command is one token: nothing tells its parts apart
    return mask_secret_assignments(_written(text, tokens, keep_literals))


def _tokenizer() -> Tokenizer:
    """This thread's tokenizer (one resets itself for each text; building one costs as much as a short text)."""
    found: Tokenizer | None = getattr(_TOKENIZERS, "tokenizer", None)
    if found is None:
        found = _TOKENIZERS.tokenizer = StreamingSpark.tokenizer_class(dialect=_DIALECT)
    return found


def _parses(text: str) -> bool:
    try:
        tree = sqlglot.parse_one(text, read=StreamingSpark)
    except Exception:  # noqa: BLE001 - sqlglot's parse and token errors, and bugs on odd input
        return False
    return tree is not None and not isinstance(tree, exp.Command)


def _written(text: str, tokens: list[Token], keep_literals: bool) -> str:
    """The tokens written back: literals as `?` (or as typed, secrets masked, with `keep_literals`), keywords and
    function names upper-cased, one space where the text had spaces or comments between two tokens."""
    parts: list[str] = []
    lists: list[bool] = []          # for each open parenthesis: whether it holds options or properties
    previous: Token | None = None
    for index, token in enumerate(tokens):
        kind = token.token_type
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        if previous is not None and previous.end + 1 < token.start and kind not in _NO_SPACE_BEFORE \
                and previous.token_type not in _NO_SPACE_AFTER:
            parts.append(" ")
        if kind in _LITERALS:
            in_list = bool(lists) and lists[-1]
            if in_list and _is_option_name(previous, following):
                parts.append(text[token.start:token.end + 1])
            elif not keep_literals:
                parts.append(PLACEHOLDER)
            elif _is_secret_value(tokens, index):
                parts.append(MASK)
            else:
                parts.append(text[token.start:token.end + 1])
        elif kind is TokenType.IDENTIFIER:
            parts.append(text[token.start:token.end + 1])   # as quoted
        elif kind is TokenType.VAR:
            call = following is not None and following.token_type is TokenType.L_PAREN \
                and following.start == token.end + 1 and (previous is None or previous.token_type not in _NAMED_BY)
            parts.append(token.text.upper() if call else token.text)
        else:   # a keyword (one of several words: ORDER BY, written on one line) or an operator
            parts.append(" ".join(token.text.upper().split()))
        if kind is TokenType.L_PAREN:
            lists.append(previous is not None and previous.text.upper() in _OPTION_LISTS)
        elif kind is TokenType.R_PAREN and lists:
            lists.pop()
        previous = token
    return "".join(parts)


def _is_option_name(previous: Token | None, following: Token | None) -> bool:
    """A literal at a name's place in an OPTIONS or TBLPROPERTIES list: first in its item, followed by `=`, by its
    value or by the item's end (UNSET TBLPROPERTIES ('a', 'b'))."""
    if previous is None or previous.token_type not in (TokenType.L_PAREN, TokenType.COMMA):
        return False
    return following is None or following.token_type in _AFTER_OPTION_NAME


def _is_secret_value(tokens: list[Token], index: int) -> bool:
    """Whether the literal at `index` is the value of an option or setting that names a secret: `key = 'v'`,
    `key => 'v'`, `key 'v'` (OPTIONS pairs), the key quoted or dotted (`kafka.sasl.jaas.config`)."""
    at = index - 1
    if at >= 0 and tokens[at].token_type in (TokenType.EQ, TokenType.FARROW, TokenType.COLON_EQ):
        at -= 1
    words: list[str] = []
    while at >= 0 and tokens[at].token_type in _KEY_PARTS:
        words.append(tokens[at].text)
        if at == 0 or tokens[at - 1].token_type is not TokenType.DOT:
            break
        at -= 2
    return bool(words) and is_secret_key(".".join(reversed(words)))


def redacted_prefix(text: str) -> str:
    """The start of a text that did not parse, every quoted string and number replaced by `?`, secrets masked."""
    masked = _NUMBER.sub(PLACEHOLDER, _QUOTED.sub(PLACEHOLDER, mask_secret_assignments(text)))
    masked = re.sub(r"\s+", " ", masked).strip()
    return masked if len(masked) <= PREFIX_CHARS else masked[:PREFIX_CHARS] + " ..."


def mask_secret_assignments(text: str) -> str:
    """Every `secret_key = value` (or `=>`, or an OPTIONS pair) in free text with its value masked: the last line of
    defence for text that was not parsed, and for error messages that echo options."""

    def mask(found: re.Match[str]) -> str:
        if not is_secret_key(found.group("key")):
            return found.group(0)
        return f"{found.group('key')}{found.group('sep')}{MASK}"

    return _PAIR.sub(mask, _ASSIGNMENT.sub(mask, text))
