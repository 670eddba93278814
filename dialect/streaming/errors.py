"""Why a streaming table's query cannot run incrementally: one class per reason, each with a stable error class
and SQLSTATE (Spark's or Databricks' own where one exists), the offending node's position and a hint."""

from __future__ import annotations

from sluicegate.dialect.errors import DialectError


class StreamingQueryError(DialectError):
    error_class = "STREAMING_UNSUPPORTED_OPERATION"
    sqlstate = "0A000"


class NoStreamingSourceError(StreamingQueryError):
    error_class = "INVALID_FLOW_QUERY_TYPE.BATCH_RELATION_FOR_STREAMING_TABLE"
    sqlstate = "42000"


class UnknownSourceFunctionError(StreamingQueryError):
    error_class = "UNRESOLVABLE_TABLE_VALUED_FUNCTION"
    sqlstate = "42883"


class MissingSourceFormatError(StreamingQueryError):
    error_class = "STREAMING_SOURCE_FORMAT_REQUIRED"
    sqlstate = "42601"


class UnknownSourceFormatError(StreamingQueryError):
    error_class = "UNSUPPORTED_STREAMING_SOURCE_FORMAT"
    sqlstate = "0A000"


class InvalidKafkaOptionError(StreamingQueryError):
    """An option of read_kafka that is unknown, missing, contradicts another or holds a value it cannot take."""

    error_class = "INVALID_KAFKA_OPTION"
    sqlstate = "42616"


class RewrittenSourceError(StreamingQueryError):
    error_class = "STREAMING_SOURCE_NOT_APPEND_ONLY"
    sqlstate = "0A000"


class BucketingNotSupportedError(StreamingQueryError):
    """CLUSTERED BY ... INTO n BUCKETS (Hive's bucketing) on a streaming table: Delta has no buckets."""

    error_class = "UNSUPPORTED_FEATURE.STREAMING_TABLE_BUCKETING"


class PartitionedAndClusteredError(StreamingQueryError):
    """PARTITIONED BY and CLUSTER BY together, which Delta (and Databricks) refuse."""

    error_class = "SPECIFY_CLUSTER_BY_WITH_PARTITIONED_BY_IS_NOT_ALLOWED"
    sqlstate = "42908"


class SortNotSupportedError(StreamingQueryError):
    error_class = "STREAMING_UNSUPPORTED_OPERATION.SORT"


class LimitNotSupportedError(StreamingQueryError):
    error_class = "STREAMING_UNSUPPORTED_OPERATION.LIMIT"


class DistinctAggregateNotSupportedError(StreamingQueryError):
    error_class = "STREAMING_UNSUPPORTED_OPERATION.DISTINCT_AGGREGATE"


class NonTimeWindowNotSupportedError(StreamingQueryError):
    error_class = "NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING"


class ChainedAggregationNotSupportedError(StreamingQueryError):
    error_class = "STREAMING_UNSUPPORTED_OPERATION.CHAINED_AGGREGATION"


class UnsupportedStreamingJoinError(StreamingQueryError):
    error_class = "STREAMING_UNSUPPORTED_OPERATION.JOIN"


class OuterJoinWithoutWatermarkError(StreamingQueryError):
    error_class = "STREAMING_UNSUPPORTED_OPERATION.OUTER_JOIN_WITHOUT_WATERMARK"


class NonDeterministicFunctionError(StreamingQueryError):
    error_class = "STREAMING_UNSUPPORTED_OPERATION.NON_DETERMINISTIC_FUNCTION"


class UnsupportedSetOperationError(StreamingQueryError):
    error_class = "STREAMING_UNSUPPORTED_OPERATION.SET_OPERATION"


class InvalidOutputModeError(StreamingQueryError):
    error_class = "STREAMING_OUTPUT_MODE.INVALID"
    sqlstate = "42KDE"


class UnsupportedOutputModeError(StreamingQueryError):
    error_class = "STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION"
    sqlstate = "42KDE"


class GroupKeyNotInOutputError(StreamingQueryError):
    error_class = "STREAMING_GROUP_KEY_NOT_IN_OUTPUT"
    sqlstate = "42803"


class InvalidTriggerIntervalError(StreamingQueryError):
    error_class = "INVALID_TRIGGER_INTERVAL"
    sqlstate = "22023"


class CreateOrReplaceNotAllowedError(StreamingQueryError):
    error_class = "STREAMING_TABLE_OPERATION_NOT_ALLOWED.CREATE_OR_REPLACE"
    sqlstate = "42601"


class WatermarkNotOnColumnError(StreamingQueryError):
    error_class = "STREAMING_WATERMARK_EXPRESSION_NOT_SUPPORTED"


class InvalidExpectationError(StreamingQueryError):
    """An expectation that cannot be checked row by row, the same on every replay."""

    error_class = "INVALID_EXPECTATION"
    sqlstate = "42000"


class DuplicateExpectationNameError(InvalidExpectationError):
    error_class = "INVALID_EXPECTATION.DUPLICATE_NAME"
    sqlstate = "42710"


class ExpectationWithSubqueryError(InvalidExpectationError):
    error_class = "INVALID_EXPECTATION.SUBQUERY"
    sqlstate = "0A000"


class ExpectationWithAggregateError(InvalidExpectationError):
    error_class = "INVALID_EXPECTATION.AGGREGATE"
    sqlstate = "42903"


class ExpectationNotDeterministicError(InvalidExpectationError):
    error_class = "INVALID_EXPECTATION.NON_DETERMINISTIC"
    sqlstate = "42K0E"


class QuarantineNameTooLongError(InvalidExpectationError):
    error_class = "INVALID_EXPECTATION.QUARANTINE_NAME"
    sqlstate = "42602"
