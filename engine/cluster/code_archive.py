"""The project's Python packages as one zip for executors that do not have them installed.

Spark pickles the streaming sources (sluicegate.engine.streams.delta_source, kafka_source) and the expectations' UDFs
by reference, so an executor's Python worker imports every layer below the gateway, under the `sluicegate` root (the
gateway itself never runs there). The zip is named by a hash of the files' contents: a changed file gives a new
archive, an unchanged tree reuses the one built before.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import zipfile
from pathlib import Path

EXECUTOR_PACKAGES = ("catalog", "dialect", "engine", "executor", "policy", "storage")
ROOT = "sluicegate"


def _package_files(package: str) -> list[tuple[Path, str]]:
    """(file, name in the archive) of every module of `package`, in a stable order."""
    root = Path(importlib.import_module(f"{ROOT}.{package}").__file__ or "").parent
    files = []
    for directory, folders, names in os.walk(root):
        folders[:] = sorted(f for f in folders if f != "__pycache__" and not f.startswith("."))
        for name in sorted(names):
            if name.endswith(".py"):
                path = Path(directory) / name
                files.append((path, f"{ROOT}/{package}/{path.relative_to(root).as_posix()}"))
    return files


def build_code_archive(folder: Path, packages: tuple[str, ...] = EXECUTOR_PACKAGES) -> Path:
    """The archive of `packages` in `folder` (built if no archive of these exact contents is there yet)."""
    root_init = Path(importlib.import_module(ROOT).__file__ or "")
    files = [(root_init, f"{ROOT}/__init__.py")]
    files += [entry for package in packages for entry in _package_files(package)]
    digest = hashlib.sha256()
    for path, name in files:
        digest.update(name.encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
    archive = folder / f"sluicegate-{digest.hexdigest()[:16]}.zip"
    if archive.exists():
        return archive
    folder.mkdir(parents=True, exist_ok=True)
    partial = archive.with_suffix(f".{os.getpid()}.tmp")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as zipped:
        for path, name in files:
            zipped.write(path, name)
    os.replace(partial, archive)  # a reader never sees half an archive
    for old in folder.glob("sluicegate-*.zip"):  # archives of earlier code: one gateway serves a warehouse
        if old != archive:
            old.unlink(missing_ok=True)
    return archive
