"""A stream's table starts empty for it: the commit that empties the table for a new stream id, once.

A new stream id (REFRESH ... FULL, CREATE OR REFRESH needing a full refresh) must never see the rows of the stream
before it. The commit that empties the table carries `txn(appId = the new stream id, version = -1)`, below every
batch id, so the sink writes batch 0 as usual. Because the txn is in the Delta log with the emptying itself, "has
the table been emptied for this stream?" is answered by the log alone, whatever moment a crash chose. The full
refresh marks the new stream row `RESET_PENDING`; before a query of a row so marked starts, `empty_for_stream`
empties the table unless that txn is there (or the stream has written: its batches carry its txn too). A full
refresh killed between switching the catalog row to the new stream id and the emptying commit is thus completed by
the next start of the new stream (at boot or a retry): nothing of the old result stays, nothing of the new one is
written twice. No other start empties anything: flows may fill a table before its own stream commits a batch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sluicegate.storage.delta.tables import delta_configuration
from sluicegate.storage.delta.write import AppTransaction, commit_files

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

    from sluicegate.dialect.streaming.plan import StreamingPlan

RESET_VERSION = -1   # the txn version of the emptying commit: below batch 0, so batch 0 is still written
# A full refresh writes its new stream row with this as `last_refresh_status`, in the transaction that switches the
# stream id: the one mark that a start may have an emptying commit to complete. Nothing else empties a table at a
# start (a table may hold rows of its flows before its own stream ever commits a batch).
RESET_PENDING = "RESETTING"


def empty_table(location: str, schema: StructType, plan: StreamingPlan, replace_existing: bool,
                stream_id: str | None = None) -> int:
    """Create the table empty (replace_existing: empty it, with the table's schema) in one commit, marked as
    emptied for `stream_id` when given. Returns the committed version."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return commit_files(location, [], to_arrow_schema(schema), "overwrite" if replace_existing else "append",
                        create=True, name=plan.name, description=plan.comment, partition_by=plan.partition_by,
                        configuration=delta_configuration(plan.properties),
                        app_transaction=AppTransaction(stream_id, RESET_VERSION) if stream_id is not None else None)


def _needs_emptying(location: str, schema: StructType, stream_id: str, always: bool) -> bool:
    from deltalake.schema import Schema
    from pyspark.sql.pandas.types import to_arrow_schema

    from sluicegate.storage.delta.tables import open_table

    table = open_table(location)
    if table.transaction_version(stream_id) is not None:
        return False
    if always or table.file_uris():
        return True
    return table.schema().to_json() != Schema.from_arrow(to_arrow_schema(schema)).to_json()


def empty_for_stream(location: str, schema: StructType, plan: StreamingPlan, stream_id: str,
                     always: bool = False) -> bool:
    """Empty the table for `stream_id` unless the Delta log says it already was (or the stream has written to it),
    or (unless `always`: a full refresh also writes the new definition's table metadata) it is empty with the
    result's schema already. Returns whether it committed. Idempotent: run before every start of a query."""
    if not _needs_emptying(location, schema, stream_id, always):
        return False
    empty_table(location, schema, plan, replace_existing=True, stream_id=stream_id)
    return True
