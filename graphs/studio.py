"""The strategy graphs for LangGraph's own tooling (``langgraph.json`` at the repository root).

``langgraph dev`` (LangGraph CLI) and LangGraph Studio load a graph from ``path.py:name``;
each name here is a graph factory for one built-in strategy with its default parameters.
LangGraph calls a factory with the run's config: constructor parameters given as
``configurable.params`` (e.g. ``{"k": 3}`` for ``topk_rag``) build that configuration
instead. The graphs are the ones ``scanrag run`` executes; a run needs the item's inputs as
its context (:class:`agents.scope.ItemContext`: sample, documents, model client, retriever)
and ``{"trajectory": ...}`` as its input, which is what ``GraphStrategy.run`` supplies. From
Studio or the server's HTTP API the context is JSON (:mod:`agents.item_inputs`); every graph
gives its input, output and context JSON schemas (``get_*_jsonschema``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.runnables import RunnableConfig

from graphs.base import Compiled, GraphStrategy

STRATEGY_NAMES = (
    "full_doc", "topk_rag", "agentic_rag", "scan", "oracle_pages", "oracle_regions", "oracle_facts",
)  # fmt: skip


def make_graph(name: str, config: RunnableConfig | None = None) -> Compiled:
    """The compiled graph of the registered strategy ``name``, with the constructor
    parameters in ``config["configurable"]["params"]`` (defaults without)."""
    from scanrag.registry import STRATEGIES

    params: dict[str, Any] = dict((config or {}).get("configurable", {}).get("params") or {})
    strategy = STRATEGIES.create(name, **params)
    if not isinstance(strategy, GraphStrategy):
        raise TypeError(f"strategy {name!r} is not a LangGraph strategy (GraphStrategy)")
    return strategy.graph


def _factory(name: str) -> Callable[..., Compiled]:
    def factory(config: RunnableConfig | None = None) -> Compiled:
        return make_graph(name, config)

    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = f"The ``{name}`` graph (LangGraph graph factory)."
    return factory


full_doc = _factory("full_doc")
topk_rag = _factory("topk_rag")
agentic_rag = _factory("agentic_rag")
scan = _factory("scan")
oracle_pages = _factory("oracle_pages")
oracle_regions = _factory("oracle_regions")
oracle_facts = _factory("oracle_facts")
