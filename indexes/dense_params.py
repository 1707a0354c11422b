"""The dense retriever's parameters, in small groups, and the rules they keep.

A config gives them flat (``retrievers.<alias>.params``: ``chunk_overlap``, ``faiss_index``,
``batch_size`` ...); :class:`DenseParams` is that flat surface, built from four small option
groups — how text becomes vectors (:class:`TextParams`), how pages are cut into windows and
their scores combined (:class:`WindowParams`), the FAISS store (:class:`StoreParams`) and where
and how fast encoding runs (:class:`RuntimeParams`). It owns the names, the types and the rules
(:func:`check_rules`): a run's preflight checks a config against it
(:func:`scanrag.params.model_problems`) and :class:`scanrag.indexes.dense.DenseIndex` is built
from it, so one place owns each rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator, model_validator

from scanrag.indexes.encoders import BACKENDS, DEFAULT_MODEL, Backend, Pooling, resolve_model
from scanrag.indexes.queries import QueryMode, check_query_mode
from scanrag.indexes.vector_store import FaissKind, check_store_settings

Aggregation = Literal["max", "mean", "sum"]
_STRICT = ConfigDict(frozen=True, extra="forbid", strict=True)


class TextParams(BaseModel):
    """How text becomes vectors: prefixes, pooling and normalization (``None``: the model's
    preset), and how a question is prepared (``query_mode``)."""

    model_config = _STRICT

    query_prefix: str | None = None
    passage_prefix: str | None = None
    pooling: Pooling | None = None
    normalize: bool | None = None
    query_mode: QueryMode = "strip"


class WindowParams(BaseModel):
    """Windows of a long page (``chunk_tokens``, default: the encoder's window, and
    ``chunk_overlap``) and how their scores make the page's (``aggregation``)."""

    model_config = _STRICT

    chunk_tokens: int | None = None
    chunk_overlap: int = 32
    aggregation: Aggregation = "max"


class StoreParams(BaseModel):
    """The FAISS store: its kind and sizes."""

    model_config = _STRICT

    faiss_index: FaissKind = "flat"
    nlist: int = 256
    hnsw_m: int = 32
    nprobe: int = 16
    ef_search: int = 128

    @field_validator("nlist", "hnsw_m", "nprobe", "ef_search")
    @classmethod
    def _size(cls, value: int, info: ValidationInfo) -> int:
        check_store_settings("flat", **{str(info.field_name): value})
        return value


class RuntimeParams(BaseModel):
    """Where and how fast encoding runs (speed only; fp16, bf16 and int8 change the vectors
    slightly)."""

    model_config = _STRICT

    device: str | None = None
    batch_size: int | None = None
    backend: Backend = "auto"

    @field_validator("batch_size")
    @classmethod
    def _batch(cls, value: int | None) -> int | None:
        if value is not None and value < 1:
            raise ValueError(f"batch_size must be >= 1, got {value}")
        return value


class DenseParams(TextParams, WindowParams, StoreParams, RuntimeParams):
    """Every parameter of the ``dense`` retriever, flat as a config gives them: ``model`` (a
    sentence-transformers name or local folder; default: the bundled all-MiniLM-L6-v2), then
    the groups' fields."""

    model: str = DEFAULT_MODEL

    @model_validator(mode="after")
    def _rules(self) -> Self:
        check_rules(self.model_dump())
        return self


def check_rules(arguments: Mapping[str, Any]) -> None:
    """Rules that need no model (sizes, choices, the chunk window, a local model folder) on
    any of the parameters: ``ValueError`` names the first broken one, a model folder that does
    not exist raises ``ModelLoadError``."""
    aggregation = arguments.get("aggregation", "max")
    if aggregation not in ("max", "mean", "sum"):
        raise ValueError(f"unknown aggregation {aggregation!r}; use max, mean or sum")
    if "faiss_index" in arguments:
        sizes = ("nlist", "nprobe", "hnsw_m", "ef_search")
        check_store_settings(
            arguments["faiss_index"], **{k: arguments[k] for k in sizes if k in arguments}
        )
    if arguments.get("batch_size") is not None:
        RuntimeParams._batch(arguments["batch_size"])
    chunk_tokens, overlap = arguments.get("chunk_tokens"), arguments.get("chunk_overlap", 0)
    if overlap < 0 or (chunk_tokens is not None and not 0 <= overlap < chunk_tokens):
        raise ValueError(
            f"chunk_overlap must lie in [0, chunk_tokens), got overlap {overlap} with "
            f"chunk_tokens {chunk_tokens}"
        )
    if arguments.get("backend", "auto") not in BACKENDS:
        raise ValueError(f"unknown backend {arguments['backend']!r}; use {', '.join(BACKENDS)}")
    check_query_mode(arguments.get("query_mode", "raw"))
    if "model" in arguments:
        resolve_model(arguments["model"])  # a missing local folder or bundled package


__all__ = [
    "Aggregation",
    "DenseParams",
    "RuntimeParams",
    "StoreParams",
    "TextParams",
    "WindowParams",
    "check_rules",
]
