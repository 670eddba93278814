"""The shell's typed errors: the same fields as the server's (error_class, sqlstate, message, line, column, hint), so
a failure reads the same whether the server or the shell found it. The shell is a client: it shares the project's
error root (a standard-library module) and nothing else of the server."""

from __future__ import annotations

from sluicegate.dialect.errors import SqlError


class ShellError(SqlError):
    """Base of the shell's errors: the project's error type, so both read the same. Subclasses fix the class."""

    error_class = "SHELL_ERROR"
    sqlstate = "XX000"


class ConnectError(ShellError):
    """The server could not be reached, or the connection dropped."""

    error_class = "CONNECTION_FAILURE"
    sqlstate = "08006"


class AuthenticationRefused(ConnectError):
    """The server refused the user name or password during the SASL handshake."""

    error_class = "INVALID_CREDENTIALS"
    sqlstate = "28000"


class ServerError(ShellError):
    """A statement or metadata call failed on the server; fields parsed from the TStatus it sent."""

    error_class = "SERVER_ERROR"


class StatementCanceled(ShellError):
    """The user pressed Ctrl-C while a statement ran; the server was asked to cancel it."""

    error_class = "OPERATION_CANCELED"
    sqlstate = "57014"


class CommandError(ShellError):
    """A backslash command that does not exist or was given the wrong arguments."""

    error_class = "INVALID_COMMAND"
    sqlstate = "42601"
