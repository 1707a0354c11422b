"""Benchmark items: a question about one or more documents plus its gold evidence."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, field_validator

from scanrag.schemas.geometry import Fact, Region
from scanrag.tasks import check_task

# A task type is a name registered in the task table (``scanrag.tasks``: qa, error_detection,
# find, verify, chain_qa, summary, plus plugins). Kept as an alias of ``str`` for old imports.
TaskType = str

UNANSWERABLE = "Unanswerable"


class EvidencePair(BaseModel):
    """One link of an interleaved evidence chain: a visual anchor and a text span."""

    anchor: str = Field(description='Figure/table anchor as written, e.g. "Fig. 2" or "<x2>".')
    text: str = ""
    page: int | None = Field(default=None, ge=1)


class GoldError(BaseModel):
    """A planted or annotated error (ScholScan style)."""

    family: str | None = Field(default=None, description="One of the 9 ScholScan families.")
    description: str = ""
    locations: list[Region] = Field(default_factory=list)
    pages: list[int] = Field(default_factory=list)
    reasoning_steps: list[str] = Field(default_factory=list)


class Sample(BaseModel):
    """One question with everything needed to run and score it.

    ``doc_ids`` name the documents the question is about (file names within the dataset's
    PDF folder). Gold pages, regions and facts refer to the first of them, the primary
    document; ``cited_doc_ids`` are extra papers passed whole (cross-paper items).
    """

    id: str
    doc_ids: list[str] = Field(min_length=1)
    cited_doc_ids: list[str] = Field(default_factory=list)
    question: str
    answer: str | None = None
    answerable: bool = True
    answer_format: str | None = Field(default=None, description="Int|Float|Str|List|None")
    gold_pages: list[int] = Field(default_factory=list)
    gold_regions: list[Region] = Field(default_factory=list)
    gold_facts: list[Fact] = Field(default_factory=list)
    gold_chain: list[EvidencePair] = Field(default_factory=list)
    gold_errors: list[GoldError] = Field(default_factory=list)
    gold_explanation: str | None = None
    task: TaskType = Field(default="qa", description="A task type of the task table.")
    category: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("task")
    @classmethod
    def _known_task(cls, task: str) -> str:
        return check_task(task)

    @field_validator("gold_pages")
    @classmethod
    def _pages_positive(cls, pages: list[int]) -> list[int]:
        bad = [p for p in pages if p < 1]
        if bad:
            raise ValueError(f"gold pages are 1-based; got {bad}")
        return sorted(set(pages))

    @property
    def primary_doc(self) -> str:
        return self.doc_ids[0]
