"""Strategy graphs: LangGraph wiring of the nodes in ``agents``.

Registered strategies (entry points ``scanrag.strategies``): ``full_doc``, ``topk_rag``,
``agentic_rag``, ``scan``, ``oracle_pages``, ``oracle_regions``, ``oracle_facts``.
"""
