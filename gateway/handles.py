"""Handles: the opaque (guid, secret) pairs by which HiveServer2 clients name sessions and operations."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TypeVar

H = TypeVar("H", bound="Handle")


@dataclass(frozen=True)
class Handle:
    guid: bytes
    secret: bytes

    @classmethod
    def new(cls: type[H]) -> H:
        return cls(uuid.uuid4().bytes, uuid.uuid4().bytes)

    @property
    def hex(self) -> str:
        return self.guid.hex()


class SessionHandle(Handle):
    pass


class OperationHandle(Handle):
    pass
