"""Fake components for the runner tests: a reader strategy, a word-overlap retriever and a
scripted model. Imported as a config ``plugin``, so subprocesses and Ray workers get them too.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scanrag.hashing import stable_hash
from scanrag.llm.scripted import ScriptedModel, register_scripted
from scanrag.llm.types import ChatRequest, Message, ModelError
from scanrag.protocols import StrategyContext
from scanrag.registry import RETRIEVERS, STRATEGIES
from scanrag.schemas import Document, PageHit, Sample, Trajectory

MODEL_NAME = "scripted/fake-echo"
PROMPT = "Answer from the context. Question: {question}\nContext: {context}"
PROMPT_HASH = stable_hash(PROMPT)
_VALUE = re.compile(r"secret value of item (\S+) is (\w+)")
_ITEM = re.compile(r"item (\S+)\?")


def answer_for(request: ChatRequest) -> str:
    """Finds the value of the item the question asks about in the context it was given."""
    text = request.messages[-1].text
    if text.startswith("JUDGE "):
        return judge_reply(request)
    if "PROVIDER-DOWN" in text:
        raise ModelError(request.model, "provider returned 503 after retries")
    asked = _ITEM.search(text)
    values = dict(_VALUE.findall(text))
    if asked and asked.group(1) in values:
        return values[asked.group(1)]
    return "Unanswerable"


MODEL = register_scripted(
    "fake-echo", ScriptedModel(responder=answer_for, name=MODEL_NAME, cost_per_token=1e-5)
)


@STRATEGIES.register("fake_reader", replace=True)
class FakeReader:
    """Retrieves (when given a retriever) or reads the first pages, then asks the model."""

    name = "fake_reader"

    def __init__(self, k: int = 2, delay_s: float = 0.0, crash_on: Sequence[str] = ()) -> None:
        self.k = k
        self.delay_s = delay_s
        self.crash_on = set(crash_on)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "k": self.k, "prompt_hashes": {"reader": PROMPT_HASH}}

    async def run(self, sample: Sample, ctx: StrategyContext) -> Trajectory:
        if sample.id in self.crash_on:
            raise RuntimeError(f"strategy bug on {sample.id}")
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        document = ctx.documents[sample.primary_doc]
        if ctx.retriever is not None:
            hits = ctx.retriever.search(sample.question, self.k, doc_ids=[document.id])
            pages = [hit.page for hit in hits]
        else:
            pages = [p.number for p in document.pages[: self.k]]
        context = "\n".join(document.page(p).text for p in pages)
        request = ChatRequest(
            model=ctx.model_for("reader"),
            messages=[
                Message(
                    role="user", content=PROMPT.format(question=sample.question, context=context)
                )
            ],
            stage="reader",
            prompt_hash=PROMPT_HASH,
        )
        response = await ctx.llm.chat(request)
        return Trajectory(
            sample_id=sample.id,
            strategy=self.name,
            doc_ids=[document.id],
            pages=sorted(pages),
            answer=response.text,
            raw_output=response.text,
            prompt_hashes={"reader": PROMPT_HASH},
        )


@RETRIEVERS.register("fake_overlap", replace=True)
class OverlapRetriever:
    """Pages ranked by the number of query words they contain."""

    name = "fake_overlap"

    def __init__(self, lowercase: bool = True) -> None:
        self.lowercase = lowercase
        self.pages: list[tuple[str, int, set[str]]] = []

    def _words(self, text: str) -> set[str]:
        return set(re.findall(r"\w+", text.lower() if self.lowercase else text))

    def add(self, documents: Sequence[Document]) -> None:
        for doc in documents:
            self.pages += [(doc.id, p.number, self._words(p.text)) for p in doc.pages]

    def search(self, query: str, k: int, doc_ids: Sequence[str] | None = None) -> list[PageHit]:
        words = self._words(query)
        scored = [
            (len(words & page_words), doc_id, number)
            for doc_id, number, page_words in self.pages
            if doc_ids is None or doc_id in doc_ids
        ]
        scored.sort(key=lambda t: (-t[0], t[1], t[2]))
        return [
            PageHit(doc_id=d, page=n, score=float(s), rank=i + 1)
            for i, (s, d, n) in enumerate(scored[:k])
        ]

    def search_batch(
        self, queries: Sequence[str], k: int, doc_ids: Sequence[str] | None = None
    ) -> list[list[PageHit]]:
        return [self.search(q, k, doc_ids) for q in queries]

    def manifest(self) -> dict[str, Any]:
        return {"retriever": self.name, "pages": len(self.pages), "lowercase": self.lowercase}


@RETRIEVERS.register("fake_mortal", replace=True)
class MortalRetriever(OverlapRetriever):
    """Its process dies on its first search (once per ``marker`` file): a crashed actor."""

    name = "fake_mortal"

    def __init__(self, marker: str, lowercase: bool = True) -> None:
        super().__init__(lowercase)
        self.marker = Path(marker)

    def search(self, query: str, k: int, doc_ids: Sequence[str] | None = None) -> list[PageHit]:
        if not self.marker.exists():
            self.marker.write_text(str(os.getpid()))
            os._exit(1)
        return super().search(query, k, doc_ids)


@RETRIEVERS.register("fake_broken", replace=True)
class BrokenRetriever(OverlapRetriever):
    name = "fake_broken"

    def add(self, documents: Sequence[Document]) -> None:
        raise RuntimeError("index build failed")


def make_dataset(root: Path, docs: int = 3, pages: int = 4) -> Path:
    """PDFs whose page p of doc d states one value, and one question per page."""
    import pymupdf

    pdf_dir = root / "pdfs"
    pdf_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for d in range(docs):
        pdf = pymupdf.open()
        for p in range(1, pages + 1):
            page = pdf.new_page()
            value = f"v{d}x{p}"
            page.insert_text((72, 100), f"Report {d} section {p}.")
            page.insert_text((72, 130), f"The secret value of item D{d}P{p} is {value} today.")
            rows.append(
                {
                    "id": f"q{d}-{p}",
                    "doc": f"doc{d}.pdf",
                    "question": f"What is the secret value of item D{d}P{p}?",
                    "answer": value,
                    "answer_format": "Str",
                    "evidence_pages": [p],
                }
            )
        pdf.save(pdf_dir / f"doc{d}.pdf")
        pdf.close()
    path = root / "questions.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def make_config(root: Path, **sections: Any) -> dict[str, Any]:
    """A config over ``make_dataset(root)`` with a retrieval and a closed-book reader."""
    questions = root / "questions.jsonl"
    if not questions.is_file():
        make_dataset(root)
    config: dict[str, Any] = {
        "name": "fake",
        "plugins": ["runner_fakes"],
        "datasets": [{"name": "toy", "path": str(questions), "pdf_dir": str(root / "pdfs")}],
        "retrievers": {"overlap": {"type": "fake_overlap"}},
        "strategies": [
            {"name": "fake_reader", "label": "rag", "retriever": "overlap", "params": {"k": 1}},
            {"name": "fake_reader", "label": "first_pages", "params": {"k": 2}},
        ],
        "models": {"agents": {"reader": MODEL_NAME}},
        "runner": {
            "cache_dir": str(root / "cache"),
            "runs_dir": str(root / "runs"),
            "progress": False,
            "concurrency": 4,
        },
        "scoring": {"enabled": False},
    }
    for key, value in sections.items():
        if isinstance(value, dict) and isinstance(config.get(key), dict):
            config[key] = {**config[key], **value}
        else:
            config[key] = value
    return config


# ----------------------------------------------------------------------------- scorers

from pydantic import BaseModel  # noqa: E402

from scanrag.evaluation.base import PureScorer, Scorer, mean_metric  # noqa: E402
from scanrag.evaluation.judging import JudgeContext  # noqa: E402
from scanrag.evaluation.schemas import AggregateResult, ScoreRow  # noqa: E402
from scanrag.registry import SCORERS  # noqa: E402


@SCORERS.register("fake_exact", replace=True)
class ExactScorer(PureScorer):
    """1 when the answer equals the gold answer exactly."""

    name = "fake_exact"

    def compute(
        self, trajectory: Trajectory, sample: Sample, judge: JudgeContext | None = None
    ) -> ScoreRow:
        correct = float(trajectory.answer == sample.answer)
        return self.new_row(trajectory, sample, metrics={"correct": correct})

    def aggregate(self, rows: Sequence[ScoreRow], group: Any, stats: Any) -> AggregateResult:
        values = [r.metrics["correct"] for r in rows if r.metrics.get("correct") is not None]
        return AggregateResult(metrics={"accuracy": mean_metric(values, stats, headline=True)})


class Verdict(BaseModel):
    same: bool


@SCORERS.register("fake_judge", replace=True)
class JudgeScorer(Scorer):
    """Asks the ``answer`` judge whether the answer matches (exercises judge usage)."""

    name = "fake_judge"
    roles = ("answer",)

    async def score(
        self, trajectory: Trajectory, sample: Sample, *, judge: JudgeContext | None = None
    ) -> ScoreRow:
        row = self.new_row(trajectory, sample)
        if judge is None:
            return self.skip(trajectory, sample, "no judge")
        messages = [Message(role="user", content=f"JUDGE {trajectory.answer} vs {sample.answer}")]
        record, verdict = await judge.judge("answer", messages, Verdict, "fakejudge1")
        row.add_judge(record)
        if verdict is None:
            row.status = record.status
            return row
        row.metrics["same"] = float(verdict.same)
        return row

    def aggregate(self, rows: Sequence[ScoreRow], group: Any, stats: Any) -> AggregateResult:
        values = [r.metrics["same"] for r in rows if r.metrics.get("same") is not None]
        return AggregateResult(metrics={"agree": mean_metric(values, stats)})


def judge_reply(request: ChatRequest) -> str:
    """The scripted judge: compares the two words after JUDGE."""
    words = request.messages[-1].text.split()
    return json.dumps({"same": words[1] == words[3]})


JUDGE = register_scripted(
    "fake-judge", ScriptedModel(responder=judge_reply, name="scripted/fake-judge")
)


FLAKY: set[str] = set()


@SCORERS.register("fake_flaky", replace=True)
class FlakyScorer(ExactScorer):
    """Raises for the sample ids in ``FLAKY`` (a scorer bug), scores the rest."""

    name = "fake_flaky"

    def compute(
        self, trajectory: Trajectory, sample: Sample, judge: JudgeContext | None = None
    ) -> ScoreRow:
        if sample.id in FLAKY:
            raise ValueError(f"scorer bug on {sample.id}")
        return super().compute(trajectory, sample, judge)


@SCORERS.register("fake_scaled", replace=True)
class ScaledScorer(ExactScorer):
    """``scale`` when the answer is right, 0 otherwise: a scorer whose rows depend on a
    parameter, so a path that drops ``scoring.params`` shows up."""

    name = "fake_scaled"

    def __init__(self, scale: float = 1.0) -> None:
        self.scale = scale

    def compute(
        self, trajectory: Trajectory, sample: Sample, judge: JudgeContext | None = None
    ) -> ScoreRow:
        correct = self.scale * float(trajectory.answer == sample.answer)
        return self.new_row(trajectory, sample, metrics={"correct": correct})


def register_models() -> None:
    """Put the fake models back in the scripted registry (other test packages clear it; the
    runs and the preflight reach them by name)."""
    register_scripted("fake-echo", MODEL)
    register_scripted("fake-judge", JUDGE)
