"""LangGraph node logic, prompts and output parsers for ScanRAG strategies."""
