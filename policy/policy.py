"""`Policy`: the one object every statement is checked by, before anything runs.

It is built once per gateway from `SecuritySettings` and the catalog, and handed to every statement's context. The
rules themselves live beside it, one module each: `spark_plans` (Spark's plans), `paths` (files), `settings`
(SET), `grants` (owners and privileges), `decide` (what each statement kind needs). Admins (`security.admins`)
bypass grants and path roots; the list of what no user may run (script transforms, reflection, ADD JAR ...) holds
for them too unless `admin_unrestricted`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sluicegate.catalog.grants import GrantStore
from sluicegate.catalog.uris import Location
from sluicegate.dialect.streaming.kafka import server_hosts
from sluicegate.engine.sessions import session_parser
from sluicegate.engine.streams.checkpoint_offsets import INTERNAL_OPTIONS as GATEWAY_SOURCE_OPTIONS
from sluicegate.policy import settings as session_settings
from sluicegate.policy import spark_plans
from sluicegate.policy.errors import PathNotAllowedError, PolicyError, StatementNotAllowedError
from sluicegate.policy.grants import Grants, Principal
from sluicegate.policy.paths import PathPolicy, any_location
from sluicegate.policy.spark_tables import SparkTableOwners

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from sluicegate.catalog.store import CatalogStore

# Options `read_files` passes to Spark's file readers. Not on it: cleanSource / sourceArchiveDir (they delete or move
# the source files), path / paths (a second way to name files), anything naming classes.
READER_OPTIONS = frozenset(o.lower() for o in [
    "header", "sep", "delimiter", "quote", "escape", "comment", "encoding", "charset", "multiLine", "multiline",
    "nullValue", "emptyValue", "nanValue", "positiveInf", "negativeInf", "dateFormat", "timestampFormat",
    "timestampNTZFormat", "inferSchema", "samplingRatio", "mode", "columnNameOfCorruptRecord",
    "ignoreLeadingWhiteSpace", "ignoreTrailingWhiteSpace", "maxColumns", "maxCharsPerColumn", "allowComments",
    "allowUnquotedFieldNames", "allowSingleQuotes", "allowNumericLeadingZeros", "allowBackslashEscapingAnyCharacter",
    "allowNonNumericNumbers", "primitivesAsString", "prefersDecimal", "dropFieldIfAllNull", "lineSep", "locale",
    "unescapedQuoteHandling", "enforceSchema", "preferDate", "mergeSchema", "pathGlobFilter", "recursiveFileLookup",
    "maxFilesPerTrigger", "maxBytesPerTrigger", "latestFirst", "maxFileAge", "fileNameOnly", "modifiedBefore",
    "modifiedAfter", "wholetext", "compression", "datetimeRebaseMode", "int96RebaseMode", "rowsPerSecond", "rampUpTime",
    "numPartitions", "rescuedDataColumn",
])
# librdkafka settings users may give read_kafka as `kafka.*`: security, timeouts and fetch sizes. Not on it: what runs
# a command or loads code (sasl.kerberos.kinit.cmd, plugin.library.paths), reads the server's files (*.location),
# calls another host (sasl.oauthbearer.token.endpoint.url), starts a mock cluster (test.mock.*), or what the reader
# sets itself (group.id, isolation.level, enable.auto.commit, auto.offset.reset).
KAFKA_CLIENT_OPTIONS = frozenset([
    "security.protocol", "sasl.mechanism", "sasl.mechanisms", "sasl.username", "sasl.password",
    "sasl.oauthbearer.method", "sasl.oauthbearer.client.id", "sasl.oauthbearer.client.secret", "sasl.oauthbearer.scope",
    "sasl.oauthbearer.config", "ssl.ca.pem", "ssl.certificate.pem", "ssl.key.pem", "ssl.key.password",
    "ssl.endpoint.identification.algorithm", "ssl.cipher.suites", "ssl.curves.list", "ssl.sigalgs.list", "client.id",
    "client.rack", "client.dns.lookup", "broker.address.family", "socket.timeout.ms",
    "socket.connection.setup.timeout.ms", "socket.keepalive.enable", "metadata.max.age.ms",
    "topic.metadata.refresh.interval.ms", "reconnect.backoff.ms", "reconnect.backoff.max.ms", "retry.backoff.ms",
    "retry.backoff.max.ms", "fetch.wait.max.ms", "fetch.min.bytes", "fetch.max.bytes", "fetch.message.max.bytes",
    "max.partition.fetch.bytes", "receive.message.max.bytes", "queued.min.messages", "queued.max.messages.kbytes",
    "check.crcs", "api.version.request",
])
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
# Upper bounds of numeric reader options: one statement must not be able to fill the disk or take every core.
READER_LIMITS = {"rowspersecond": 1_000_000, "numpartitions": 64, "maxfilespertrigger": 100_000}
# Commands whose settings `_check_command` reads from their toJSON fields (rare statements: the cost is theirs only).
_COMMANDS_READ_BY_FIELDS = frozenset({"CreateViewCommand", "CreateTempViewUsing", "CreateTable", "CreateTableAsSelect"})


@dataclass(frozen=True)
class SecuritySettings:
    # roots users may read files from (read_files, USING ... OPTIONS path); s3:// prefixes for an object store
    allowed_paths: tuple[Location, ...]
    protected_paths: tuple[Location, ...]    # the gateway's own files (and object prefix): never readable
    admins: frozenset[str] = field(default_factory=frozenset)
    admin_unrestricted: bool = False
    # brokers read_kafka may connect to: "host" (any port), "host:port", or "*" (any)
    kafka_servers: tuple[str, ...] = LOOPBACK_HOSTS


class Policy:
    def __init__(self, settings: SecuritySettings, store: CatalogStore | None = None) -> None:
        self.settings = settings
        self.paths = PathPolicy.of(settings.allowed_paths, settings.protected_paths)
        self.spark_tables = SparkTableOwners()
        self._grants: Grants | None = None
        if store is not None:
            self._grants = Grants(store, GrantStore(store))

    # -- who -------------------------------------------------------------------------------------------------

    def principal(self, user: str) -> Principal:
        return Principal(user, user in self.settings.admins)

    def _unrestricted(self, principal: Principal) -> bool:
        return principal.is_admin and self.settings.admin_unrestricted

    @property
    def grants(self) -> Grants:
        if self._grants is None:
            raise StatementNotAllowedError("this gateway has no catalog, so no object can be checked")
        return self._grants

    def may_read(self, principal: Principal, database: str, name: str) -> bool:
        """Whether `principal` may read the catalog table (or Spark table) `database.name`: for listings that show
        only what a user could query."""
        try:
            entry = self.grants.store.get_table(database, name)
            if entry is not None:
                self.grants.require(principal, "SELECT", entry)
            else:
                self.spark_tables.require(principal, database, name, "read")
        except PolicyError:
            return False
        return True

    # -- Spark ------------------------------------------------------------------------------------------------

    def check_spark_sql(self, spark: SparkSession, sql: str, principal: Principal, *, original: str | None = None,
                        to_original: Callable[[int], int] | None = None) -> None:
        """Judge text that Spark would run as typed, on Spark's own parse of it; raises before anything runs.
        `original`/`to_original`: the text as typed when `sql` is the binder's rewrite of it (error positions)."""
        if self._unrestricted(principal):
            return
        jplan = spark_plans.parse(spark, sql, original, to_original)
        nodes = spark_plans.plan_nodes(spark, jplan)
        spark_plans.check_parsed(nodes)
        self._check_command(spark, jplan, nodes[0], principal)
        if nodes[0].name in ("CreateTableAsSelect", "InsertIntoStatement"):
            # Spark runs these at once: what they read is judged on their analysis, before they run.
            for database, name in spark_plans.check_analyzed_plan(
                    spark, spark_plans.analyzed_without_running(spark, jplan, sql, original, to_original)):
                self.spark_tables.require(principal, database, name, "read")

    def check_query_text(self, spark: SparkSession, sql: str, principal: Principal) -> None:
        """Judge text the gateway hands to `spark.sql` as a query (the binder's, a view's): Spark runs a command at
        once, before any analysed-plan check could see it, so none may hide in it whatever sqlglot made of it.
        Text Spark cannot parse passes: `spark.sql` then reports the syntax error, and runs nothing."""
        if self._unrestricted(principal):
            return
        try:
            jplan = session_parser(spark).parsePlan(sql)
        except Exception:  # noqa: BLE001 - see above: the error is reported by spark.sql, with its position
            return
        spark_plans.check_parsed(spark_plans.plan_nodes(spark, jplan), commands=False)

    def check_query(self, df: DataFrame, principal: Principal) -> None:
        """Judge a query's analysed plan (views and subqueries expanded) before its first row is computed."""
        if self._unrestricted(principal):
            return
        for database, name in spark_plans.check_analyzed(df):
            self.spark_tables.require(principal, database, name, "read")

    def check_temporary_view(self, is_global: bool, principal: Principal) -> None:
        """A temporary view the gateway defines itself (its query is bound and judged like any other)."""
        if is_global and not self._unrestricted(principal):
            raise _global_temporary_view()

    def _check_command(self, spark: SparkSession, jplan: Any, root: spark_plans.Node, principal: Principal) -> None:
        fields = spark_plans.root_fields(jplan) if root.name in _COMMANDS_READ_BY_FIELDS else {}
        if root.name == "SetCommand":
            pair = jplan.kv()  # SET key=value changes a setting; SET, SET key and SET -v only read
            if pair.isDefined() and pair.get()._2().isDefined():
                self.check_setting(pair.get()._1(), principal)
        elif root.name == "CreateViewCommand":
            if "GlobalTempView" in str(fields.get("viewType")):
                raise _global_temporary_view()
            if "PersistedView" in str(fields.get("viewType")):
                raise StatementNotAllowedError("not allowed: this CREATE VIEW could not be read as a catalog view",
                                               hint="check the statement's syntax")
        elif root.name == "CreateTempViewUsing":
            if fields.get("global"):
                raise _global_temporary_view()
            self._check_format(str(fields.get("provider") or ""))
            options = _java_map(spark, jplan.options())
            self._check_options_paths(options, principal)
        elif root.name in ("CreateTable", "CreateTableAsSelect"):
            spec = next((n.fields for n in spark_plans.nodes_in(fields) if n.name == "UnresolvedTableSpec"), {})
            provider = str(spec.get("provider") or "")
            if provider:
                self._check_format(provider)
            location = spec.get("location")
            if location and not principal.is_admin:
                self.paths.check(str(location), purpose="write")

    def _check_format(self, provider: str) -> None:
        if provider.lower() not in spark_plans.FILE_FORMATS:
            raise StatementNotAllowedError(
                f"not allowed: the data source '{provider}' is not available to users",
                hint="use one of: " + ", ".join(sorted(spark_plans.FILE_FORMATS)))

    def _check_options_paths(self, options: Mapping[str, str], principal: Principal) -> None:
        for key, value in options.items():
            if key.lower() == "path" and not principal.is_admin:
                self.paths.check(value)
            elif key.lower() == "paths" and not principal.is_admin:
                raise PathNotAllowedError("the option 'paths' is not available to users",
                                          hint="name one folder with OPTIONS (path '...')")

    # -- settings and files -----------------------------------------------------------------------------------

    def check_setting(self, key: str, principal: Principal) -> None:
        if not self._unrestricted(principal):
            session_settings.check_setting(key)

    def check_read_path(self, path: str, principal: Principal) -> Location:
        """The resolved folder (or object prefix) of a file source, if `principal` may read it."""
        if principal.is_admin:
            return any_location(path)
        return self.paths.check(path)

    def check_reader_options(self, options: Mapping[str, str], principal: Principal) -> None:
        _refuse_gateway_options(options)
        if self._unrestricted(principal):
            return
        for key, value in options.items():
            if key.lower() not in READER_OPTIONS:
                raise StatementNotAllowedError(
                    f"not allowed: the reader option '{key}'",
                    hint="options users may give: " + ", ".join(sorted(READER_OPTIONS)))
            limit = READER_LIMITS.get(key.lower())
            if limit is not None and not (str(value).isdigit() and int(value) <= limit):
                raise StatementNotAllowedError(f"not allowed: {key} => {value}",
                                               hint=f"give {key} as a whole number up to {limit:,}")

    def check_kafka_source(self, options: Mapping[str, str], principal: Principal) -> None:
        """read_kafka connects the server to the brokers a user names: only to those `security.kafka_servers`
        allows (the gateway must not become a way into the network around it), with client settings from the
        allow-list (none that runs a command, loads code or reads the server's files). Admins may name any broker;
        other settings only with `admin_unrestricted`."""
        _refuse_gateway_options(options)
        for key in options:
            if self._unrestricted(principal):
                break
            if key.lower().startswith("kafka.") and key.lower()[len("kafka."):] not in KAFKA_CLIENT_OPTIONS:
                raise StatementNotAllowedError(f"not allowed: the Kafka client setting '{key}'",
                                               hint="settings users may give as kafka.*: "
                                                    + ", ".join(sorted(KAFKA_CLIENT_OPTIONS)))
        if principal.is_admin:
            return
        allowed = {entry.lower() for entry in self.settings.kafka_servers}
        servers = next((value for key, value in options.items() if key.lower() == "bootstrapservers"), "")
        for host, port in server_hosts(servers):
            if "*" not in allowed and host.lower() not in allowed and f"{host}:{port}".lower() not in allowed:
                raise StatementNotAllowedError(
                    f"not allowed: read_kafka may not connect to {host}" + (f":{port}" if port else ""),
                    hint="brokers users may read from are listed in security.kafka_servers (now: "
                         f"{', '.join(sorted(allowed)) or 'none'}); an admin can add them")


def _refuse_gateway_options(options: Mapping[str, str]) -> None:
    """The options the gateway gives its sources (a checkpoint folder, a source's tag) are no one's to write, an
    admin's included: the folder is a path into the gateway's own files, and the tag decides where a stream resumes."""
    for key in options:
        if key.lower() in GATEWAY_SOURCE_OPTIONS:
            raise StatementNotAllowedError(f"not allowed: the option '{key}' is set by the gateway only",
                                           hint="leave it out: the gateway gives it to the sources it reads")


def _java_map(spark: SparkSession, scala_map: Any) -> dict[str, str]:
    jvm = spark._jvm
    assert jvm is not None  # typed optional; a session always has its JVM
    converters = jvm.scala.jdk.javaapi.CollectionConverters
    return {str(k): str(v) for k, v in dict(converters.asJava(scala_map)).items()}


def _global_temporary_view() -> StatementNotAllowedError:
    return StatementNotAllowedError(
        "not allowed: global temporary views are visible to every session of every user",
        hint="use CREATE TEMPORARY VIEW (this session only) or CREATE VIEW (a catalog view with grants)")
