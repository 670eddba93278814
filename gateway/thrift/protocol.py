"""Which TCLIService protocol version a session speaks: HiveServer2's V1..V10 or the Spark versions the Databricks
clients ask for, and what each promises."""

from __future__ import annotations

from sluicegate.gateway.errors import InvalidRequestError
from sluicegate.gateway.thrift.generated import ttypes as T

HIVE_V6 = T.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V6
HIVE_HIGHEST = T.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10
SPARK_V1 = T.TProtocolVersion.SPARK_CLI_SERVICE_PROTOCOL_V1
# V8 would promise native query parameters (TSparkParameter), V9 async metadata: not implemented.
SPARK_HIGHEST = T.TProtocolVersion.SPARK_CLI_SERVICE_PROTOCOL_V7
_UNSET = -7  # the generated default of field 1 (`__HIVE_JDBC_WORKAROUND`): the client did not send it


def client_version(client_protocol: int | None, client_protocol_i64: int | None) -> int:
    """The version the client asks for. The Databricks clients send only `client_protocol_i64`; Hive clients send
    only `client_protocol`. A missing field must not decide: with neither, the request is refused."""
    if client_protocol_i64 is not None:
        return client_protocol_i64
    if client_protocol is not None and client_protocol != _UNSET:
        return client_protocol
    raise InvalidRequestError(
        "OpenSession names no protocol version (neither client_protocol nor client_protocol_i64)",
        error_class="PROTOCOL_VERSION_MISSING", sqlstate="08001",
        hint="send the TCLIService protocol version the client speaks, as Hive and Databricks clients do")


def negotiate(client: int) -> int:
    """min(client, the highest version implemented) within the client's family: a Spark version for a Spark
    client, a Hive version for a Hive client (one from a newer Hive gets V10)."""
    if client < 0:
        raise InvalidRequestError(f"OpenSession asks for protocol version {client}, which does not exist",
                                  error_class="PROTOCOL_VERSION_UNKNOWN", sqlstate="08001",
                                  hint="send a HiveServer2 (0..9) or Spark (0xA501 and up) protocol version")
    if client >= SPARK_V1:
        return min(client, SPARK_HIGHEST)
    return min(client, HIVE_HIGHEST)


def is_spark(protocol: int) -> bool:
    """A session of a Databricks client: its results carry `resultFormat` and the other Databricks fields."""
    return protocol >= SPARK_V1


def columnar(protocol: int) -> bool:
    """Columnar row sets from Hive V6 on and in every Spark version; row-based ones before."""
    return protocol >= HIVE_V6


def name(protocol: int) -> str:
    return T.TProtocolVersion._VALUES_TO_NAMES.get(protocol, str(protocol))
