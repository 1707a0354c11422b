"""ScanRAG: retrieval-augmented question answering over long PDFs, scored stage by stage.

The kernel package holds the schemas, document ingestion, the LLM gateway, configuration,
the runner and the CLI. Importing it never loads torch, faiss, litellm or langgraph, and not
even the schemas (pydantic) until one of the names below is used: ``scanrag --help`` and every
command start without them (tests/scanrag/test_light_imports.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
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


def __getattr__(name: str) -> Any:
    """The schema classes, imported on first use (PEP 562); any other name is not here (a
    sub-module not imported yet is then imported by the import system)."""
    if name not in __all__ or name == "__version__":
        raise AttributeError(f"module 'scanrag' has no attribute {name!r}")
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

    return {
        "BBox": BBox,
        "Document": Document,
        "Fact": Fact,
        "Page": Page,
        "PageHit": PageHit,
        "Region": Region,
        "Sample": Sample,
        "Status": Status,
        "Trajectory": Trajectory,
        "Usage": Usage,
    }[name]
