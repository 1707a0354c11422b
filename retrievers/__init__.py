"""Retrievers: the search contract, the name-based factory and the composites (``hybrid``,
``oracle``). Index-backed retrievers are the index classes of ``indexes/`` themselves."""
