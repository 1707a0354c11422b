"""The LLM gateway: one async entry point for every model call in ScanRAG.

Importing this package is cheap; litellm and llama-cpp load only when a call needs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scanrag.llm.ledger import CallRecord, UsageLedger
from scanrag.llm.local_models import LOCAL_MODELS, LocalModelSpec, local_model_names
from scanrag.llm.scripted import ScriptedModel, clear_scripted, get_scripted, register_scripted
from scanrag.llm.types import (
    ChatModel,
    ChatRequest,
    ChatResponse,
    ContentPart,
    ContextOverflowError,
    ImagePart,
    Message,
    ModelError,
    TextPart,
)

if TYPE_CHECKING:
    from scanrag.llm.gateway import LLMClient

__all__ = [
    "LOCAL_MODELS",
    "CallRecord",
    "ChatModel",
    "ChatRequest",
    "ChatResponse",
    "ContentPart",
    "ContextOverflowError",
    "ImagePart",
    "LLMClient",
    "LocalModelSpec",
    "Message",
    "ModelError",
    "ScriptedModel",
    "TextPart",
    "UsageLedger",
    "clear_scripted",
    "get_scripted",
    "local_model_names",
    "register_scripted",
]


def __getattr__(name: str) -> Any:
    if name == "LLMClient":
        from scanrag.llm.gateway import LLMClient

        return LLMClient
    raise AttributeError(name)
