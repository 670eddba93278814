"""`[events]` in conf: the retention of streaming tables' event logs, read in one place and handed to the catalog."""

from __future__ import annotations

from pathlib import Path

import pytest

from sluicegate.catalog.events import EventRetention
from sluicegate.gateway.config import load_config
from sluicegate.gateway.errors import ConfigError
from sluicegate.gateway.service import open_catalog


def test_defaults_and_overrides_reach_the_catalog(tmp_path: Path):
    assert load_config(warehouse=tmp_path).events == EventRetention(days=30.0, max_rows_per_table=10_000)
    config = load_config(warehouse=tmp_path, overrides={"events": {"retention_days": 2, "max_rows_per_table": 50}})
    assert config.events == EventRetention(days=2.0, max_rows_per_table=50)
    store = open_catalog(config)
    try:
        assert store.event_retention == EventRetention(days=2.0, max_rows_per_table=50)
    finally:
        store.close()


@pytest.mark.parametrize("events", [{"retention_days": -1.0}, {"max_rows_per_table": -5},
                                    {"max_rows_per_table": 1.5}, {"keep_forever": True}])
def test_bad_values_are_refused(tmp_path: Path, events: dict):
    with pytest.raises(ConfigError):
        load_config(warehouse=tmp_path, overrides={"events": events})
