"""The litellm custom provider ``local``: ``litellm.acompletion(model="local/<name>")``.

Registered by the gateway on first use (:func:`install`), so an embedded model goes through
litellm like any API model. Our errors are re-raised as litellm's typed exceptions: litellm
would otherwise wrap an unknown exception as a (retryable) connection error.
This module imports litellm; import it only when a call is about to be made.
"""

from __future__ import annotations

from typing import Any

import litellm
from litellm import CustomLLM
from litellm.types.utils import ModelResponse
from litellm.types.utils import Usage as LiteUsage

from scanrag.llm.local import RUNTIME, LocalResult, LocalRuntime
from scanrag.llm.local_models import LOCAL_MODELS, UnknownLocalModelError
from scanrag.llm.types import ContextOverflowError, ModelError

PROVIDER = "local"


def _to_litellm_error(exc: ModelError, model: str) -> Exception:
    text = str(exc)
    if isinstance(exc, ContextOverflowError):
        return litellm.ContextWindowExceededError(message=text, model=model, llm_provider=PROVIDER)
    if isinstance(exc, UnknownLocalModelError):
        return litellm.NotFoundError(message=text, model=model, llm_provider=PROVIDER)
    return litellm.BadRequestError(message=text, model=model, llm_provider=PROVIDER)


class LocalLiteLLMProvider(CustomLLM):
    """Answers ``local/<name>`` requests with :class:`~scanrag.llm.local.LocalRuntime`."""

    def __init__(self, runtime: LocalRuntime | None = None) -> None:
        super().__init__()
        self.runtime = runtime or RUNTIME

    @staticmethod
    def _params(optional_params: dict[str, Any]) -> dict[str, Any]:
        """The runtime's arguments; ``top_p`` and ``extra_body`` become llama sampling knobs
        (``repeat_penalty``, ``top_k``, ``min_p`` ...), as a llama.cpp server would read them."""
        sampling = dict(optional_params.get("extra_body") or {})
        if optional_params.get("top_p") is not None:
            sampling["top_p"] = float(optional_params["top_p"])
        return {
            "temperature": float(optional_params.get("temperature") or 0.0),
            "max_tokens": int(
                optional_params.get("max_tokens")
                or optional_params.get("max_completion_tokens")
                or 512
            ),
            "seed": optional_params.get("seed"),
            "response_format": optional_params.get("response_format"),
            "sampling": sampling,
        }

    @staticmethod
    def _fill(model_response: ModelResponse, model: str, result: LocalResult) -> ModelResponse:
        choice: Any = model_response.choices[0]
        choice.message.content = result.text
        choice.finish_reason = result.finish_reason or "stop"
        model_response.model = f"{PROVIDER}/{model}"
        usage = LiteUsage(
            prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens,
            total_tokens=result.prompt_tokens + result.completion_tokens,
        )
        setattr(model_response, "usage", usage)  # noqa: B010  (not a declared field)
        return model_response

    def completion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> ModelResponse:  # type: ignore[override]
        params = self._params(kwargs.get("optional_params") or {})
        try:
            result = self.runtime.generate(model, messages, **params)
        except ModelError as exc:
            raise _to_litellm_error(exc, model) from exc
        return self._fill(kwargs["model_response"], model, result)

    async def acompletion(  # type: ignore[override]
        self, model: str, messages: list, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        params = self._params(kwargs.get("optional_params") or {})
        try:
            result = await self.runtime.agenerate(model, messages, **params)
        except ModelError as exc:
            raise _to_litellm_error(exc, model) from exc
        return self._fill(kwargs["model_response"], model, result)


_HANDLER: LocalLiteLLMProvider | None = None


def install() -> LocalLiteLLMProvider:
    """Register the ``local`` provider and the local models' (zero) prices with litellm."""
    global _HANDLER
    if _HANDLER is None:
        _HANDLER = LocalLiteLLMProvider()
    entries = [e for e in litellm.custom_provider_map if e.get("provider") != PROVIDER]
    litellm.custom_provider_map = [*entries, {"provider": PROVIDER, "custom_handler": _HANDLER}]
    litellm.register_model(
        {
            f"{PROVIDER}/{name}": {
                "max_input_tokens": spec.n_ctx,
                "max_tokens": spec.n_ctx,
                "input_cost_per_token": 0.0,
                "output_cost_per_token": 0.0,
                "litellm_provider": PROVIDER,
                "mode": "chat",
                "supports_response_schema": True,
            }
            for name, spec in LOCAL_MODELS.items()
        }
    )
    return _HANDLER
