"""Where a query stands, read from its own checkpoint: the start of the next micro-batch of one Python source.

Spark 4.1 asks a Python source for its latest offset without saying where the batch starts, so a capped source
(maxOffsetsPerTrigger, maxFilesPerTrigger) only knows the start once it has returned an end itself, and the first
batch of each run of the query would read the whole backlog. Spark keeps the start in the checkpoint: a run resumes at
the newest batch N of `<checkpoint>/offsets/` (an uncommitted N is run again with its logged offsets, then N+1 is
planned; a committed N is followed by N+1), so either way the next batch starts at N's logged end
(MicroBatchExecution.populateStartOffsets). An offsets file is `v1`, the metadata JSON, then one line per source in
the query's source order (`-` for a source without an offset); a source finds its line by the tag it writes into
every offset it returns (the gateway names each source; the query's source order is Spark's, not the definition's).

Both options are set by the gateway only (engine/streams/sources.py): the policy refuses them in users' options.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

CHECKPOINT_OPTION = "sluicegateCheckpoint"   # the query's checkpoint folder (local: the cache Spark writes)
TAG_OPTION = "sluicegateSourceTag"           # the source's name within the query, written into its offsets
INTERNAL_OPTIONS = frozenset({CHECKPOINT_OPTION.lower(), TAG_OPTION.lower()})
TAG_FIELD = "@source"     # the offset field holding the tag ('@' is in no Kafka topic name nor offset field)
OFFSETS_VERSION = "v1"

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LoggedStart:
    """What the checkpoint says about a source's next batch."""

    batch: int | None                # the newest batch in the offset log; None: none yet (a new query)
    offset: dict[str, Any] | None    # the source's logged end of that batch, untagged; None: no line has its tag


def newest_batch(checkpoint: str) -> int | None:
    """The highest batch id with an offsets file (Spark's temp files, `.N.<uuid>.tmp`, are not entries)."""
    folder = os.path.join(checkpoint, "offsets")
    try:
        ids = [int(name) for name in os.listdir(folder) if name.isdigit()]
    except FileNotFoundError:
        return None
    return max(ids, default=None)


def logged_start(checkpoint: str, tag: str) -> LoggedStart:
    """The start of the next micro-batch of the source tagged `tag`, from the newest offsets file of `checkpoint`."""
    batch = newest_batch(checkpoint)
    if batch is None:
        return LoggedStart(None, None)
    with open(os.path.join(checkpoint, "offsets", str(batch)), encoding="utf-8") as logged:
        lines = logged.read().splitlines()
    if not lines or lines[0].strip() != OFFSETS_VERSION:
        log.warning("checkpoint %s: offsets/%d is not an offset log Spark 4.1 writes (%r)", checkpoint, batch,
                    lines[:1])
        return LoggedStart(batch, None)
    for line in lines[2:]:
        offset = _parsed(line)
        if offset is not None and offset.get(TAG_FIELD) == tag:
            return LoggedStart(batch, untagged(offset))
    return LoggedStart(batch, None)


def _parsed(line: str) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None        # `-`: a source with no offset
    return value if isinstance(value, dict) else None


def tagged(offset: Mapping[str, Any], tag: str | None) -> dict[str, Any]:
    """`offset` as the source returns it to Spark: its fields, then the tag (always in this order, since Spark
    compares offsets as JSON text)."""
    plain = untagged(offset)
    return {**plain, TAG_FIELD: tag} if tag else plain


def untagged(offset: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in offset.items() if key != TAG_FIELD}


@dataclass(frozen=True)
class RunStart:
    """The gateway's options for a source, read once per run of the query by the source's stream reader."""

    checkpoint: str | None
    tag: str | None

    @classmethod
    def of(cls, options: Mapping[str, str]) -> RunStart:
        lowered = {key.lower(): value for key, value in options.items()}
        return cls(lowered.get(CHECKPOINT_OPTION.lower()) or None, lowered.get(TAG_OPTION.lower()) or None)

    def start(self, initial: Any, source: str) -> dict[str, Any] | None:
        """Where this run's first batch starts: the checkpoint's logged offset for this source, or `initial()` (the
        source's initial offset, untagged) when no batch is logged yet; None when unknown (no checkpoint given, as
        for a one-batch scheduled pass, or offsets written before sources were tagged): the batch is not capped."""
        if self.checkpoint is None or self.tag is None:
            return None
        found = logged_start(self.checkpoint, self.tag)
        if found.batch is None:
            return initial()
        if found.offset is None:
            log.info("%s: batch %d in checkpoint %s has no offset tagged %s (written before sources were tagged): "
                     "the first micro-batch of this run is not capped", source, found.batch, self.checkpoint,
                     self.tag)
        return found.offset
