"""Running the embedded models with llama-cpp-python, in process.

:class:`LocalRuntime` loads each model once per process and serializes calls to it (a llama
context is not re-entrant); generation runs in a worker thread so the event loop stays free.
:mod:`scanrag.llm.local_litellm` exposes the runtime to litellm as the custom provider ``local``,
so ``local/<name>`` calls take the same gateway path (retries, cache, accounting) as API models.

``llama_cpp`` is imported only when a model is first loaded.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import logging
import os
import threading
from dataclasses import dataclass
from typing import Any

from scanrag.llm.local_models import LocalModelSpec, get_local_spec
from scanrag.llm.types import ContextOverflowError, ModelError

log = logging.getLogger(__name__)


@dataclass
class LocalResult:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str | None


@dataclass
class _Loaded:
    spec: LocalModelSpec
    llama: Any
    formatter: Any
    lock: threading.Lock


def _prepare_llama_import() -> None:
    """Environment for llama-cpp's OpenMP threads; must run before ``llama_cpp`` is imported.

    Idle OpenMP workers spin by default, which on a busy machine (more runnable processes than
    cores) slows generation several-fold; passive waiting keeps the speed close to the
    single-thread one there. Set ``OMP_WAIT_POLICY`` yourself to override.
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def _threads() -> int:
    env = os.environ.get("SCANRAG_LLAMA_THREADS")
    if env:
        return max(1, int(env))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _flatten(messages: list[dict[str, Any]], model: str) -> list[dict[str, Any]]:
    """Chat messages with plain-string content; any image part is refused."""
    flat: list[dict[str, Any]] = []
    for msg in messages:
        content = msg.get("content")
        if isinstance(content, list):
            texts: list[str] = []
            for part in content:
                kind = part.get("type") if isinstance(part, dict) else None
                if kind != "text":
                    raise ModelError(
                        model, f"local model {model} is text-only; got a {kind!r} message part"
                    )
                texts.append(str(part.get("text", "")))
            content = "\n".join(texts)
        flat.append({"role": msg["role"], "content": content or ""})
    return flat


def _schema_of(response_format: Any) -> tuple[bool, dict[str, Any] | None]:
    """``(wants_json, schema)`` from an OpenAI-style or llama-style ``response_format``."""
    if not isinstance(response_format, dict):
        return False, None
    kind = response_format.get("type")
    if kind == "json_schema":
        spec = response_format.get("json_schema")
        schema = spec.get("schema") if isinstance(spec, dict) else None
        return True, schema or None
    if kind == "json_object":
        return True, response_format.get("schema") or None
    return False, None


# llama-cpp's schema converter lets raw control characters into strings (invalid JSON);
# the generic JSON grammar it ships does not. Use the stricter character rule.
_LOOSE_CHAR = 'char ::= [^"\\\\]'
_STRICT_CHAR = 'char ::= [^"\\\\\\x7F\\x00-\\x1F]'
_GRAMMARS: dict[str, Any] = {}


def json_schema_grammar(schema: dict[str, Any]) -> Any:
    """A llama grammar that only admits JSON valid against ``schema`` (cached per schema)."""
    _prepare_llama_import()
    from llama_cpp.llama_grammar import LlamaGrammar, json_schema_to_gbnf

    # Converted as given: the grammar writes the properties in the schema's order, which is
    # the order of the reply's fields (sorting the keys would reorder the reply).
    key = json.dumps(schema)
    if key not in _GRAMMARS:
        gbnf = json_schema_to_gbnf(key).replace(_LOOSE_CHAR, _STRICT_CHAR)
        _GRAMMARS[key] = LlamaGrammar.from_string(gbnf, verbose=False)
    return _GRAMMARS[key]


def _constraints(response_format: Any, model: str) -> dict[str, Any]:
    """``create_chat_completion`` keyword arguments that constrain the output to JSON."""
    wants_json, schema = _schema_of(response_format)
    if not wants_json:
        return {}
    if schema is not None:
        try:
            return {"grammar": json_schema_grammar(schema)}
        except Exception as exc:  # a schema feature the converter lacks: any JSON will do
            log.warning("%s: JSON schema not convertible to a grammar (%s); plain JSON", model, exc)
    return {"response_format": {"type": "json_object"}}


# Sampling knobs of llama-cpp's create_chat_completion a call may set (through ``top_p`` and
# an entry's ``extra_body``); its defaults otherwise (greedy at temperature 0, repeat_penalty 1).
SAMPLING_KNOBS = frozenset(
    {
        "top_p",
        "top_k",
        "min_p",
        "typical_p",
        "repeat_penalty",
        "presence_penalty",
        "frequency_penalty",
        "tfs_z",
        "mirostat_mode",
        "mirostat_tau",
        "mirostat_eta",
    }
)


def sampling_kwargs(sampling: dict[str, Any] | None, model: str) -> dict[str, Any]:
    """``sampling`` checked against :data:`SAMPLING_KNOBS` (a ``ModelError`` names unknown ones)."""
    sampling = dict(sampling or {})
    unknown = sorted(set(sampling) - SAMPLING_KNOBS)
    if unknown:
        raise ModelError(
            model,
            f"unknown sampling option(s) {unknown} for an embedded model; "
            f"known: {', '.join(sorted(SAMPLING_KNOBS))}",
        )
    return sampling


class LocalRuntime:
    """Process-wide cache of loaded llama models, one lock per model."""

    def __init__(self) -> None:
        self._loaded: dict[str, _Loaded] = {}
        self._load_lock = threading.Lock()
        self._closer_registered = False

    def loaded_names(self) -> list[str]:
        return sorted(self._loaded)

    def load(self, name: str) -> _Loaded:
        with self._load_lock:
            if name not in self._loaded:
                self._loaded[name] = self._load(get_local_spec(name))
                if not self._closer_registered:  # free the models before interpreter teardown
                    atexit.register(self.close)
                    self._closer_registered = True
            return self._loaded[name]

    def close(self) -> None:
        """Free every loaded model now (at exit, llama-cpp's own finalizer would run after
        the modules it needs are gone and print a traceback)."""
        with self._load_lock:
            loaded, self._loaded = self._loaded, {}
        for entry in loaded.values():
            with entry.lock:
                entry.llama.close()

    @staticmethod
    def _load(spec: LocalModelSpec) -> _Loaded:
        _prepare_llama_import()
        try:
            from llama_cpp import Llama
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter
        except ImportError as exc:
            raise ModelError(
                spec.model_id,
                f"llama-cpp-python is not installed ({exc}); install the 'local' extra: "
                "pip install 'scanrag[local]'",
            ) from exc
        path = spec.locate()
        llama = Llama(
            model_path=str(path),
            n_ctx=spec.n_ctx,
            n_threads=_threads(),
            chat_format=spec.chat_format,
            seed=0,
            verbose=False,
        )
        logging.getLogger("llama-cpp-python").setLevel(logging.CRITICAL)
        general = str(llama.metadata.get("general.name", ""))
        if spec.expect_name.lower() not in general.lower():
            raise ModelError(
                spec.model_id,
                f"{path} is not the expected model: its GGUF name is {general!r}, "
                f"expected one containing {spec.expect_name!r}",
            )
        template = llama.metadata.get("tokenizer.chat_template")
        formatter = None
        if template and spec.chat_format == "chat_template.default":
            model = llama._model
            eos, bos = model.token_eos(), model.token_bos()
            formatter = Jinja2ChatFormatter(
                template=template,
                eos_token=model.token_get_text(eos) if eos != -1 else "",
                bos_token=model.token_get_text(bos) if bos != -1 else "",
            )
        log.info("loaded local model %s from %s (n_ctx=%d)", spec.name, path, spec.n_ctx)
        return _Loaded(spec=spec, llama=llama, formatter=formatter, lock=threading.Lock())

    @staticmethod
    def count_prompt_tokens(loaded: _Loaded, messages: list[dict[str, Any]]) -> int:
        """Tokens of the prompt exactly as the chat template renders it."""
        llama = loaded.llama
        if loaded.formatter is not None:
            prompt = loaded.formatter(messages=messages).prompt
            return len(llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True))
        text = "\n".join(str(m["content"]) for m in messages)
        return len(llama.tokenize(text.encode("utf-8"), add_bos=True)) + 8 * len(messages)

    def generate(
        self,
        name: str,
        messages: list[dict[str, Any]],
        *,
        temperature: float = 0.0,
        max_tokens: int = 512,
        seed: int | None = 0,
        response_format: Any = None,
        sampling: dict[str, Any] | None = None,
        cancel: threading.Event | None = None,
    ) -> LocalResult:
        """Answer ``messages`` (OpenAI chat format) with the local model ``name``. Blocking.

        ``sampling`` sets llama-cpp knobs (:data:`SAMPLING_KNOBS`), e.g. ``repeat_penalty``.
        A ``cancel`` event set before the model is free (the caller gave up while queued)
        skips the call with a retryable ``ModelError``. A generation that has started runs to
        its end: llama-cpp offers no way to stop it midway, and ``max_tokens`` bounds it.
        """
        model = f"local/{name}"
        flat = _flatten(messages, model)
        knobs = sampling_kwargs(sampling, model)
        loaded = self.load(name)
        n_ctx = loaded.spec.n_ctx
        with loaded.lock:
            if cancel is not None and cancel.is_set():
                raise ModelError(model, "call cancelled before it started", retryable=True)
            n_prompt = self.count_prompt_tokens(loaded, flat)
            if n_prompt + max_tokens > n_ctx:
                raise ContextOverflowError(
                    model,
                    f"prompt of {n_prompt} tokens plus max_tokens={max_tokens} exceeds the "
                    f"context window of {n_ctx} tokens",
                )
            try:
                out = loaded.llama.create_chat_completion(
                    messages=flat,
                    temperature=temperature,
                    max_tokens=max_tokens,
                    seed=seed,
                    **knobs,
                    **_constraints(response_format, model),
                )
            except ValueError as exc:
                if "context window" in str(exc):
                    raise ContextOverflowError(model, str(exc)) from exc
                raise ModelError(model, f"llama-cpp failed: {exc}") from exc
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        return LocalResult(
            text=choice["message"].get("content") or "",
            prompt_tokens=int(usage.get("prompt_tokens", n_prompt)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
            finish_reason=choice.get("finish_reason"),
        )

    async def agenerate(self, name: str, messages: list[dict[str, Any]], **kw: Any) -> LocalResult:
        """:meth:`generate` in a worker thread. When the awaiting task is cancelled while the
        call still waits for the model, the call is skipped instead of run for nobody."""
        cancel = threading.Event()
        try:
            return await asyncio.to_thread(self.generate, name, messages, cancel=cancel, **kw)
        except asyncio.CancelledError:
            cancel.set()
            raise


RUNTIME = LocalRuntime()
