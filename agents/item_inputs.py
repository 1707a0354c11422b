"""An item's inputs as JSON: what LangGraph's tooling (Studio, ``langgraph dev``'s HTTP API)
sends as a strategy graph's run context.

``scanrag run`` hands each graph a :class:`scanrag.agents.scope.ItemContext` built from live
objects (model client, ingested documents, retriever). A client of LangGraph's server can only send
JSON, so the context also has a JSON form, ``{"sample": <Sample>, "ctx": <ItemInputs>}``:
the sample as in a run's ``samples.jsonl`` and the names of what to build — the model, the
folder of the sample's PDFs, the retriever and the runner settings. LangGraph turns a context
dict into ``ItemContext(**context)``, which builds the live objects from it
(:func:`strategy_context`), and reads this form's JSON schema for Studio's context panel.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from scanrag.protocols import RunSettings, StrategyContext
from scanrag.schemas import Sample


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

    sample: Sample
    ctx: ItemInputs


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
    live = sample if isinstance(sample, Sample) else Sample.model_validate(sample)
    if isinstance(ctx, StrategyContext):
        return live, ctx
    return live, strategy_context(ItemInputs.model_validate(ctx), live)
