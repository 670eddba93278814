"""The name a session's application gets (no JVM): what each client sends at OpenSession, as
gateway/client_application.py reads it. What the real clients send is asserted on the wire in
tests/test_history_clients.py; these hold the rules and their order."""

from __future__ import annotations

from sluicegate.gateway.client_application import HIVE_JDBC, MAX_CHARS, client_application
from sluicegate.policy.settings import is_client_hint

# what Hive's JDBC driver 2.3 (beeline) sends in every OpenSession
HIVE_JDBC_CONF = {"use:database": "default", "set:hiveconf:hive.server2.thrift.resultset.default.fetch.size": "1000"}
CONNECTOR_AGENT = "PyDatabricksSqlConnector/4.9.0"


def test_a_name_the_client_chose_comes_first() -> None:
    assert client_application({"client_application": "nightly-report"}, databricks=False) == "nightly-report"
    assert client_application({**HIVE_JDBC_CONF, "set:hiveconf:client_application": "bee-report"},
                              databricks=False, user_agent="Apache-HttpClient/4.5.14 (Java/17)") == "bee-report"
    assert client_application({"Client_Application": "dash"}, databricks=True, user_agent=CONNECTOR_AGENT) == "dash"


def test_hive_jdbc_is_known_by_the_settings_it_sends() -> None:
    assert client_application(HIVE_JDBC_CONF, databricks=False) == HIVE_JDBC
    assert client_application(HIVE_JDBC_CONF, databricks=False, user_agent="Apache-HttpClient/4.5.14") == HIVE_JDBC
    assert client_application({"use:database": "default"}, databricks=False) == "hive"   # not the driver's pair


def test_the_user_agent_names_an_http_client() -> None:
    assert client_application({}, databricks=True, user_agent=CONNECTOR_AGENT) == CONNECTOR_AGENT
    dbt = f"{CONNECTOR_AGENT} (dbt-databricks/1.10.4)"
    assert client_application({"spark.thriftserver.arrowBasedRowSet.timestampAsString": "false"}, databricks=True,
                              user_agent=dbt) == dbt


def test_without_a_name_the_protocol_family() -> None:
    assert client_application({}, databricks=False) == "hive"        # PyHive on the binary port sends nothing more
    assert client_application({}, databricks=True) == "databricks"


def test_names_are_cut_and_cleaned() -> None:
    named = client_application({"client_application": "a\x00b\nc" + "x" * 1000}, databricks=False)
    assert named.startswith("a b c") and len(named) == MAX_CHARS
    assert client_application({"client_application": "  "}, databricks=False, user_agent="  ") == "hive"


def test_the_name_is_never_a_spark_setting() -> None:
    assert is_client_hint("client_application")   # `set:hiveconf:client_application` passes OpenSession unset
