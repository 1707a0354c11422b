"""Pydantic schemas shared by every ScanRAG package."""

from scanrag.schemas.document import Block, BlockKind, Document, Page, TextSource, Word
from scanrag.schemas.geometry import BBox, Fact, Region
from scanrag.schemas.reduction import Reduction
from scanrag.schemas.sample import UNANSWERABLE, EvidencePair, GoldError, Sample, TaskType
from scanrag.schemas.trajectory import (
    TRAJECTORY_SCHEMA,
    Citation,
    ModelCall,
    PageHit,
    ParseStatus,
    PromptPart,
    ReportedIssue,
    Status,
    Step,
    Trajectory,
    Usage,
)

__all__ = [
    "TRAJECTORY_SCHEMA",
    "UNANSWERABLE",
    "BBox",
    "Block",
    "BlockKind",
    "Citation",
    "Document",
    "EvidencePair",
    "Fact",
    "GoldError",
    "ModelCall",
    "Page",
    "PageHit",
    "ParseStatus",
    "PromptPart",
    "Reduction",
    "Region",
    "ReportedIssue",
    "Sample",
    "Status",
    "Step",
    "TaskType",
    "TextSource",
    "Trajectory",
    "Usage",
    "Word",
]
