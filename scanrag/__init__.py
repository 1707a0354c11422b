"""ScanRAG: retrieval-augmented question answering over long PDFs, scored stage by stage.

The kernel package holds the schemas, document ingestion, the LLM gateway, configuration,
the runner and the CLI. Importing it never loads torch, faiss, litellm or langgraph.
"""

from scanrag.schemas import (
    BBox,
    Document,
    Fact,
    Page,
    PageHit,
    Region,
    Sample,
    Status,
    Trajectory,
    Usage,
)

__version__ = "0.1.0"

__all__ = [
    "BBox",
    "Document",
    "Fact",
    "Page",
    "PageHit",
    "Region",
    "Sample",
    "Status",
    "Trajectory",
    "Usage",
    "__version__",
]
