"""An item's inputs as JSON: what LangGraph's tooling (Studio, ``langgraph dev``'s HTTP API)
sends as a strategy graph's run context.

``scanrag run`` hands each graph a :class:`scanrag.agents.scope.ItemContext` built from live
objects (model client, ingested documents, retriever). A client of LangGraph's server can only send
JSON, so the context also has a JSON form, ``{"sample": ..., "ctx": <ItemInputs>, "params":
{...}}``: the sample, the names of what to build — the model, the folder of the sample's PDFs,
the retriever and the runner settings — and the strategy's parameters. LangGraph turns a
context dict into ``ItemContext(**context)``, which builds the live objects from it
(:func:`strategy_context`), and reads this form's JSON schema for Studio's context panel.

The sample is either a line of a run's ``samples.jsonl`` exactly as written (the generic
dataset format: ``doc``/``docs``, ``evidence_pages``, boxes as ``[x1, y1, x2, y2]``), or a
:class:`~scanrag.schemas.Sample` as JSON (``doc_ids``, ``gold_pages`` ...): a mapping without
``doc_ids`` is read as the former (:func:`sample_of`).

Strategy parameters travel in the context: LangGraph's server refuses ``configurable``
beside a ``context`` and hands the graph factory the context as its ``configurable``, so
``params`` reaches :func:`scanrag.graphs.studio.make_graph` and builds that configuration
(``{"k": 3}`` for ``topk_rag``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from scanrag.protocols import RunSettings, StrategyContext
from scanrag.schemas import Sample


def sample_of(value: Any) -> Any:
    """A sample from JSON: a ``samples.jsonl`` line (generic dataset format, no ``doc_ids``)
    becomes a :class:`Sample`; anything else is left for ``Sample`` validation."""
    if isinstance(value, dict) and "doc_ids" not in value:
        from scanrag.datasets import sample_from_row

        return sample_from_row(value)  # a RowError is a ValueError: pydantic reports it
    return value


class ItemInputs(BaseModel):
    """The runner's side of an item's context (``StrategyContext``), named instead of built."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(
        description="Model of every agent role: a litellm string (openai/gpt-4o-mini), "
        "local/<name> or scripted/<name> (registered by one of the plugins)."
    )
    models: dict[str, str] = Field(
        default_factory=dict, description="Per-role models (planner, assessor ...) over `model`."
    )
    pdf_dir: str = Field(description="Folder of the sample's PDFs (its doc ids are file names).")
    retriever: str | None = Field(
        default=None,
        description="Registered retriever (bm25, dense, hybrid ...) for the "
        "strategies that search (topk_rag, agentic_rag), built over the sample's documents.",
    )
    retriever_params: dict[str, Any] = Field(default_factory=dict)
    settings: RunSettings = Field(
        default_factory=RunSettings,
        description="Runner settings a run would pass (max_pages, max_images, render_dpi ...).",
    )
    plugins: list[str] = Field(
        default_factory=list, description="Modules or .py files imported first."
    )
    cache_dir: str | None = Field(
        default=None, description="Folder for rendered page images (image modality)."
    )


class ItemContextJson(BaseModel):
    """The JSON form of :class:`scanrag.agents.scope.ItemContext` (LangGraph's run context)."""

    model_config = ConfigDict(extra="forbid", title="ItemContext")

    sample: Annotated[Sample, BeforeValidator(sample_of)] = Field(
        description="The item: a line of a run's samples.jsonl as written (generic dataset "
        "format) or a Sample as JSON."
    )
    ctx: ItemInputs
    params: dict[str, Any] = Field(
        default_factory=dict,
        description='The strategy\'s constructor parameters ({"k": 3} for topk_rag); '
        "LangGraph's server hands the context to the graph factory, which builds them.",
    )


def strategy_context(inputs: ItemInputs, sample: Sample) -> StrategyContext:
    """Build what ``inputs`` names for ``sample``: its documents ingested from ``pdf_dir``
    (each resolved inside it), the gateway client, the retriever over those documents."""
    from scanrag.datasets.paths import resolve_document
    from scanrag.documents import ingest_pdf
    from scanrag.llm.gateway import LLMClient
    from scanrag.plugins import import_plugins

    import_plugins(inputs.plugins)
    folder = Path(inputs.pdf_dir).expanduser()
    names = dict.fromkeys((*sample.doc_ids, *sample.cited_doc_ids))
    documents = {name: ingest_pdf(resolve_document(folder, name)) for name in names}
    retriever = None
    if inputs.retriever is not None:
        from scanrag.retriever_specs import create_retriever

        retriever = create_retriever(inputs.retriever, inputs.retriever_params)
        retriever.add(list({d.id: d for d in documents.values()}.values()))
    renderer = None
    if inputs.cache_dir is not None:
        from scanrag.documents import PageRenderer

        renderer = PageRenderer(Path(inputs.cache_dir) / "pages")
    return StrategyContext(
        llm=LLMClient(),
        documents=documents,
        models={"reader": inputs.model, **inputs.models},
        retriever=retriever,
        renderer=renderer,
        settings=inputs.settings,
    )


def from_json(sample: Any, ctx: Any) -> tuple[Sample, StrategyContext]:
    """The live ``(sample, ctx)`` pair of a JSON context (either side may already be live)."""
    live = sample if isinstance(sample, Sample) else Sample.model_validate(sample_of(sample))
    if isinstance(ctx, StrategyContext):
        return live, ctx
    return live, strategy_context(ItemInputs.model_validate(ctx), live)
