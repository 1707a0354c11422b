"""LangGraph node logic, prompts and output parsers for ScanRAG strategies.

Output parsing (both paths fill the same trajectory fields):
    ``scanrag.agents.citations.parse_citations`` — free text in the citation grammar of spec §1;
    ``scanrag.agents.structured.parse_structured`` — JSON replies (``ReaderOutput``,
    ``schema_for``); ``scanrag.agents.evidence`` — ``ParsedOutput``, ``ParseContext``, the evidence
    builder; ``scanrag.agents.reply`` — how a reply ended (parse status, ``truncated``,
    ``unparsed``) and ``apply_output``, which copies a parsed reply into the trajectory.
JSON scanning, yes/no words and text coercion are the kernel's (``scanrag.parsing``).
Reader input and calls: ``scanrag.agents.context`` (page markers and blocks that page text cannot
close, modalities, composite images),
``scanrag.agents.reader.read_pages`` (context-window fallbacks). Node logic per strategy:
``scanrag.agents.baseline`` (full_doc, topk_rag, oracles), ``scanrag.agents.agentic``,
``scanrag.agents.scan``; routing decisions are pure functions in ``scanrag.agents.routing``.
Prompts: ``scanrag.agents.prompts``. The graph state: ``scanrag.agents.state.StrategyState`` (the
keys every strategy shares), extended by each strategy beside its nodes (``baseline.ReadState``,
``scan.MapReduceState``, ``agentic.AgenticState``); an item's inputs (the
graphs' run context) and a node's view of them: ``scanrag.agents.scope.ItemContext`` / ``Scope``.
Nothing here imports LangGraph; the ``graphs`` package wires these nodes.
"""
