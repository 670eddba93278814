"""Password and token files for the test gateways that log users in (the HTTP, metrics, console and TLS tests):
one place writes them, so every such gateway is configured the same way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sluicegate.gateway.auth.providers import set_password


def password_auth(folder: Path, passwords: dict[str, str], **settings: Any) -> dict[str, Any]:
    """The `[auth]` section of a gateway whose users log in with `passwords`, its files in `folder`
    (`password_file`, and `token_file` for the bearer tokens a test creates); `settings` add to it."""
    for user, password in passwords.items():
        set_password(folder / "passwd", user, password)
    return {"mode": "password", "password_file": str(folder / "passwd"), "token_file": str(folder / "tokens"),
            **settings}
