"""Strategy graphs: LangGraph wiring of the nodes in ``agents``.

Registered strategies (entry points ``scanrag.strategies``): ``full_doc``, ``topk_rag``,
``agentic_rag``, ``scan``, ``oracle_pages``, ``oracle_regions``, ``oracle_facts``.

Each strategy compiles its graph once per instance (``GraphStrategy.graph``); each graph has
its own state type (plain JSON, extending :class:`scanrag.agents.state.StrategyState`) and takes an
item's inputs as LangGraph's run context (:class:`scanrag.agents.scope.ItemContext`).
``scanrag.graphs.studio`` offers them to LangGraph's CLI and Studio through ``langgraph.json``.
"""
