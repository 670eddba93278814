"""Which settings a user may change in their session: a short list of Spark SQL settings that change results or
plans for that session only. Everything else is refused: static and core settings, `spark.sql.runSQLOnFiles` (file
paths as table names), `spark.sql.catalog.*` (plug-in catalogs), `spark.hadoop.*` and bare Hadoop keys (Spark copies
session settings into the Hadoop configuration, where `fs.*.impl` loads classes)."""

from __future__ import annotations

import re

from sluicegate.policy.errors import SettingNotAllowedError

SESSION_SAFE_NAMES = (
    "spark.sql.ansi.enabled",
    "spark.sql.session.timeZone",
    "spark.sql.shuffle.partitions",
    "spark.sql.caseSensitive",
    "spark.sql.legacy.timeParserPolicy",
    "spark.sql.storeAssignmentPolicy",
    "spark.sql.crossJoin.enabled",
    "spark.sql.files.maxPartitionBytes",
    "spark.sql.mapKeyDedupPolicy",
    "spark.sql.timestampType",
    "spark.sql.sources.partitionOverwriteMode",
    "spark.sql.parser.quotedRegexColumnNames",
    "spark.sql.datetime.java8API.enabled",
    "spark.sql.pivotMaxValues",
    "spark.sql.decimalOperations.allowPrecisionLoss",
    "spark.sql.orderByOrdinal",
    "spark.sql.groupByOrdinal",
    "spark.sql.groupByAliases",
    "spark.sql.jsonGenerator.ignoreNullFields",
    "spark.sql.execution.arrow.maxRecordsPerBatch",
    "spark.sql.cbo.enabled",
    "spark.sql.optimizer.maxIterations",
    "spark.databricks.delta.retentionDurationCheck.enabled",
    "spark.sql.adaptive.enabled",
    "spark.sql.adaptive.coalescePartitions.enabled",
    "spark.sql.adaptive.skewJoin.enabled",
    "spark.sql.adaptive.advisoryPartitionSizeInBytes",
    "spark.sql.adaptive.localShuffleReader.enabled",
    "spark.sluicegate.dataSkipping.enabled",  # the gateway's own: "false" reads every file of a Delta snapshot
    # the gateway's own: "false" makes CREATE [OR REFRESH] STREAMING TABLE return once its stream has started,
    # without waiting for the first update (executor/streaming_tables.py)
    "spark.sluicegate.streams.createWaitsForFirstUpdate",
)
SESSION_SAFE = frozenset(name.lower() for name in SESSION_SAFE_NAMES)
# `SET hivevar:x=1` stores the conf key `x`: a variable name must not be able to name a Hadoop key (`fs.file.impl`).
_VARIABLE = re.compile(r"hivevar:[A-Za-z_][A-Za-z0-9_]*\Z")
# Hints the Hive JDBC driver sends in OpenSession about its own fetching; they are not Spark settings.
CLIENT_HINT_PREFIXES = ("hive.server2.",)
# Hints the Databricks clients send in OpenSession and in every statement's overlay: how they want timestamps in
# Arrow results (the request's useArrowNativeTypes decides that) and dbt's query tags; and the name a client gives
# its application (gateway/client_application.py reads it at OpenSession). Ignored, never set.
CLIENT_HINT_NAMES = frozenset({"spark.thriftserver.arrowbasedrowset.timestampasstring", "query_tags",
                               "client_application"})


def is_client_hint(key: str) -> bool:
    lowered = key.lower()
    return lowered.startswith(CLIENT_HINT_PREFIXES) or lowered in CLIENT_HINT_NAMES


def check_setting(key: str) -> None:
    """Raise SettingNotAllowedError unless `key` may be set in a user's session. Names only, no prefixes: a prefix
    such as `spark.sql.adaptive.` also admits `...customCostEvaluatorClass`, which names a class to load."""
    lowered = key.strip().lower()
    if lowered in SESSION_SAFE or _VARIABLE.match(key.strip()):
        return
    raise SettingNotAllowedError(
        f"the setting '{key}' cannot be changed from SQL",
        hint="a session may change only settings that shape its own results (spark.sql.ansi.enabled, "
             "spark.sql.session.timeZone, spark.sql.adaptive.enabled, hivevar:NAME ...; README, Security, lists them); "
             "an admin sets the others in the gateway's configuration ([spark.conf])")
