"""The strategy graphs for LangGraph's own tooling (``langgraph.json`` at the repository root).

``langgraph dev`` (LangGraph CLI) and LangGraph Studio load a graph from ``path.py:name``; each
name here is a graph factory for one built-in strategy with its default parameters. LangGraph
calls a factory with the run's config: constructor parameters given as ``configurable.params``
(e.g. ``{"k": 3}`` for ``topk_rag``) build that configuration instead. A client of LangGraph's
server sends them in the run's context (``"params"``): the server refuses ``configurable``
beside a ``context`` and hands the factory the context as its ``configurable``, so both reach
:func:`make_graph` the same way. The graphs are the ones ``scanrag run`` executes; a run needs
the item's inputs as its context (:class:`scanrag.agents.scope.ItemContext`: sample, documents,
model client, retriever) and ``{"trajectory": ...}`` as its input, which is what
``GraphStrategy.run`` supplies. From Studio or the server's HTTP API the context is JSON
(:mod:`scanrag.agents.item_inputs`); every graph gives its input, output and context JSON
schemas (``get_*_jsonschema``).

The strategy names have one source, the ``scanrag.strategies`` entry points of this project
(``pyproject.toml``): the factories below are made from them, and ``langgraph.json`` is
written from them by ``python -m scanrag.graphs.studio`` (``--check`` fails when the file drifts;
``tests/graphs/test_studio.py`` runs that check).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig

from scanrag.graphs.base import Compiled, GraphStrategy

GROUP = "scanrag.strategies"
CONFIG_FILE = "langgraph.json"
PYTHON_VERSION = "3.11"  # the lowest Python the project supports


def built_in_strategies() -> tuple[str, ...]:
    """The strategies this project registers: its ``scanrag.strategies`` entry points whose
    factory lives in :mod:`scanrag.graphs` (plugins' strategies are not written into the file)."""
    names = [
        ep.name
        for ep in metadata.entry_points(group=GROUP)
        if ep.value.startswith("scanrag.graphs.")
    ]
    return tuple(dict.fromkeys(names))


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


STRATEGY_NAMES = built_in_strategies()
FACTORIES = {name: _factory(name) for name in STRATEGY_NAMES}
globals().update(FACTORIES)  # ``./graphs/studio.py:<name>``, as langgraph.json names them


def langgraph_config() -> dict[str, Any]:
    """The content of ``langgraph.json``: one graph per built-in strategy."""
    graphs = {name: f"./graphs/studio.py:{name}" for name in STRATEGY_NAMES}
    return {"dependencies": ["."], "graphs": graphs, "python_version": PYTHON_VERSION}


def render_config() -> str:
    return json.dumps(langgraph_config(), indent=2) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m scanrag.graphs.studio [--check] [PATH]``: write ``langgraph.json`` (default: the
    one in the current folder) from the registered strategies, or check that it is current."""
    parser = argparse.ArgumentParser(
        prog="python -m scanrag.graphs.studio", description=main.__doc__
    )
    parser.add_argument("path", nargs="?", type=Path, default=Path(CONFIG_FILE))
    parser.add_argument("--check", action="store_true", help="fail if the file differs")
    args = parser.parse_args(argv)
    wanted = render_config()
    if args.check:
        current = args.path.read_text(encoding="utf-8") if args.path.is_file() else ""
        if current != wanted:
            print(
                f"{args.path} is out of date: run python -m scanrag.graphs.studio", file=sys.stderr
            )
            return 1
        return 0
    args.path.write_text(wanted, encoding="utf-8")
    print(f"wrote {args.path}: {', '.join(STRATEGY_NAMES)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
