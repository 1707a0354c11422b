"""Questions about a generated document, with gold evidence taken from what was drawn.

Kinds, cycled per document: single-page questions about a paragraph fact, a table row and a
chart value; multi-page questions that combine 2-4 facts of one metric found on different
pages (sum, difference, comparison, maximum), laid out as a tight cluster, spread far apart,
or mixed; unanswerable questions about an invented entity that appears nowhere in the corpus.
Scan documents add one ``error_detection`` sample per planted inconsistency.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence
from typing import Any

from scanrag.schemas import UNANSWERABLE, Fact, GoldError, Region, Sample
from scanrag.synth.model import DocResult, PlantedError, PlantedFact
from scanrag.synth.vocab import TOPIC_BY_KIND, Metric, NameForge

CYCLE = ("text", "table_row", "multi", "figure", "unanswerable", "multi")
SOURCES = {"text": "Pure-text (Plain-text)", "table_row": "Table", "figure": "Chart"}
CATEGORIES = {
    "text": "single_page_text",
    "table_row": "single_page_table",
    "figure": "single_page_figure",
}


def _fmt_answer(metric: Metric, value: float) -> str:
    return metric.fmt(round(value, metric.decimals))


def _number_format(metric: Metric) -> str:
    return "Float" if metric.decimals else "Int"


def _join(items: Sequence[str], last: str = "and") -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" {last} " + items[-1]


def layout_stats(pages: Sequence[int]) -> dict[str, Any]:
    """Span, largest gap between neighboring gold pages and number of page clusters."""
    ordered = sorted(set(pages))
    gaps = [b - a for a, b in itertools.pairwise(ordered)]
    return {
        "span": ordered[-1] - ordered[0] if ordered else 0,
        "max_gap": max(gaps, default=0),
        "clusters": 1 + sum(1 for g in gaps if g > 1) if ordered else 0,
    }


class QuestionWriter:
    """Writes the questions of one document."""

    def __init__(self, doc: DocResult, rng: random.Random, forge: NameForge, prefix: str) -> None:
        self.doc, self.rng, self.forge, self.prefix = doc, rng, forge, prefix
        self.topic = TOPIC_BY_KIND[doc.topic]
        self.metrics = {m.key: m for m in self.topic.metrics}
        self.free = list(doc.facts)
        self.used: set[str] = set()
        self.count = 0
        self.n_multi = 0

    # ----------------------------------------------------------------- assembling samples

    def _sample(
        self,
        question: str,
        answer: str,
        answer_format: str,
        facts: Sequence[PlantedFact],
        category: str,
        extra: dict[str, Any],
    ) -> Sample:
        regions: list[Region] = []
        owners: dict[int, int] = {}
        gold_facts: list[Fact] = []
        for fact in facts:
            self.used.add(fact.key)
            slot = owners.setdefault(id(fact.where), len(regions))
            if slot == len(regions):
                regions.append(fact.where.region())
            gold_facts.append(fact.fact(slot))
        pages = sorted({f.where.page for f in facts})
        self.count += 1
        metadata = {
            "doc_type": self.doc.doc_type,
            "num_pages": self.doc.num_pages,
            "evidence_sources": sorted({SOURCES[f.kind] for f in facts}),
            "doc_pages": [self.doc.page_labels[p - 1] for p in pages],
            "key_values": [f.value_text for f in facts],
            **extra,
        }
        return Sample(
            id=f"{self.prefix}-q{self.count:02d}",
            doc_ids=[self.doc.file_name],
            question=question,
            answer=answer,
            answerable=True,
            answer_format=answer_format,
            gold_pages=pages,
            gold_regions=regions,
            gold_facts=gold_facts,
            category=category,
            metadata=metadata,
        )

    # ----------------------------------------------------------------- single page

    def single(self, kind: str) -> Sample | None:
        pool = [f for f in self.free if f.kind == kind and f.key not in self.used]
        if not pool:
            return None
        fact = self.rng.choice(pool)
        metric = self.metrics[fact.metric]
        question = metric.question.format(ent=fact.entity, year=fact.year)
        if fact.anchor:
            lead = "In" if kind == "table_row" else "According to"
            question = f"{lead} {fact.anchor}, {question[0].lower()}{question[1:]}"
        return self._sample(
            question, fact.value_text, _number_format(metric), [fact], CATEGORIES[kind], {}
        )

    # ----------------------------------------------------------------- multi page

    def _pick(self, k: int, pattern: str) -> list[PlantedFact] | None:
        n = self.doc.num_pages
        checks: dict[str, Callable[[list[int]], bool]] = {
            "cluster": lambda p: p[-1] - p[0] <= k + 1,
            "spread": lambda p: (
                min(b - a for a, b in itertools.pairwise(p)) >= max(3, n // (2 * k))
            ),
            "mixed": lambda p: (
                layout_stats(p)["clusters"] < k and layout_stats(p)["max_gap"] >= max(4, n // 4)
            ),
        }
        pool = [f for f in self.free if f.key not in self.used]
        if not pool:
            return None
        for _ in range(300):
            seed = self.rng.choice(pool)
            same = [
                f
                for f in pool
                if f.metric == seed.metric
                and f.where.page != seed.where.page
                and f.name != seed.name
            ]
            if pattern == "cluster":
                same = [f for f in same if abs(f.where.page - seed.where.page) <= k + 1]
            self.rng.shuffle(same)
            chosen = [seed]
            for fact in same:
                if len(chosen) == k:
                    break
                if all(fact.where.page != c.where.page and fact.name != c.name for c in chosen):
                    chosen.append(fact)
            distinct = len({f.value_text for f in chosen}) == len(chosen)
            if (
                len(chosen) == k
                and distinct
                and checks[pattern](sorted(f.where.page for f in chosen))
            ):
                return chosen
        return None

    def multi(self) -> Sample | None:
        # Cycle through evidence counts and layouts so every document mixes them.
        k = (2, 3, 2, 4)[self.n_multi % 4]
        patterns = ("cluster", "spread", "mixed") if k > 2 else ("cluster", "spread")
        pattern = patterns[(self.n_multi // 4 + self.n_multi) % len(patterns)]
        self.n_multi += 1
        chosen = self._pick(k, pattern)
        if chosen is None and pattern != "spread":
            pattern = "spread"
            chosen = self._pick(k, pattern)
        if chosen is None:
            return None
        chosen.sort(key=lambda f: f.where.page)
        metric = self.metrics[chosen[0].metric]
        parts = [f"{f.entity} in {f.year}" for f in chosen]
        high = max(chosen, key=lambda f: f.value)
        ops = ["compare", "difference"] if k == 2 else ["max"]
        if metric.decimals == 0:
            ops.append("sum")
        op = self.rng.choice(ops)
        if op == "sum":
            question = f"What is the combined {metric.noun} of {_join(parts)}, in {metric.unit}?"
            answer, fmt = _fmt_answer(metric, sum(f.value for f in chosen)), "Int"
        elif op == "difference":
            low = min(chosen, key=lambda f: f.value)
            question = (
                f"By how much did the {metric.noun} of {high.entity} in {high.year} exceed that "
                f"of {low.entity} in {low.year}, in {metric.unit}?"
            )
            answer, fmt = _fmt_answer(metric, high.value - low.value), _number_format(metric)
        elif op == "compare":
            question = (
                f"Which was higher: the {metric.noun} of {parts[0]} or the {metric.noun} of "
                f"{parts[1]}?"
            )
            answer, fmt = high.entity_label, "Str"
        else:
            question = f"Which of these had the highest {metric.noun}: {_join(parts, 'or')}?"
            answer, fmt = high.entity_label, "Str"
        pages = [f.where.page for f in chosen]
        extra = {"operation": op, "layout": {"pattern": pattern, **layout_stats(pages)}}
        return self._sample(question, answer, fmt, chosen, "multi_page", extra)

    # ----------------------------------------------------------------- unanswerable

    def unanswerable(self) -> Sample:
        absent = self.forge.name()
        metric = self.rng.choice(self.topic.metrics)
        year = self.rng.choice(sorted({f.year for f in self.doc.facts}) or [2020])
        entity = f"the {absent} {self.topic.unit_kind}"
        self.count += 1
        return Sample(
            id=f"{self.prefix}-q{self.count:02d}",
            doc_ids=[self.doc.file_name],
            question=metric.question.format(ent=entity, year=year),
            answer=UNANSWERABLE,
            answerable=False,
            answer_format="None",
            category="unanswerable",
            metadata={
                "doc_type": self.doc.doc_type,
                "num_pages": self.doc.num_pages,
                "evidence_sources": [],
                "absent_entity": absent,
            },
        )

    # ----------------------------------------------------------------- all questions

    def write(self, n: int) -> list[Sample]:
        samples: list[Sample] = []
        for i in range(n):
            kind = CYCLE[i % len(CYCLE)]
            if kind == "unanswerable":
                samples.append(self.unanswerable())
                continue
            sample = self.multi() if kind == "multi" else self.single(kind)
            for fallback in ("text", "table_row", "figure"):
                if sample is None:
                    sample = self.single(fallback)
            if sample is None:
                sample = self.unanswerable()
            samples.append(sample)
        return samples


def _error_sample(doc: DocResult, error: PlantedError, sample_id: str) -> Sample:
    regions = [loc.region() for loc in error.locations]
    pages = sorted({loc.page for loc in error.locations})
    facts = [
        Fact(page=regions[i].page, text=text, bbox=regions[i].bbox, region_index=i)
        for i, text in error.facts
    ]
    gold = GoldError(
        family=error.family,
        description=error.description,
        pages=pages,
        locations=regions,
        reasoning_steps=error.reasoning_steps,
    )
    return Sample(
        id=sample_id,
        doc_ids=[doc.file_name],
        question=error.question,
        answer=error.answer,
        answerable=True,
        answer_format="Str",
        gold_pages=pages,
        gold_regions=regions,
        gold_facts=facts,
        gold_errors=[gold],
        gold_explanation=" ".join(error.reasoning_steps),
        task="error_detection",
        category=error.family,
        metadata={
            "doc_type": doc.doc_type,
            "num_pages": doc.num_pages,
            "doc_pages": [doc.page_labels[p - 1] for p in pages],
            "planted_values": error.values,
        },
    )


def write_questions(
    doc: DocResult, rng: random.Random, forge: NameForge, n: int, prefix: str
) -> list[Sample]:
    """``n`` QA samples for ``doc`` plus one error-detection sample per planted error."""
    samples = QuestionWriter(doc, rng, forge, prefix).write(n)
    samples += [
        _error_sample(doc, err, f"{prefix}-e{i + 1:02d}") for i, err in enumerate(doc.errors)
    ]
    return samples
