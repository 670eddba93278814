"""The gateway's configuration: the one place that reads `conf/sluicegate.toml` and any file given with --conf.

Every key has its default and doc line in the packaged `conf/sluicegate.toml`; a user's file overrides keys one by
one. Other packages never read configuration: they are handed the typed settings they need.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from gateway.errors import ConfigError
from runtime.policy import SecuritySettings
from runtime.spark import SparkSettings
from runtime.streaming.settings import StreamSettings

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

AUTH_MODES = ("none", "password")


@dataclass(frozen=True)
class ServerSettings:
    host: str
    port: int
    max_connections: int
    shutdown_grace: float


@dataclass(frozen=True)
class AuthSettings:
    mode: str
    password_file: Path


@dataclass(frozen=True)
class SessionSettings:
    idle_timeout: float
    check_interval: float


@dataclass(frozen=True)
class OperationSettings:
    idle_timeout: float
    max_fetch_rows: int
    background_threads: int


@dataclass(frozen=True)
class GatewayConfig:
    server: ServerSettings
    auth: AuthSettings
    session: SessionSettings
    operation: OperationSettings
    include_stack_trace: bool
    warehouse: Path
    spark: SparkSettings
    catalog_url: str = ""              # "" = SQLite in WAREHOUSE/catalog.db
    streams: StreamSettings | None = None
    security: SecuritySettings | None = None
    source: tuple[str, ...] = field(default=())


def default_config_text() -> str:
    return resources.files("conf").joinpath("sluicegate.toml").read_text(encoding="utf-8")


def _merge(base: dict[str, Any], override: dict[str, Any], where: str) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if key not in base:
            known = ", ".join(sorted(base))
            raise ConfigError(f"unknown configuration key '{where}{key}'; known keys here: {known}")
        if isinstance(base[key], dict) and key != "conf":
            if not isinstance(value, dict):
                raise ConfigError(f"configuration key '{where}{key}' must be a table")
            merged[key] = _merge(base[key], value, f"{where}{key}.")
        elif isinstance(base[key], dict):
            merged[key] = {**base[key], **value}
        else:
            if type(value) is not type(base[key]) and not (isinstance(base[key], float) and isinstance(value, int)):
                raise ConfigError(
                    f"configuration key '{where}{key}' must be {type(base[key]).__name__}, got {value!r}"
                )
            merged[key] = value
    return merged


def load_config(
    path: str | Path | None = None,
    *,
    host: str | None = None,
    port: int | None = None,
    warehouse: str | Path | None = None,
    overrides: dict[str, Any] | None = None,
) -> GatewayConfig:
    """Defaults, then the file at `path`, then `overrides` (a nested dict), then the command-line values."""
    raw = tomllib.loads(default_config_text())
    sources = ["<defaults>"]
    if path is not None:
        try:
            user = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise ConfigError(f"configuration file {path} does not exist") from exc
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"configuration file {path} is not valid TOML: {exc}") from exc
        raw = _merge(raw, user, "")
        sources.append(str(path))
    if overrides:
        raw = _merge(raw, overrides, "")
    if host is not None:
        raw["server"]["host"] = host
    if port is not None:
        raw["server"]["port"] = port
    if warehouse is not None:
        raw["warehouse"]["path"] = str(warehouse)

    if raw["auth"]["mode"] not in AUTH_MODES:
        raise ConfigError(f"auth.mode must be one of {', '.join(AUTH_MODES)}, got {raw['auth']['mode']!r}")
    if not 0 <= raw["server"]["port"] <= 65535:
        raise ConfigError(f"server.port must be between 0 and 65535, got {raw['server']['port']}")
    warehouse_path = Path(raw["warehouse"]["path"]).expanduser().resolve()
    password_file = raw["auth"]["password_file"]
    password_path = Path(password_file).expanduser() if password_file else warehouse_path / "passwd"
    checkpoints = Path(raw["streams"]["checkpoints"]).expanduser().resolve() if raw["streams"]["checkpoints"] \
        else warehouse_path / "_checkpoints"
    spark = raw["spark"]
    return GatewayConfig(
        server=ServerSettings(
            host=raw["server"]["host"],
            port=raw["server"]["port"],
            max_connections=raw["server"]["max_connections"],
            shutdown_grace=float(raw["server"]["shutdown_grace"]),
        ),
        auth=AuthSettings(
            mode=raw["auth"]["mode"],
            password_file=password_path,
        ),
        session=SessionSettings(
            idle_timeout=float(raw["session"]["idle_timeout"]),
            check_interval=float(raw["session"]["check_interval"]),
        ),
        operation=OperationSettings(
            idle_timeout=float(raw["operation"]["idle_timeout"]),
            max_fetch_rows=raw["operation"]["max_fetch_rows"],
            background_threads=raw["operation"]["background_threads"],
        ),
        include_stack_trace=raw["errors"]["include_stack_trace"],
        warehouse=warehouse_path,
        spark=SparkSettings(
            master=spark["master"],
            driver_memory=spark["driver_memory"],
            shuffle_partitions=spark["shuffle_partitions"],
            bind_loopback=spark["bind_loopback"],
            warehouse=warehouse_path,
            extra_conf=dict(spark["conf"]),
            include_stack_trace=raw["errors"]["include_stack_trace"],
        ),
        catalog_url=raw["catalog"]["url"],
        streams=StreamSettings(
            trigger_seconds=float(raw["streams"]["trigger_interval"]),
            retry_initial=float(raw["streams"]["retry_initial"]),
            retry_max=float(raw["streams"]["retry_max"]),
            checkpoints=checkpoints,
            static_check_interval=float(raw["streams"]["static_check_interval"]),
        ),
        security=_security(raw["security"], warehouse_path, (warehouse_path, checkpoints, password_path)),
        source=tuple(sources),
    )


def _security(raw: dict[str, Any], warehouse: Path, protected: tuple[Path, ...]) -> SecuritySettings:
    roots = raw["allowed_paths"] or [str(warehouse / "landing")]
    for root in roots:
        if not isinstance(root, str) or not Path(root).expanduser().is_absolute():
            raise ConfigError(f"security.allowed_paths must list absolute folders, got {root!r}")
    admins = raw["admins"]
    if not all(isinstance(a, str) and a for a in admins):
        raise ConfigError(f"security.admins must list user names, got {admins!r}")
    return SecuritySettings(allowed_paths=tuple(Path(r).expanduser() for r in roots), protected_paths=protected,
                            admins=frozenset(admins), admin_unrestricted=raw["admin_unrestricted"])
