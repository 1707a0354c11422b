"""LangGraph node logic, prompts and output parsers for ScanRAG strategies.

Output parsing (both paths fill the same trajectory fields):
    ``agents.citations.parse_citations`` — free text in the citation grammar of spec §1;
    ``agents.structured.parse_structured`` — JSON replies (``ReaderOutput``, ``schema_for``);
    ``agents.evidence`` — ``ParsedOutput``, ``ParseContext``, the evidence builder;
    ``agents.reply`` — how a reply ended (parse status, ``truncated``, ``unparsed``) and
    ``apply_output``, which copies a parsed reply into the trajectory.
JSON scanning, yes/no words and text coercion are the kernel's (``scanrag.parsing``).
Reader input and calls: ``agents.context`` (page markers and blocks that page text cannot
close, modalities, composite images),
``agents.reader.read_pages`` (context-window fallbacks). Node logic per strategy:
``agents.baseline`` (full_doc, topk_rag, oracles), ``agents.agentic``, ``agents.scan``;
routing decisions are pure functions in ``agents.routing``. Prompts: ``agents.prompts``.
The graph state: ``agents.state.StrategyState`` (the keys every strategy shares), extended by
each strategy beside its nodes (``baseline.ReadState``, ``scan.MapReduceState``,
``agentic.AgenticState``); an item's inputs (the
graphs' run context) and a node's view of them: ``agents.scope.ItemContext`` / ``Scope``.
Nothing here imports LangGraph; the ``graphs`` package wires these nodes.
"""
