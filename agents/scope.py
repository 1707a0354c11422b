"""What one strategy run works with: the sample, its documents, reader settings, the trajectory.

``ReaderParams`` are the constructor parameters every strategy shares (output path, modality,
page and image caps, token limits); ``Scope`` binds them to one sample and one context and
offers the nodes every strategy uses (prepare, read-and-apply).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from agents.common import (
    InputProblemError,
    add_step,
    parse_context,
    resolve_documents,
    setting,
    task_input,
)
from agents.context import MODALITIES, ContextOptions, PageRef
from agents.evidence import ParseContext, apply_output
from agents.prompts.base import Prompt
from agents.prompts.reader import OUTPUTS
from agents.reader import Fallback, ReaderSpec, ReadResult, read_pages
from scanrag.protocols import StrategyContext
from scanrag.schemas import Document, Sample, Status, Trajectory


@dataclass(frozen=True)
class ReaderParams:
    """Reader settings shared by every strategy (``None``: take the runner's setting)."""

    output: str = "citations"
    modality: str = "text"
    page_cap: int | None = None
    max_images: int | None = None
    max_chars_per_page: int | None = None
    max_tokens: int = 1024
    context_tokens: int | None = None
    block_boxes: bool = True
    temperature: float = 0.0

    def __post_init__(self) -> None:
        if self.output not in OUTPUTS:
            raise ValueError(f"output must be one of {OUTPUTS}, got {self.output!r}")
        if self.modality not in MODALITIES:
            raise ValueError(f"modality must be one of {MODALITIES}, got {self.modality!r}")
        for name in ("page_cap", "max_images", "max_chars_per_page", "context_tokens"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} must be >= 1, got {value}")
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {self.max_tokens}")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Scope:
    sample: Sample
    ctx: StrategyContext
    trajectory: Trajectory
    params: ReaderParams
    primary: Document | None = None
    others: list[Document] = field(default_factory=list)
    parse_ctx: ParseContext | None = None

    @property
    def page_cap(self) -> int | None:
        cap = setting(self.params.page_cap, self.ctx, "max_pages")
        return int(cap) if cap is not None else None

    def options(self) -> ContextOptions:
        max_images = setting(self.params.max_images, self.ctx, "max_images")
        max_chars = setting(self.params.max_chars_per_page, self.ctx, "max_chars_per_page")
        return ContextOptions(
            modality=self.params.modality,  # type: ignore[arg-type]
            max_images=max_images,
            max_chars_per_page=max_chars,
            block_boxes=self.params.block_boxes,
            dpi=self.ctx.settings.get("render_dpi"),
        )

    def spec(
        self, fallback: Fallback, *, stage: str = "reader", role: str = "reader"
    ) -> ReaderSpec:
        window = setting(self.params.context_tokens, self.ctx, "context_tokens")
        return ReaderSpec(
            output=self.params.output,  # type: ignore[arg-type]
            role=role,
            stage=stage,
            max_tokens=self.params.max_tokens,
            temperature=self.params.temperature,
            context_tokens=int(window) if window is not None else None,
            fallback=fallback,
        )

    @property
    def doc(self) -> Document:
        if self.primary is None:
            raise RuntimeError("Scope.prepare() has not run")
        return self.primary

    def refs(self, pages: Sequence[int]) -> list[PageRef]:
        """Page refs of the primary document; markers name the file when others are present."""
        return [PageRef(self.doc, p, show_doc=bool(self.others)) for p in pages]

    def cited_refs(self) -> list[PageRef]:
        """Every page of the cited documents (cross-paper items pass them whole), each cut to
        the page cap like the primary one; what the cap dropped is recorded in
        ``trajectory.metadata["cited_page_cap"]`` (document id → pages dropped)."""
        cap = self.page_cap
        refs: list[PageRef] = []
        for other in self.others:
            numbers = [p.number for p in other.pages]
            kept = numbers[: cap or None]
            if len(kept) < len(numbers):
                capped = self.trajectory.metadata.setdefault("cited_page_cap", {})
                capped[other.id] = len(numbers) - len(kept)
            refs.extend(PageRef(other, n, show_doc=True) for n in kept)
        return refs

    def prepare(self) -> bool:
        """Resolve the documents; a missing one marks the item ``input_error``."""
        try:
            self.primary, self.others = resolve_documents(self.sample, self.ctx)
        except InputProblemError as exc:
            self.trajectory.fail(Status.INPUT_ERROR, str(exc))
            add_step(self.trajectory, "prepare", {"error": str(exc)})
            return False
        self.parse_ctx = parse_context(self.primary, self.others)
        add_step(
            self.trajectory,
            "prepare",
            {
                "doc_id": self.primary.id,
                "num_pages": self.primary.num_pages,
                "cited_doc_ids": [d.id for d in self.others],
                "task": self.sample.task,
            },
        )
        return True

    async def read(
        self,
        refs: Sequence[PageRef],
        *,
        fallback: Fallback,
        extra: str = "",
        priority: Sequence[int] | None = None,
        prompt: Prompt | None = None,
        step_data: dict[str, Any] | None = None,
    ) -> ReadResult:
        """Read ``refs`` with the reader and copy the parsed reply onto the trajectory."""
        result = await read_pages(
            self.ctx,
            self.trajectory,
            refs,
            question=self.sample.question,
            task=self.sample.task,
            spec=self.spec(fallback),
            options=self.options(),
            parse_ctx=self.parse_ctx,
            extra=extra,
            task_input=task_input(self.sample),
            prompt=prompt,
            priority=priority,
            step_data=step_data,
        )
        if result.parsed is not None and result.raw is not None:
            apply_output(self.trajectory, result.parsed, result.raw)
        return result
