"""Retrievers: the ``Retriever`` protocol, built-ins and the plugin registry."""
