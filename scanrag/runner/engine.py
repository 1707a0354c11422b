"""The experiment runner: ingest → index → run → score → summary, resumable at every step.

A run lives in ``runs/<YYYYmmdd-HHMMSS>_<name>/``. Rows are keyed by ``(run_key, sample_id)``;
a resume re-reads the rows already written and only runs (and scores) what is missing, so no
row is lost or written twice. Per-item failures are rows with a status, never a crash; a spent
budget, a full disk or Ctrl-C stop the session cleanly with a resumable run directory.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from scanrag.config import ExperimentConfig, RunCell
from scanrag.llm.types import ChatModel
from scanrag.protocols import ScoringBackend, Strategy
from scanrag.rundir import DiskFullError, RunDir, digest_usage, disk_full_reason, row_key
from scanrag.runner import datasets as run_datasets
from scanrag.runner import degraded as degradation
from scanrag.runner.components import (
    LoadedDataset,
    build_llm,
    build_strategies,
    document_paths,
    ingest_paths,
    mark_document_failures,
    strategy_settings,
)
from scanrag.runner.executors import Executor, RunJob, make_executor
from scanrag.runner.items import WorkItem, pending_items, work_items
from scanrag.runner.manifest import now_iso
from scanrag.runner.manifest_build import build_manifest, update_manifest
from scanrag.runner.outcome import (
    Stop,
    StopKind,
    all_judged_failed,
    exit_code,
    judge_failure_lines,
    run_outcome,
)
from scanrag.runner.preflight import Checked
from scanrag.runner.progress import Log, RunProgress, stderr_log
from scanrag.runner.scoring import score_run_dir, scoring_job
from scanrag.runner.summary import build_summary, write_summary
from scanrag.runner.usage import Budget, UsageTally
from scanrag.schemas import Status, Trajectory, Usage
from scanrag.scrub import scrub_data

# Item statuses ``--retry-errors`` runs again: provider, code and retriever failures, and input
# errors (a PDF added or fixed since; the samples are checked against the PDFs again on resume).
RETRYABLE = frozenset(
    {Status.MODEL_ERROR, Status.INTERNAL_ERROR, Status.RETRIEVER_ERROR, Status.INPUT_ERROR}
)


@dataclass
class RunResult:
    run_dir: Path
    complete: bool
    stop: Stop | None
    summary: dict[str, Any]
    failure_code: int = 0  # from the items' statuses: see scanrag.runner.outcome

    @property
    def stop_reason(self) -> str | None:
        """The stop's message, as ``summary.json`` records it."""
        return None if self.stop is None else self.stop.message

    @property
    def exit_code(self) -> int:
        """When complete: 0, or 5 when every item of a grid cell failed, 6 when the share of
        failed items passed ``runner.fail_threshold``. Otherwise the stop's code (3 budget,
        4 full disk, 130 Ctrl-C), or 1 (:mod:`scanrag.runner.outcome`)."""
        return exit_code(self.complete, self.stop, self.failure_code)


class Runner:
    """One session of a run (a fresh start or a resume)."""

    def __init__(
        self,
        config: ExperimentConfig,
        run_dir: RunDir,
        *,
        strategies: dict[str, Strategy] | None = None,
        llm: ChatModel | None = None,
        progress: RunProgress | None = None,
        log: Log | None = stderr_log,
        resuming: bool = False,
        retry_errors: bool = False,
        judge_llm: ChatModel | None = None,
        checked: Checked | None = None,
        scoring: ScoringBackend | None = None,
    ) -> None:
        self.config = config
        self.run_dir = run_dir
        self.cells: list[RunCell] = config.cells()
        self.strategies = strategies
        self.llm = llm
        self.judge_llm = judge_llm
        self.log: Callable[[str], None] = log or (lambda _m: None)
        self.progress = progress or RunProgress(
            config.runner.progress, log=log, interval_s=config.runner.progress_interval_s
        )
        self.resuming = resuming
        self.retry_errors = retry_errors
        interval = config.runner.fsync_interval_s
        self.trajectories = run_dir.log(RunDir.TRAJECTORIES, fsync_interval_s=interval)
        self.scores = run_dir.log(RunDir.SCORES, fsync_interval_s=interval)
        self.budget = Budget(config.runner.budget.usd, config.runner.budget.tokens)
        self.datasets: list[LoadedDataset] = []
        # what preflight loaded and bound (a fresh start); a resume resolves as it goes
        self.preloaded = checked.datasets if checked is not None else None
        self.retriever_specs = checked.retrievers if checked is not None else None
        self.scoring = checked.scoring if checked is not None else scoring
        self.job: RunJob | None = None
        self.score_pending: int | None = None
        self.session: dict[str, Any] = {
            "started": now_iso(),
            "resumed": resuming,
            "executor": config.runner.executor,
            "pid": os.getpid(),
            "argv": scrub_data(sys.argv[1:]),
        }

    # ------------------------------------------------------------------ entry point

    def execute(self) -> RunResult:
        self.run_dir.acquire()
        executor: Executor | None = None
        try:
            executor = make_executor(self.config.runner)
            return self._execute(executor)
        finally:
            self.trajectories.close()
            self.scores.close()
            if executor is not None:
                executor.close()
            self.run_dir.release()

    def _execute(self, executor: Executor) -> RunResult:
        self._repair_logs()
        datasets = self.datasets = self._datasets()
        strategies = self.strategies or build_strategies(self.cells)
        if self.retry_errors:
            self._drop_failed_rows()
        # What earlier sessions spent and did, from the logs' row indexes (rundir.index):
        # a resume does not parse its logs again.
        done = self.trajectories.digests()
        prior = digest_usage(done).add(digest_usage(self.scores.digests()))
        job = RunJob(
            config=self.config,
            run_dir=self.run_dir.path,
            strategies=strategies,
            datasets={d.name: d for d in datasets},
            settings=strategy_settings(self.config.runner),
            retriever_specs=self.retriever_specs,
        )
        self.job = job
        manifest = build_manifest(self.config, self.run_dir, self.cells, strategies, datasets)
        for warning in manifest.get("warnings", []):
            if str(warning.get("at", "")) >= self.session["started"]:
                self.log(f"warning: {warning['message']}")
        manifest = self._record_session(manifest)
        stop: Stop | None = None
        try:
            pending = self._pending(datasets, done)
            if pending:
                self._ingest(job, executor, corpus=any(cell.retriever for cell, _, _ in pending))
                job.llm = self._client(executor)
                retriever_errors = self._index(job, executor, pending)
                manifest = update_manifest(manifest, job, retriever_errors)
                self.run_dir.write_json(RunDir.MANIFEST, manifest)
                items = self._plan(job, pending, retriever_errors)
                stop = self._run(job, executor, items, prior)
            if stop is None and self.config.scoring.enabled:
                stop = self._score(job, prior)
        except DiskFullError as exc:
            stop = Stop(StopKind.DISK_FULL, disk_full_reason(exc))
        except KeyboardInterrupt:
            stop = Stop(StopKind.INTERRUPTED, "interrupted")
        return self._finish(stop, manifest)

    # ------------------------------------------------------------------ stages

    def _repair_logs(self) -> None:
        for log in (self.trajectories, self.scores):
            removed = log.repair()
            if removed:
                self.log(f"repaired {log.path.name}: removed a torn last line ({removed} bytes)")

    def _drop_failed_rows(self) -> None:
        failed = {row_key(r) for r in self.trajectories.rows() if r.get("status") in RETRYABLE}
        if not failed:
            return
        self.trajectories.rewrite(lambda r: row_key(r) not in failed)
        self.scores.rewrite(lambda r: row_key(r) not in failed)
        self.log(f"retrying {len(failed)} failed item(s)")

    def _datasets(self) -> list[LoadedDataset]:
        specs, cache_dir = self.config.datasets, Path(self.config.runner.cache_dir)
        if self.resuming:
            datasets = run_datasets.reload(specs, cache_dir, self.run_dir)
        elif self.preloaded is not None:
            datasets = run_datasets.freeze(self.preloaded, self.run_dir)
        else:
            datasets = run_datasets.load_fresh(specs, cache_dir, self.run_dir)
        for dataset in datasets:
            self.log(run_datasets.load_line(dataset))
        return datasets

    def _pending(
        self, datasets: Sequence[LoadedDataset], digests: Sequence[dict[str, Any]]
    ) -> list[tuple[RunCell, LoadedDataset, Any]]:
        done = {tuple(d["key"]) for d in digests if "key" in d}
        return pending_items(self.cells, datasets, done)

    def _ingest(self, job: RunJob, executor: Executor, corpus: bool = False) -> None:
        """Ingest the documents of the items, and with ``corpus`` every document the datasets
        name: retrievers index the whole dataset, so ``--limit`` or ``ids`` never change
        their statistics (BM25's idf and average length)."""
        paths = document_paths(job.datasets.values(), corpus=corpus)
        cache = Path(self.config.runner.cache_dir) / "documents"
        # An executor may ingest on its own workers (ray: sharded by document).
        ingest = getattr(executor, "ingest", None) or ingest_paths
        with self.progress.stage("ingest", len(paths)) as stage:
            result = ingest(paths, cache, on_done=lambda _p: stage.advance())
        job.documents = result.documents
        mark_document_failures(list(job.datasets.values()), result)
        for reason in result.failures.values():
            self.log(f"ingest failed: {reason}")
        from scanrag.documents import PageRenderer

        job.renderer = PageRenderer(
            Path(self.config.runner.cache_dir) / "pages", dpi=self.config.runner.render_dpi
        )

    def _index(self, job: RunJob, executor: Executor, pending: Sequence[Any]) -> dict[str, str]:
        aliases = sorted({cell.retriever for cell, _, _ in pending if cell.retriever})
        if not aliases:
            return {}
        with self.progress.stage("index", len(aliases)) as stage:
            job.phase = stage.set_doing
            try:
                errors = executor.build_retrievers(job, aliases, lambda _a: stage.advance())
            finally:
                job.phase = None
        for message in errors.values():
            self.log(message)
        return errors

    def _plan(
        self, job: RunJob, pending: Sequence[Any], retriever_errors: dict[str, str]
    ) -> list[WorkItem]:
        return work_items(pending, retriever_errors)

    def _gate(self, prior: Usage, *tallies: UsageTally) -> Callable[[], Stop | None]:
        def gate() -> Stop | None:
            if not self.budget.enabled:
                return None
            spent = prior
            for tally in tallies:
                spent = spent.add(tally.total())
            return self.budget.exceeded(spent)

        return gate

    def _client(self, executor: Executor) -> ChatModel | None:
        """The model client: the injected one, else the gateway (built in each Ray worker)."""
        if self.llm is not None or executor.name != "local":
            return self.llm
        return self._gateway()

    def _gateway(self) -> ChatModel:
        config = self.config
        return build_llm(config.runner, config.model_entries(), origin=self.run_dir.path.name)

    def _run(
        self, job: RunJob, executor: Executor, items: list[WorkItem], prior: Usage
    ) -> Stop | None:
        with self.progress.stage("run", len(items)) as stage:

            def sink(trajectory: Trajectory) -> None:
                self.trajectories.append(trajectory)
                stage.advance(usage=trajectory.total_usage, error=trajectory.status != Status.OK)

            stop = executor.run_items(job, items, sink, self._gate(prior, job.run_tally))
        self.session["usage_run"] = job.run_tally.to_json()
        return stop

    def _score(self, job: RunJob, prior: Usage) -> Stop | None:
        tally = UsageTally()
        self.trajectories.flush()
        scoring, warnings = scoring_job(self.run_dir, self.config)
        scoring = replace(
            scoring, llm=self.judge_llm or self.llm or job.llm, retry_failed=self.retry_errors
        )
        outcome = score_run_dir(
            self.run_dir,
            scoring,
            scores=self.scores,
            make_llm=self._gateway,
            progress=self.progress,
            tally=tally,
            gate=self._gate(prior, job.run_tally, tally),
            scoring=self.scoring,
        )
        self.score_pending = outcome.pending
        self.session["usage_score"] = tally.to_json()
        for warning in warnings:
            self.log(f"scoring: {warning}")
        if outcome.failures:
            self.session["scoring_failures"] = len(outcome.failures)
            self.log(f"scoring: {len(outcome.failures)} pair(s) failed; a resume retries them")
        return outcome.stop

    # ------------------------------------------------------------------ bookkeeping

    def _record_session(self, manifest: dict[str, Any]) -> dict[str, Any]:
        manifest.setdefault("sessions", []).append(self.session)
        self.run_dir.write_json(RunDir.MANIFEST, manifest)
        return manifest

    def _finish(self, stop: Stop | None, manifest: dict[str, Any]) -> RunResult:
        ledger = getattr(self.job.llm if self.job else None, "ledger", None)
        if ledger is not None and callable(getattr(ledger, "snapshot", None)):
            snapshot = dict(ledger.snapshot())
            snapshot.pop("records", None)
            self.session["ledger"] = snapshot
        self.session["finished"] = now_iso()
        reason = stop.message if stop is not None else None
        self.session["stop_reason"] = reason
        self.session["stages"] = self.progress.stages
        samples = {s.id: s for d in self.datasets for s in d.samples}
        args = (self.run_dir, self.config, reason, manifest)
        pending, scoring = self.score_pending, self.scoring
        try:
            self.run_dir.write_json(RunDir.MANIFEST, manifest)
            summary = write_summary(*args, samples=samples, score_pending=pending, backend=scoring)
        except (DiskFullError, OSError) as exc:
            self.log(f"could not write the summary: {exc}")
            if stop is None:
                stop = Stop(StopKind.DISK_FULL, disk_full_reason(exc))
            summary = build_summary(*args, samples=samples, score_pending=pending, backend=scoring)
        if stop is not None:
            self.log(f"stopped: {stop}")
        elif not summary["complete"]:
            pending = summary["counts"].get("score_pending")
            self.log(f"incomplete: {pending} (trajectory, scorer) pair(s) still unscored")
        rows = list(self.trajectories.rows())
        keys = [cell.run_key for cell in self.cells]
        outcome = run_outcome(rows, keys, self.config.runner.fail_threshold)
        outcome.judge_failed = all_judged_failed(summary)
        for line in judge_failure_lines(summary) + outcome.lines():
            self.log(line)
        cells = degradation.by_cell(r for r in rows if r.get("run_key") in set(keys))
        for line in degradation.report_lines(cells, self.config.runner.on_degraded):
            self.log(line)
        if not summary["complete"]:
            self.log(f"resume with: scanrag run --resume {self.run_dir.path}")
        complete = stop is None and summary["complete"]
        return RunResult(self.run_dir.path, complete, stop, summary, outcome.exit_code())
