"""Run dbt-databricks' functional suite one test file after another (one pytest process each, so two shared cores
are not asked for more), all against one gateway started here, and write per-class results.

    python dbx_suite_each.py RESULTS_DIR PATH... [-- PYTEST_OPTION...]

Run from the exported suite's folder by tests_dbt/run_databricks_suite --each. Each file's JUnit XML lands in
RESULTS_DIR (named after the file, so re-running some files replaces just theirs); then the table of every file
in RESULTS_DIR, one row per class (passed, failed, errors, skipped, xfailed and why), is written to
RESULTS_DIR/results.md and printed. `report RESULTS_DIR` writes the table alone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from dbx_gateway import SHARED_GATEWAY, running_gateway

OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed")


@dataclass
class ClassResult:
    counts: Counter[str] = field(default_factory=Counter)
    why: dict[str, str] = field(default_factory=dict)   # outcome -> the first reason or message met


def suite_files(paths: list[str]) -> list[Path]:
    """Every test_*.py under the given files and folders, in order."""
    found: list[Path] = []
    for path in map(Path, paths):
        found.extend(sorted(path.rglob("test_*.py")) if path.is_dir() else [path])
    return found


def xml_name(test_file: Path) -> str:
    return "__".join(test_file.with_suffix("").parts[-2:]) + ".xml"


def run_each(results: Path, paths: list[str], options: list[str]) -> int:
    # SIGTERM unwinds as an exception: subprocess.run kills the running file's pytest, the gateway is stopped
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    results.mkdir(parents=True, exist_ok=True)
    worst = 0
    root = Path(tempfile.mkdtemp(prefix="sluicegate-dbx-suite-"))
    with running_gateway(root, "dbt_suite") as gateway:
        print(f"sluicegate gateway at {gateway.http_url}, log {gateway.log}", flush=True)
        # unbuffered, with -v: each test's outcome shows as it ends (a file's JUnit XML is written when it ends)
        env = {**os.environ, SHARED_GATEWAY: gateway.to_json(), "PYTHONUNBUFFERED": "1"}
        for test_file in suite_files(paths):
            print(f"== {test_file}", flush=True)
            done = subprocess.run([sys.executable, "-m", "pytest", "-p", "sluicegate_dbx_suite_plugin",
                                   "-o", "addopts=", "--rootdir", ".", "--timeout", "900", "-ra", "-v", *options,
                                   "--junitxml", str(results / xml_name(test_file)), str(test_file)], env=env)
            worst = max(worst, 0 if done.returncode == 5 else done.returncode)  # 5: nothing collected
    report(results)
    return worst


def outcome(case: ElementTree.Element) -> tuple[str, str]:
    """A JUnit testcase's outcome and its reason or message (first line)."""
    for tag, name in (("failure", "failed"), ("error", "error"), ("skipped", "skipped")):
        found = case.find(tag)
        if found is not None:
            message = (found.get("message") or found.text or "").strip().splitlines()
            xfailed = name == "skipped" and found.get("type") == "pytest.xfail"
            return "xfailed" if xfailed else name, (message[0] if message else "")[:300]
    return "passed", ""


def classes(results: Path) -> dict[str, ClassResult]:
    found: dict[str, ClassResult] = {}
    for xml in sorted(results.glob("*.xml")):
        for case in ElementTree.parse(xml).getroot().iter("testcase"):
            name = (case.get("classname") or "").removeprefix("tests.functional.adapter.")
            result = found.setdefault(name, ClassResult())
            kind, why = outcome(case)
            result.counts[kind] += 1
            if why:
                result.why.setdefault(kind, why)
    return found


def report(results: Path) -> str:
    found = classes(results)
    total: Counter[str] = Counter()
    lines = ["| class | " + " | ".join(OUTCOMES) + " | why (first reason or message) |",
             "|---|" + "---|" * len(OUTCOMES) + "---|"]
    for name, result in found.items():
        total.update(result.counts)
        why = "; ".join(f"{kind}: {text}" for kind, text in result.why.items()).replace("|", "\\|")
        lines.append(f"| {name} | " + " | ".join(str(result.counts[kind] or "") for kind in OUTCOMES) + f" | {why} |")
    lines.append("| **total** | " + " | ".join(str(total[kind]) for kind in OUTCOMES) + " | |")
    text = "\n".join(lines) + "\n"
    (results / "results.md").write_text(text)
    print(text)
    return text


def main(argv: list[str]) -> int:
    if argv[:1] == ["report"]:
        report(Path(argv[1]))
        return 0
    options = argv[argv.index("--") + 1:] if "--" in argv else []
    positional = argv[:argv.index("--")] if "--" in argv else argv
    return run_each(Path(positional[0]), positional[1:], options)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
