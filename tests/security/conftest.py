"""Fixtures of the security tests: attacks from the review, through real clients, each asserting a clean SQL error,
that nothing outside the warehouse was read, written or deleted, and that the gateway still answers."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from security_helpers import slapd, tls_files  # noqa: F401 - registers the fixtures (they live there, importable)


@pytest.fixture()
def victim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A folder outside the warehouse and outside the tests' landing root, with a file in it, that no statement
    may read, change or delete."""
    base = Path(tmp_path_factory.getbasetemp())
    folder = base.parent / f"victim-{base.name}"
    folder.mkdir(exist_ok=True)
    (folder / "important.txt").write_text("keep me\n")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture()
def as_user(connect: Callable[..., Any]) -> Callable[[str], Any]:
    """A PyHive cursor of the shared gateway (auth none) logged in as `user`."""
    return lambda user: connect(username=user).cursor()
