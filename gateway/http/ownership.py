"""Over HTTP a session is not tied to a connection: any request may name any session or operation handle. This
wrapper around the Thrift handler refuses a request whose handle belongs to another user's session, before the
handler sees it; everything else passes through unchanged.
"""

from __future__ import annotations

from typing import Any

from sluicegate.gateway.errors import AuthenticationError, GatewayError
from sluicegate.gateway.service import GatewayService
from sluicegate.gateway.thrift import convert
from sluicegate.gateway.thrift import handler as thrift_handler


def processor_class() -> type:
    """The Processor the binary port serves (gateway/thrift/generated.py: the connector's types, with Hive's GetLog),
    so that the HTTP transport decodes exactly what the binary port decodes."""
    from sluicegate.gateway.thrift.generated import Processor

    return Processor


class OwnerCheckedHandler:
    def __init__(self, handler: Any, service: GatewayService, user: str) -> None:
        self._handler = handler
        self._service = service
        self._user = user

    def _owner(self, req: Any) -> str | None:
        """The user of the session the request names; None when it names none, or one that does not exist (the
        handler then answers as it always does)."""
        try:
            if getattr(req, "sessionHandle", None) is not None:
                return self._service.sessions.get(convert.to_session_handle(req.sessionHandle)).user
            if getattr(req, "operationHandle", None) is not None:
                return self._service.operations.get(convert.to_operation_handle(req.operationHandle)).session.user
        except (GatewayError, AttributeError, TypeError):  # a malformed handle: the handler says so
            return None
        return None

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._handler, name)
        if not name[:1].isupper():
            return method

        def call(req: Any) -> Any:
            owner = self._owner(req)
            if owner is not None and owner != self._user:
                refusal = AuthenticationError(
                    f"user '{self._user}' may not use a session of another user",
                    error_class="SESSION_OF_ANOTHER_USER",
                    hint="open your own session (OpenSession) with your own credentials")
                response_type = getattr(thrift_handler.T, f"T{name}Resp")
                return response_type(status=convert.to_tstatus(refusal))
            return method(req)

        return call
