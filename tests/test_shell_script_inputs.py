"""`sluicegate shell -f` of an sql_examples/ script on a terminal stops where the script lands an input file
(gateway/shell/script_inputs.py), so that its later statements run after the data they are about."""

from __future__ import annotations

from sluicegate.gateway.shell.script_inputs import InputDirective, InputPauses, input_directives
from sluicegate.gateway.shell.splitter import split

SCRIPT = """-- header: -- input: in free text is no directive
CREATE STREAMING TABLE t AS SELECT * FROM STREAM read_files('${input}/eu');

-- input: eu/part-1.json
-- {"id": 1}

-- input: us/part-1.json
-- {"id": 2}

REFRESH STREAMING TABLE t;
DROP FLOW us;

-- input: eu/part-2.json
-- {"id": 3}
"""


def test_the_directives_are_found_with_their_lines() -> None:
    assert input_directives(SCRIPT) == [InputDirective(4, "eu/part-1.json"), InputDirective(7, "us/part-1.json"),
                                        InputDirective(13, "eu/part-2.json")]


def test_the_shell_stops_once_before_the_first_statement_after_inputs_and_names_the_rest_at_the_end() -> None:
    asked: list[tuple[str, bool]] = []
    pauses = InputPauses(input_directives(SCRIPT), "/w/landing/flows", lambda text, wait: asked.append((text, wait)))
    for statement in split(SCRIPT):
        pauses.before(statement.line)
        asked.append((f"ran line {statement.line}", False))
    pauses.at_end()
    assert [text.splitlines()[0] for text, _ in asked] == [
        "ran line 2",
        "The script lands these files before its next statement:", "ran line 10", "ran line 11",
        "The script ends here; land its remaining input files, then query the tables:"]
    assert "/w/landing/flows/eu/part-1.json (line 4)\n  /w/landing/flows/us/part-1.json (line 7)" in asked[1][0]
    assert asked[1][1] and not asked[-1][1]                    # it waits for Enter mid-script, not at the end
    assert "/w/landing/flows/eu/part-2.json (line 13)" in asked[-1][0]


def test_without_the_variable_the_paths_name_it() -> None:
    asked: list[str] = []
    pauses = InputPauses([InputDirective(3, "x/1.json")], None, lambda text, wait: asked.append(text))
    pauses.before(5)
    pauses.before(9)
    assert len(asked) == 1 and "${input}/x/1.json (line 3)" in asked[0]
