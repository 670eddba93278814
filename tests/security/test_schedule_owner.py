"""Only a streaming table's owner (or an admin) changes its refresh schedule: another user, even one granted SELECT
and MODIFY, is refused with 42501 and the schedule stays as it was."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from security_helpers import refused, still_serves

from sluicegate.dialect.schedule import Schedule


def test_another_user_cannot_add_alter_or_drop_a_schedule(as_user: Any, landing_root: Path, streams: Any) -> None:
    schema = f"alice_sched_{uuid.uuid4().hex[:8]}"
    folder = landing_root / schema
    folder.mkdir()
    (folder / "a.json").write_text(json.dumps({"country": "fr"}) + "\n")
    alice, bob = as_user("alice"), as_user("bob")
    alice.execute(f"CREATE SCHEMA {schema}")
    alice.execute(f"CREATE STREAMING TABLE {schema}.st SCHEDULE EVERY 4 HOURS AS SELECT * FROM STREAM read_files("
                  f"'{folder}', format => 'json', schema => 'country STRING')")
    alice.execute(f"GRANT SELECT ON TABLE {schema}.st TO bob")
    alice.execute(f"GRANT MODIFY ON TABLE {schema}.st TO bob")
    for sql in (f"ALTER STREAMING TABLE {schema}.st ALTER SCHEDULE EVERY 1 HOUR",
                f"ALTER STREAMING TABLE {schema}.st DROP SCHEDULE",
                f"ALTER STREAMING TABLE {schema}.st ADD SCHEDULE CRON '0 0 0 * * ?'",
                f"ALTER MATERIALIZED VIEW {schema}.st DROP SCHEDULE",
                f"CREATE OR REFRESH STREAMING TABLE {schema}.st SCHEDULE EVERY 1 HOUR AS SELECT * FROM STREAM "
                f"read_files('{folder}', format => 'json', schema => 'country STRING')"):
        message = refused(bob, sql, "INSUFFICIENT_PERMISSIONS")
        assert "hint:" in message
    assert Schedule.from_json(streams.store.require_table(schema, "st").schedule) == Schedule(
        "every", every=4, unit="HOUR")
    alice.execute(f"ALTER STREAMING TABLE {schema}.st ALTER SCHEDULE EVERY 1 HOUR")  # the owner may
    assert Schedule.from_json(streams.store.require_table(schema, "st").schedule).every == 1
    still_serves(bob)
    alice.execute(f"DROP TABLE {schema}.st")
