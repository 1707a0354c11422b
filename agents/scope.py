"""What one strategy run works with: the item's inputs, reader settings, the trajectory.

``ReaderParams`` are the parameters every strategy shares (output path, modality, page and
image caps, token limits); each strategy's parameter class extends them. ``ItemContext``
holds one item's inputs — the sample, the runner's :class:`~scanrag.protocols.StrategyContext`
(model client, documents, retriever, settings) and the documents resolved from them; the
graphs hand it to LangGraph as the run's context. ``Scope`` is what a node works on: an item,
the trajectory it is writing and the reader settings, with the operations every strategy
shares (prepare, read-and-apply).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, GetCoreSchemaHandler, ValidationInfo

from scanrag.agents import reductions
from scanrag.agents.common import (
    InputProblemError,
    add_step,
    parse_context,
    resolve_documents,
    task_input,
)
from scanrag.agents.context import ContextOptions, Modality, PageRef
from scanrag.agents.evidence import ParseContext
from scanrag.agents.fitting import Fallback
from scanrag.agents.planning import Output, ReaderSpec
from scanrag.agents.prompts.base import Prompt
from scanrag.agents.reader import ReadResult, read_pages
from scanrag.agents.reductions import cap_source
from scanrag.agents.reply import apply_output
from scanrag.agents.state import PageKey
from scanrag.protocols import StrategyContext
from scanrag.schemas import Document, Sample, Status, Trajectory
from scanrag.tasks import TaskSpec, task_spec_or_default


def at_least_one(value: int, info: ValidationInfo) -> int:
    """The rule of every count parameter."""
    if value < 1:
        raise ValueError(f"{info.field_name} must be >= 1, got {value}")
    return value


AtLeastOne = Annotated[int, AfterValidator(at_least_one)]
"""A strategy's integer parameter of at least 1 (pages, tokens, windows ...); the config's
own counts are :data:`scanrag.counts.Count`."""


class ReaderParams(BaseModel):
    """Reader parameters every strategy shares (``None``: take the runner's setting).

    A strategy's parameter class extends this one with its own fields (``TopKParams``,
    ``AgentParams``, ``ScanParams``): the one place that owns the names, types and rules of a
    strategy's parameters. A config's values are checked against it before a run starts
    (:func:`scanrag.params.model_problems`) and the strategy is built from it, strictly (no
    string-to-number coercion) and without unknown names.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    output: Output = "citations"
    modality: Modality = "text"
    page_cap: AtLeastOne | None = None
    max_images: AtLeastOne | None = None
    max_chars_per_page: AtLeastOne | None = None
    max_tokens: AtLeastOne = 1024
    context_tokens: AtLeastOne | None = None
    block_boxes: bool = True
    temperature: float = 0.0


@dataclass(frozen=True)
class ItemContext:
    """One item's inputs, fixed for the whole run of a graph (LangGraph's run context).

    ``primary`` / ``others`` are the sample's documents as resolved from ``ctx.documents``;
    when they cannot be (a missing document, a document without pages) ``problem`` says why
    and ``primary`` is ``None``. ``task`` is the sample's entry of the task table, looked up
    once when the item starts; everything below the graph nodes receives it from here.
    ``params`` are the strategy parameters a LangGraph server's client sent in the context
    (the graph factory built the graph with them; the nodes read their own copy).
    """

    sample: Sample
    ctx: StrategyContext
    primary: Document | None = None
    others: tuple[Document, ...] = ()
    parse_ctx: ParseContext | None = None
    problem: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    task: TaskSpec = field(init=False)

    def __post_init__(self) -> None:
        """Look the sample's task up in the task table, once for the item (a name no one
        registered reads as QA). Accept the JSON form LangGraph's server sends
        (``ItemContext(**context)`` with ``sample`` and ``ctx`` as JSON,
        :mod:`scanrag.agents.item_inputs`): build the live objects and resolve the documents as
        :meth:`resolve` does."""
        if not (isinstance(self.sample, Sample) and isinstance(self.ctx, StrategyContext)):
            from scanrag.agents.item_inputs import from_json

            resolved = ItemContext.resolve(*from_json(self.sample, self.ctx))
            for name in ("sample", "ctx", "primary", "others", "parse_ctx", "problem"):
                object.__setattr__(self, name, getattr(resolved, name))
        object.__setattr__(self, "task", task_spec_or_default(self.sample.task))

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> Any:
        """Validated and described as its JSON form (``{"sample": ..., "ctx": ...}``, see
        :mod:`scanrag.agents.item_inputs`); a live instance passes as it is. LangGraph reads the
        JSON schema for Studio (``get_context_jsonschema``)."""
        from pydantic_core import core_schema

        from scanrag.agents.item_inputs import ItemContextJson

        def build(value: ItemContextJson) -> ItemContext:
            return cls(sample=value.sample, ctx=value.ctx, params=value.params)  # type: ignore[arg-type]

        from_json = core_schema.no_info_after_validator_function(
            build, handler.generate_schema(ItemContextJson)
        )
        return core_schema.json_or_python_schema(
            json_schema=from_json,
            python_schema=core_schema.union_schema(
                [core_schema.is_instance_schema(cls), from_json]
            ),
        )

    @classmethod
    def resolve(cls, sample: Sample, ctx: StrategyContext) -> ItemContext:
        """The item's context with its documents looked up (a failure kept as ``problem``)."""
        try:
            primary, others = resolve_documents(sample, ctx)
        except InputProblemError as exc:
            return cls(sample=sample, ctx=ctx, problem=str(exc))
        return cls(
            sample=sample,
            ctx=ctx,
            primary=primary,
            others=tuple(others),
            parse_ctx=parse_context(primary, others),
        )


@dataclass
class Scope:
    """A node's view of one item: its inputs, the trajectory being written, reader settings.

    Graph nodes build one per call from the state's trajectory and the run context, so
    nothing about an item outlives the node that works on it.
    """

    item: ItemContext
    trajectory: Trajectory
    params: ReaderParams
    sample: Sample = field(init=False)
    """The item's sample."""
    ctx: StrategyContext = field(init=False)
    """The runner's context: model client, documents, retriever, settings."""
    task: TaskSpec = field(init=False)
    """The item's task type, resolved once per item (:attr:`ItemContext.task`)."""
    others: tuple[Document, ...] = field(init=False)
    """The item's other documents (extra and cited ones)."""
    parse_ctx: ParseContext | None = field(init=False)
    """The documents a reply may cite."""

    def __post_init__(self) -> None:
        item = self.item
        self.sample, self.ctx, self.task = item.sample, item.ctx, item.task
        self.others, self.parse_ctx = item.others, item.parse_ctx

    @property
    def page_cap(self) -> int | None:
        """The page cap in force (the strategy's, else the runner's ``max_pages``)."""
        cap = self.params.page_cap
        return cap if cap is not None else self.ctx.settings.max_pages

    @property
    def page_cap_source(self) -> str:
        """How a reduction names the page cap: the parameter or the runner's setting."""
        return cap_source(self.params.page_cap, "max_pages", "page_cap")

    def options(self) -> ContextOptions:
        """How pages are shown to the reader (modality, caps, DPI)."""
        params, settings = self.params, self.ctx.settings
        return ContextOptions(
            modality=params.modality,
            max_images=_first(params.max_images, settings.max_images),
            max_chars_per_page=_first(params.max_chars_per_page, settings.max_chars_per_page),
            block_boxes=params.block_boxes,
            dpi=settings.render_dpi,
        )

    def spec(
        self, fallback: Fallback, *, stage: str = "reader", role: str = "reader"
    ) -> ReaderSpec:
        """How this strategy calls its reader at ``stage`` (fallback mode, token limits)."""
        window = _first(self.params.context_tokens, self.ctx.settings.context_tokens)
        source = (
            "strategy parameter context_tokens"
            if self.params.context_tokens is not None
            else "runner.settings.context_tokens"
        )
        return ReaderSpec(
            output=self.params.output,
            role=role,
            stage=stage,
            max_tokens=self.params.max_tokens,
            temperature=self.params.temperature,
            context_tokens=window,
            fallback=fallback,
            context_source=source,
        )

    @property
    def doc(self) -> Document:
        """The primary document (an item whose documents could not be resolved has none)."""
        if self.item.primary is None:
            raise RuntimeError(f"the item has no primary document: {self.item.problem}")
        return self.item.primary

    def refs(self, pages: Sequence[int]) -> list[PageRef]:
        """Page refs of the primary document; markers name the file when others are present."""
        return [PageRef(self.doc, p, show_doc=bool(self.others)) for p in pages]

    def page_refs(self, keys: Sequence[PageKey]) -> list[PageRef]:
        """Page refs from state keys: primary pages as ``refs`` makes them, any other
        document's pages with the file name shown (as ``cited_refs`` makes them)."""
        docs = {d.id: d for d in (self.doc, *self.others)}
        return [
            PageRef(docs[doc_id], page, show_doc=doc_id != self.doc.id or bool(self.others))
            for doc_id, page in keys
        ]

    @staticmethod
    def keys(refs: Sequence[PageRef]) -> list[PageKey]:
        """State keys of ``refs`` (the inverse of ``page_refs``)."""
        return [ref.key for ref in refs]

    def cited_refs(self, *, record: bool = True) -> list[PageRef]:
        """Every page of the cited documents (cross-paper items pass them whole), each cut to
        the page cap like the primary one; what the cap dropped is a ``page_cap`` reduction
        of that document (``record=False``: the caller records it elsewhere)."""
        cap = self.page_cap
        refs: list[PageRef] = []
        for other in self.others:
            numbers = list(range(1, len(other.pages) + 1))  # no page read
            kept = numbers[: cap or None]
            if record and cap is not None:
                reductions.page_cap(
                    self.trajectory,
                    numbers[len(kept) :],
                    cap,
                    doc_id=other.id,
                    source=self.page_cap_source,
                )
            refs.extend(PageRef(other, n, show_doc=True) for n in kept)
        return refs

    def prepare(self) -> bool:
        """Record the resolved documents; a missing one marks the item ``input_error``."""
        if not self.trajectory.doc_ids:  # a trajectory started by a client of LangGraph's server
            self.trajectory.doc_ids = list(self.sample.doc_ids)
        if self.item.problem is not None or self.item.primary is None:
            message = self.item.problem or "no primary document"
            self.trajectory.fail(Status.INPUT_ERROR, message)
            add_step(self.trajectory, "prepare", {"error": message})
            return False
        add_step(
            self.trajectory,
            "prepare",
            {
                "doc_id": self.doc.id,
                "num_pages": self.doc.num_pages,
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
            task=self.task,
            spec=self.spec(fallback),
            options=self.options(),
            parse_ctx=self.parse_ctx,
            extra=extra,
            task_input=task_input(self.sample, self.task),
            prompt=prompt,
            priority=priority,
            step_data=step_data,
        )
        if result.parsed is not None and result.raw is not None:
            apply_output(self.trajectory, result.parsed, result.raw)
        return result


def _first(parameter: int | None, setting: int | None) -> int | None:
    """A strategy parameter when given, else the runner's setting of that cap."""
    return parameter if parameter is not None else setting
