"""``scanrag plan CONFIG``: what a run of the config would do, before anything is spent.

The run's own stages go as far as they can without a model: the config is checked and the
datasets loaded like a run's preflight, the documents ingested into the document cache, the
retrievers built (in a temporary folder: no run folder is created), and every item of every
grid cell run through the real strategy with :mod:`scanrag.runner.plan_calls`'s client, which
plans each prompt with the run's window and token counter and answers without a model. The
scoring stage then runs on those items with judges that record each call and send none.

Per grid cell the plan gives the items, the reader calls (by stage) and judge calls the run
would make, their prompt tokens (counted by the counter the run uses: a server's tokenizer,
an embedded model's, litellm's or the estimate, named per model), their ``max_tokens``, the
items that would be degraded (by reduction kind) and those that would lose gold pages, the
items that would end in an error before any call (input, retriever, ``on_degraded: fail``),
judge prompts too long to send, and the cost where every model's price is known: the prompt
tokens' price and, as an upper bound, the price of every call's ``max_tokens``.

Calls of strategies that decide as they go (``agentic_rag``, ``scan``) follow the path of a
reply that answers at once; a real reply may lead to more.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from scanrag.config import ExperimentConfig
from scanrag.protocols import ScoringFailedError, ScoringJob
from scanrag.runner import degraded as degradation
from scanrag.runner.components import (
    build_llm,
    build_strategies,
    document_paths,
    ingest_paths,
    mark_document_failures,
    strategy_settings,
)
from scanrag.runner.executors import LocalExecutor, RunJob
from scanrag.runner.items import WorkItem, pending_items, work_items
from scanrag.runner.manifest_build import cell_caps
from scanrag.runner.plan_calls import PlannedCalls, PlanRecorder, model_price
from scanrag.runner.preflight import Checked, preflight
from scanrag.runner.progress import RunProgress
from scanrag.schemas import Status, Trajectory
from scanrag.tasks import default_scorer_names

OVERFLOW = "exceeds the context window"  # how a judge prompt that cannot be sent is recorded


class CellPlan(BaseModel):
    """What one grid cell of the run would do."""

    run_key: str
    label: str = Field(description="The cell's label with its caps (full_doc ≤60p).")
    strategy: str
    items: int = 0
    reader_calls: int = 0
    reader_calls_by_stage: dict[str, int] = Field(default_factory=dict)
    reader_input_tokens: int = 0
    reader_max_output_tokens: int = 0
    judge_calls: int = 0
    judge_calls_by_stage: dict[str, int] = Field(default_factory=dict)
    judge_input_tokens: int = 0
    judge_max_output_tokens: int = 0
    judge_over_window: int = Field(
        default=0, description="Judge prompts too long for the judge's window (not sent)."
    )
    degraded: int = Field(default=0, description="Items reduced below the strategy's promise.")
    degraded_by_kind: dict[str, int] = Field(default_factory=dict)
    gold_pages_dropped: int = Field(default=0, description="Degraded items losing gold pages.")
    errors: dict[str, int] = Field(
        default_factory=dict, description="Items that would end in an error, by status."
    )
    usd_input: float | None = Field(
        default=None, description="Price of the prompt tokens (None: a price is unknown)."
    )
    usd_max: float | None = Field(
        default=None, description="Upper bound: prompt tokens plus every call's max_tokens."
    )


class RunPlan(BaseModel):
    """The plan of a config: per grid cell, and how tokens are counted per model."""

    name: str
    on_degraded: str
    cells: list[CellPlan] = Field(default_factory=list)
    token_counting: dict[str, str] = Field(
        default_factory=dict, description="Model → how its prompt tokens were counted."
    )
    prices: dict[str, list[float] | None] = Field(
        default_factory=dict, description="Model → USD per input and output token (None: unknown)."
    )
    warnings: list[str] = Field(default_factory=list)

    @property
    def items(self) -> int:
        return sum(c.items for c in self.cells)


def plan_run(config: ExperimentConfig, log: Callable[[str], None] | None = None) -> RunPlan:
    """Plan every item of ``config`` (see the module docstring); raises what a run's
    preflight raises for a config that cannot run."""
    say = log or (lambda _m: None)
    runner = config.runner
    progress = RunProgress(runner.progress, log=log, interval_s=runner.progress_interval_s)
    checked = preflight(config)
    datasets = checked.datasets
    cells = config.cells()
    strategies = build_strategies(cells)
    settings = strategy_settings(config.runner)
    gateway = build_llm(config.runner, config.model_entries(), origin="plan")
    recorder = PlanRecorder(gateway)
    plan = RunPlan(name=config.name, on_degraded=config.runner.on_degraded)
    with tempfile.TemporaryDirectory(prefix="scanrag-plan-") as tmp:
        job = _PlanJob(
            config=config,
            run_dir=Path(tmp),  # checkpoints and indexes of this plan only
            strategies=strategies,
            datasets={d.name: d for d in datasets},
            settings=settings,
            retriever_specs=checked.retrievers,
        )
        job.recorder = recorder
        pending = pending_items(cells, datasets, set())
        executor = LocalExecutor(config.runner)
        corpus = any(cell.retriever for cell, _, _ in pending)
        paths = document_paths(job.datasets.values(), corpus=corpus)
        with progress.stage("ingest", len(paths)) as stage:
            _ingest(job, config, paths, stage.advance, say)
        aliases = sorted({cell.retriever for cell in cells if cell.retriever})
        with progress.stage("index", len(aliases)) as stage:
            job.phase = stage.set_doing
            retriever_errors = executor.build_retrievers(job, aliases, lambda _a: stage.advance())
        for message in retriever_errors.values():
            say(message)
        items = work_items(pending, retriever_errors)
        trajectories: list[Trajectory] = []
        with progress.stage("plan", len(items)) as stage:

            def sink(trajectory: Trajectory) -> None:
                trajectories.append(trajectory)
                stage.advance(error=trajectory.status != Status.OK)

            executor.run_items(job, items, sink, lambda: None)
        with progress.stage("judges", len(trajectories)) as stage:
            over_window = _plan_judges(
                config, checked, trajectories, recorder, plan.warnings, stage.advance
            )
    for cell in cells:
        strategy = strategies.get(cell.run_key)
        label = cell_caps(strategy, settings).get("cap_label") or ""
        own = [t for t in trajectories if t.run_key == cell.run_key]
        plan.cells.append(
            _cell_plan(cell.run_key, cell.strategy.name, label, own, recorder, over_window)
        )
    plan.token_counting = dict(sorted(recorder.methods.items()))
    models = {
        m for c in (*recorder.readers.values(), *recorder.judges.values()) for m in c.by_model
    }
    plan.prices = {m: _as_list(model_price(gateway, m)) for m in sorted(models)}
    for cell_plan in plan.cells:
        _price(cell_plan, recorder, plan.prices)
    return plan


class _PlanJob(RunJob):
    """A run's job whose items each get their cell's view of the plan recorder."""

    recorder: PlanRecorder

    def context(self, item: WorkItem) -> Any:
        self.llm = self.recorder.view(item.run_key)
        return super().context(item)


def _ingest(
    job: RunJob,
    config: ExperimentConfig,
    paths: Sequence[Path],
    advance: Callable[[], None],
    say: Callable[[str], None],
) -> None:
    """The documents into the document cache, as a run ingests them (the run reuses them)."""
    from scanrag.documents import PageRenderer

    cache = Path(config.runner.cache_dir)
    result = ingest_paths(paths, cache / "documents", on_done=lambda _p: advance())
    job.documents = result.documents
    mark_document_failures(list(job.datasets.values()), result)
    for reason in result.failures.values():
        say(f"ingest failed: {reason}")
    job.renderer = PageRenderer(cache / "pages", dpi=config.runner.render_dpi)


def _plan_judges(
    config: ExperimentConfig,
    checked: Checked,
    trajectories: Sequence[Trajectory],
    recorder: PlanRecorder,
    warnings: list[str],
    advance: Callable[[], None],
) -> Counter[str]:
    """Run the scoring stage on the planned items, cell by cell, with judges that record and
    send nothing; returns the judge prompts per cell too long for the judge's window.
    ``advance`` is called once per item scored."""
    over: Counter[str] = Counter()
    if not config.scoring.enabled or not trajectories:
        return over
    from scanrag.runner.scoring import backend

    scoring = checked.scoring or backend()
    datasets = checked.datasets
    samples = {s.id: s for d in datasets for s in d.samples}
    names = config.scoring.scorers
    if names is None:
        names = default_scorer_names(sorted({s.task for s in samples.values()}))
    base = ScoringJob(
        samples=samples,
        scorers=list(names),
        params=config.scoring.params,
        judges=config.judge_models(),
        judge_prompts=dict(config.scoring.judge_prompts),
        pdf_dirs=[d.pdf_dir for d in datasets],
        cache_dir=Path(config.runner.cache_dir),
        dpi=config.runner.render_dpi,
        allow_outside_pdf_dir=any(d.allow_outside for d in datasets),
        concurrency=config.runner.concurrency,
    )
    by_cell: dict[str, list[Trajectory]] = {}
    for trajectory in trajectories:
        by_cell.setdefault(str(trajectory.run_key), []).append(trajectory)
    for run_key, own in by_cell.items():
        seen: set[str] = set()

        def on_row(row: Any, key: str = run_key, seen: set[str] = seen) -> None:
            judged = getattr(row, "judges", None) or []
            over[key] += sum(1 for j in judged if j.error and OVERFLOW in j.error)
            if row.sample_id not in seen:  # an item's first row
                seen.add(row.sample_id)
                advance()

        job = replace(base, trajectories=own, llm=recorder.view(run_key, judge=True), on_row=on_row)
        try:
            asyncio.run(scoring.score(job))
        except ScoringFailedError as exc:
            warnings.append(f"{run_key}: scoring could not be planned for some items: {exc}")
    return over


def _cell_plan(
    run_key: str,
    strategy: str,
    label: str,
    trajectories: Sequence[Trajectory],
    recorder: PlanRecorder,
    over_window: Mapping[str, int],
) -> CellPlan:
    rows = [t.model_dump(mode="json") for t in trajectories]
    degraded = degradation.by_cell(rows).get(run_key, degradation.CellDegradation())
    errors = Counter(str(t.status) for t in trajectories if t.status != Status.OK)
    reader = recorder.readers.get(run_key) or PlannedCalls()
    judge = recorder.judges.get(run_key) or PlannedCalls()
    return CellPlan(
        run_key=run_key,
        label=f"{run_key} {label}".strip(),
        strategy=strategy,
        items=len(trajectories),
        reader_calls=reader.calls,
        reader_calls_by_stage=dict(sorted(reader.by_stage.items())),
        reader_input_tokens=reader.prompt_tokens,
        reader_max_output_tokens=reader.max_output_tokens,
        judge_calls=judge.calls,
        judge_calls_by_stage=dict(sorted(judge.by_stage.items())),
        judge_input_tokens=judge.prompt_tokens,
        judge_max_output_tokens=judge.max_output_tokens,
        judge_over_window=over_window.get(run_key, 0),
        degraded=len(degraded.degraded),
        degraded_by_kind=dict(sorted(degraded.kinds.items())),
        gold_pages_dropped=len(degraded.gold_lost),
        errors=dict(sorted(errors.items())),
    )


def _price(
    cell: CellPlan, recorder: PlanRecorder, prices: Mapping[str, list[float] | None]
) -> None:
    """The cell's cost where every model it calls has a known price."""
    calls = [recorder.readers.get(cell.run_key), recorder.judges.get(cell.run_key)]
    spent = [(m, t) for c in calls if c is not None for m, t in c.by_model.items()]
    if any(prices.get(model) is None for model, _ in spent):
        return
    usd_input = usd_output = 0.0
    for model, (tokens, max_out) in spent:
        price_in, price_out = prices[model] or (0.0, 0.0)
        usd_input += tokens * price_in
        usd_output += max_out * price_out
    cell.usd_input, cell.usd_max = usd_input, usd_input + usd_output


def _as_list(price: tuple[float, float] | None) -> list[float] | None:
    return None if price is None else [price[0], price[1]]
