"""The gateway log's format: plain lines by default, JSON lines with `log.format = "json"` (one object per line:
time, level, logger, message, and the fields a line carries, such as the statement log's id, user, type, status and
duration), for a log shipper to read without a parser of its own. Applied to the root logger's handlers, so every
line of the gateway follows it."""

from __future__ import annotations

import datetime as dt
import json
import logging
from typing import Any

FORMATS = ("text", "json")


class JsonFormatter(logging.Formatter):
    """One JSON object per record; a record's `fields` (given as `extra={"fields": {...}}`) are merged in."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": dt.datetime.fromtimestamp(record.created, dt.timezone.utc).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            line.update({key: value for key, value in fields.items() if key not in line})
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


def use_format(name: str) -> None:
    """Give the root logger's handlers the format `name` ("text" leaves them as they are)."""
    if name != "json":
        return
    root = logging.getLogger()
    if not root.handlers:
        logging.basicConfig()
    for handler in root.handlers:
        handler.setFormatter(JsonFormatter())
