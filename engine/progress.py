"""How far a statement's Spark work has got: its jobs, their stages and tasks, read from Spark's status tracker by
the statement's job group (the operation handle's hex, engine/sql.py).

Read on demand only (a GetOperationStatus that asks for progress, a read of `system.runtime.queries`, the shell's
line): a few calls into the JVM per job and stage, nothing kept between reads, nothing listening to Spark's events.
The tracker forgets old jobs (`spark.ui.retainedJobs`), so a statement whose jobs are gone shows none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# a stage's state as this module infers it (the tracker's stage info has no status; its job's has)
PENDING, RUNNING, SUCCEEDED, FAILED = "PENDING", "RUNNING", "SUCCEEDED", "FAILED"


@dataclass(frozen=True)
class StageProgress:
    stage_id: int
    attempt: int
    name: str
    state: str
    tasks: int
    completed: int
    active: int
    failed: int


@dataclass(frozen=True)
class Progress:
    """The jobs of one job group and their stages, in the order Spark numbered them."""

    job_ids: tuple[int, ...] = ()
    stages: tuple[StageProgress, ...] = ()

    @property
    def stages_done(self) -> int:
        return sum(stage.state == SUCCEEDED for stage in self.stages)

    @property
    def stages_total(self) -> int:
        return len(self.stages)

    @property
    def tasks_done(self) -> int:
        return sum(stage.completed for stage in self.stages)

    @property
    def tasks_total(self) -> int:
        return sum(stage.tasks for stage in self.stages)

    @property
    def fraction(self) -> float:
        """Tasks done of the tasks known, 0.0 to 1.0 (0.0 before any stage is known)."""
        return self.tasks_done / self.tasks_total if self.tasks_total else 0.0


NONE = Progress()


def _stage_state(info: Any, job_status: str) -> str:
    if job_status == "SUCCEEDED":
        return SUCCEEDED  # a skipped stage (its shuffle reused) counts as done with its job
    if info.numTasks and info.numCompletedTasks >= info.numTasks:
        return SUCCEEDED
    if job_status == "FAILED":
        return FAILED
    return RUNNING if info.numActiveTasks or info.numCompletedTasks else PENDING


def job_group_progress(spark_context: Any, group: str) -> Progress:
    """The progress of the jobs Spark ran or runs in `group` (NONE if it knows none)."""
    tracker = spark_context.statusTracker()
    job_ids = tuple(sorted(int(job) for job in tracker.getJobIdsForGroup(group)))
    stages: dict[int, StageProgress] = {}
    for job_id in job_ids:
        job = tracker.getJobInfo(job_id)
        if job is None:
            continue
        status = str(job.status)
        for stage_id in job.stageIds:
            if int(stage_id) in stages:
                continue
            info = tracker.getStageInfo(stage_id)
            if info is None:
                continue
            state = _stage_state(info, status)
            completed = info.numTasks if state == SUCCEEDED else info.numCompletedTasks
            stages[int(stage_id)] = StageProgress(int(stage_id), int(info.currentAttemptId), str(info.name), state,
                                                  int(info.numTasks), int(completed), int(info.numActiveTasks),
                                                  int(info.numFailedTasks))
    return Progress(job_ids, tuple(stages[key] for key in sorted(stages)))


def group_input(spark_context: Any, group: str) -> tuple[int, int] | None:
    """Rows and bytes the jobs of `group` read from their sources: the input metrics (records and bytes read by
    file scans, counted per batch) of each of their stages, as Spark's status store holds them once a stage ended.
    None when Spark knows no job of the group (the statement ran none, or the store has forgotten them)."""
    tracker = spark_context.statusTracker()
    job_ids = tracker.getJobIdsForGroup(group)
    if not job_ids:
        return None
    stage_ids: set[int] = set()
    for job_id in job_ids:
        job = tracker.getJobInfo(job_id)
        if job is not None:
            stage_ids.update(int(stage) for stage in job.stageIds)
    store = spark_context._jsc.sc().statusStore()
    rows = read_bytes = 0
    for stage_id in sorted(stage_ids):
        try:
            data = store.lastStageAttempt(stage_id)
        except Exception:  # noqa: BLE001 - py4j's error for a stage the store no longer (or never) held
            continue
        rows += int(data.inputRecords())
        read_bytes += int(data.inputBytes())
    return rows, read_bytes
