"""The Databricks clients' hints (`spark.thriftserver.arrowBasedRowSet.timestampAsString` in OpenSession and in
every statement's overlay, dbt's `query_tags`) are accepted and ignored: none becomes a Spark setting, and they open
no way around the settings policy for the other keys a Spark-protocol session sends."""

from __future__ import annotations

from typing import Any

from databricks.sql.thrift_api.TCLIService import ttypes as T
from test_spark_protocol import TIMESTAMP_HINT, execute, ok, open_req, raw_client, wait

HINTS = {**TIMESTAMP_HINT, "query_tags": "@@team:x"}


def _setting(client: Any, session: Any, key: str) -> str:
    resp = execute(client, session, f"SET {key}")
    wait(client, resp.operationHandle)
    fetched = ok(client.FetchResults(T.TFetchResultsReq(operationHandle=resp.operationHandle, maxRows=10)))
    return fetched.results.columns[1].stringVal.values[0]


def test_hints_are_ignored_and_other_keys_still_pass_the_policy(gateway: Any) -> None:
    with raw_client(gateway) as client:
        req = open_req()
        req.configuration = dict(HINTS)
        session = ok(client.OpenSession(req)).sessionHandle
        resp = ok(client.ExecuteStatement(T.TExecuteStatementReq(
            sessionHandle=session, statement="SELECT 1", runAsync=True, confOverlay=dict(HINTS))))
        assert wait(client, resp.operationHandle).operationState == T.TOperationState.FINISHED_STATE
        for key in ("spark.thriftserver.arrowBasedRowSet.timestampAsString", "query_tags"):
            assert _setting(client, session, key) == "<undefined>", key

        refused = ok(client.ExecuteStatement(T.TExecuteStatementReq(
            sessionHandle=session, statement="SELECT 1", runAsync=True,
            confOverlay={**HINTS, "spark.sql.runSQLOnFiles": "true"})))
        status = wait(client, refused.operationHandle)
        assert status.operationState == T.TOperationState.ERROR_STATE and "CONFIG_NOT_ALLOWED" in status.errorMessage

        mallory = open_req()
        mallory.username = "mallory"
        mallory.configuration = {**HINTS, "spark.sql.runSQLOnFiles": "true"}
        denied = client.OpenSession(mallory)
        assert denied.status.statusCode == T.TStatusCode.ERROR_STATUS
        assert "CONFIG_NOT_ALLOWED" in denied.status.errorMessage
        ok(client.CloseSession(T.TCloseSessionReq(sessionHandle=session)))
