"""The gateway's errors: each carries a stable error class, a SQLSTATE and, where it has one, a position and a hint.

`gateway/thrift/convert.py` turns any of these (and the errors of every layer below: all of them
`dialect.errors.SqlError`) into a TStatus at one place; nothing else formats errors for the wire.
"""

from __future__ import annotations

from sluicegate.dialect.errors import SqlError


class GatewayError(SqlError):
    """Base of the gateway's own errors. Subclasses fix `error_class` and `sqlstate`."""

    error_class = "INTERNAL_ERROR"
    sqlstate = "XX000"


class ConfigError(GatewayError):
    error_class = "INVALID_CONFIGURATION"
    sqlstate = "F0000"


class AuthenticationError(GatewayError):
    error_class = "INVALID_CREDENTIALS"
    sqlstate = "28000"


class LimitExceededError(GatewayError):
    """A connection or session cap (server.max_connections_per_address, session.max_per_user) is reached."""

    error_class = "TOO_MANY_CONNECTIONS"
    sqlstate = "53300"


class SessionNotFoundError(GatewayError):
    error_class = "INVALID_SESSION_HANDLE"
    sqlstate = "08003"


class OperationNotFoundError(GatewayError):
    error_class = "INVALID_OPERATION_HANDLE"
    sqlstate = "HY010"


class InvalidOperationStateError(GatewayError):
    error_class = "INVALID_OPERATION_STATE"
    sqlstate = "HY010"


class InvalidRequestError(GatewayError):
    error_class = "INVALID_PARAMETER_VALUE"
    sqlstate = "22023"


class FeatureNotSupportedError(GatewayError):
    error_class = "FEATURE_NOT_SUPPORTED"
    sqlstate = "0A000"


class OperationCanceledError(GatewayError):
    error_class = "OPERATION_CANCELED"
    sqlstate = "57014"


class QueryTimeoutError(GatewayError):
    error_class = "QUERY_TIMEOUT"
    sqlstate = "57014"


class InternalError(GatewayError):
    error_class = "INTERNAL_ERROR"
    sqlstate = "XX000"
