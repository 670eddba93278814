"""Refusals of the policy point: SQLSTATE 42501 (insufficient privilege), an error class naming what was refused,
and a hint saying what the user may do instead."""

from __future__ import annotations

from sluicegate.storage.spark_errors import RuntimeQueryError


class PolicyError(RuntimeQueryError):
    """Base of every refusal; the gateway keeps serving."""

    error_class = "INSUFFICIENT_PERMISSIONS"
    sqlstate = "42501"


class PermissionDeniedError(PolicyError):
    """The user lacks a privilege (SELECT, MODIFY, CREATE) or the ownership an object's statement needs."""

    error_class = "INSUFFICIENT_PERMISSIONS"


class StatementNotAllowedError(PolicyError):
    """A statement kind, operator or function no user may run (script transforms, reflection, ADD JAR ...)."""

    error_class = "STATEMENT_NOT_ALLOWED"


class PathNotAllowedError(PolicyError):
    """A file path outside the configured roots, or inside the gateway's own files."""

    error_class = "PATH_NOT_ALLOWED"


class SettingNotAllowedError(PolicyError):
    """A SET of a setting that is not on the session-safe list."""

    error_class = "CONFIG_NOT_ALLOWED"
