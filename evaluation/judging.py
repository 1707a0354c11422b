"""LLM judges: which model judges which role, and one robust JSON judgment call.

Every judge goes through a :class:`~scanrag.llm.types.ChatModel` (the gateway, or a
``ScriptedModel`` in tests). :func:`judge_json` asks for JSON matching a pydantic schema,
extracts it from whatever the model wrote (fenced blocks, leading prose, trailing chatter),
validates it, and retries once with a short correction message when that fails. It never
raises for a model or parse failure: the returned :class:`~scanrag.evaluation.schemas.JudgeRecord`
says ``judge_error`` or ``judge_parse_error`` and the caller excludes that part.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, Field, field_validator

from scanrag.evaluation.judge_replies import JudgeParseError, parse_json
from scanrag.evaluation.reply_budget import OPEN_TOKENS, reply_tokens
from scanrag.evaluation.schemas import JudgeRecord
from scanrag.llm.fit import PlannedOverflowError, check_request_fits
from scanrag.llm.types import ChatModel, ChatRequest, Message
from scanrag.schemas import Usage

T = TypeVar("T", bound=BaseModel)

ROLES: tuple[str, ...] = ("region", "fact", "answer", "extractor", "matching", "faithfulness")
VISION_ROLES: frozenset[str] = frozenset({"region"})
# Model-name prefixes of text-only models: the project's embedded local models read no images.
TEXT_ONLY_PREFIXES: tuple[str, ...] = ("local/",)

CORRECTION = (
    "Your previous reply could not be used: {error}\n"
    "Reply again with only the JSON value, no prose and no code fence."
)


class JudgeConfig(BaseModel):
    """Judge models per role, with one default for every role.

    ``models`` overrides ``default_model`` role by role. A vision role (``region``) takes the
    default only when that model can read images: names starting with one of
    ``text_only_prefixes`` are text-only unless listed in ``vision_models``. With no usable
    model a role is skipped, never scored as 0.
    """

    default_model: str | None = None
    models: dict[str, str] = Field(default_factory=dict)
    temperature: float = 0.0
    max_tokens: int | None = Field(
        default=None,
        description="Token cap of every judge call; None: each call's cap is sized to the "
        "reply its schema asks for (scanrag.evaluation.reply_budget).",
    )
    seed: int | None = 0
    text_only_prefixes: tuple[str, ...] = TEXT_ONLY_PREFIXES
    vision_models: list[str] = Field(default_factory=list)
    concurrency: int = Field(default=8, ge=1, description="Judge calls in flight at once.")
    prompts: dict[str, str] = Field(
        default_factory=dict,
        description="Prompt templates replacing a role's built-in prompt (role → template "
        "text; see scanrag.evaluation.judge_prompts).",
    )

    @field_validator("models", "prompts")
    @classmethod
    def _known_roles(cls, models: dict[str, str]) -> dict[str, str]:
        unknown = sorted(set(models) - set(ROLES))
        if unknown:
            raise ValueError(f"unknown judge roles {unknown}; known roles: {', '.join(ROLES)}")
        return models

    def is_vision(self, model: str) -> bool:
        if model in self.vision_models:
            return True
        return not model.startswith(self.text_only_prefixes)

    def model_for(self, role: str) -> str | None:
        """The model judging ``role``, or ``None`` when the role has no usable model."""
        if role in self.models:
            return self.models[role]
        model = self.default_model
        if model is None:
            return None
        if role in VISION_ROLES and not self.is_vision(model):
            return None
        return model

    def why_not(self, role: str) -> str:
        """Why ``model_for(role)`` is ``None`` (for skipped rows)."""
        if self.default_model is None:
            return f"no judge model configured for role {role!r}"
        return (
            f"role {role!r} needs a vision model and {self.default_model!r} is text-only; "
            f"set one with --judge-role-model {role}=MODEL"
        )

    @classmethod
    def from_mapping(cls, judges: Mapping[str, str], **kwargs: Any) -> JudgeConfig:
        """Build from a run config's ``models.judges`` (``default`` plus roles). Without a
        ``default`` entry the project's default model judges every text role."""
        mapping = dict(judges)
        default = mapping.pop("default", None)
        if default is None:
            from scanrag.config import DEFAULT_MODEL

            default = DEFAULT_MODEL
        return cls(default_model=default, models=mapping, **kwargs)

    @classmethod
    def from_options(
        cls, default_model: str | None, role_models: Sequence[str] = (), **kwargs: Any
    ) -> JudgeConfig:
        """Build from CLI-style ``role=model`` strings; raises ``ValueError`` on bad ones."""
        from scanrag.commands.args import key_values

        return cls(default_model=default_model, models=key_values(role_models), **kwargs)


# --------------------------------------------------------------------------- one judgment


async def judge_json(
    llm: ChatModel,
    *,
    role: str,
    model: str,
    messages: Sequence[Message],
    schema: type[T],
    prompt_hash: str,
    stage: str | None = None,
    key: str | None = None,
    check: Callable[[T], None] | None = None,
    temperature: float = 0.0,
    max_tokens: int | None = None,
    seed: int | None = 0,
    parse_retry: bool = True,
    items: int | None = None,
) -> tuple[JudgeRecord, T | None]:
    """Ask ``model`` for JSON matching ``schema``; one retry when the reply cannot be parsed
    (none with ``parse_retry=False``).

    ``check`` may raise ``ValueError`` for replies that validate but are unusable (a label
    missing for one gold id); that counts as a parse failure too. Returns the record and the
    parsed object (``None`` unless the record's status is ``ok``). A call that fails (a
    ``ModelError`` after the gateway's own retries, a timeout, anything the client raises)
    gives ``judge_error`` without a retry here (cause ``transport``). ``max_tokens`` ``None``
    sizes the cap to ``schema`` (:func:`~scanrag.evaluation.reply_budget.reply_tokens`, with
    ``items`` entries per list); a reply that cannot be read fails with the cause ``length``
    when it hit that cap, else ``parse``.
    """
    record = JudgeRecord(role=role, model=model, prompt_hash=prompt_hash, key=key)
    conversation = list(messages)
    usage = Usage()
    json_schema = schema.model_json_schema()
    limit = max_tokens if max_tokens is not None else reply_tokens(json_schema, items)
    for attempt in (1, 2) if parse_retry else (1,):
        request = ChatRequest(
            model=model,
            messages=conversation,
            temperature=temperature,
            max_tokens=limit,
            json_schema=json_schema,
            stage=stage or f"judge.{role}",
            prompt_hash=prompt_hash,
            seed=seed,
        )
        try:
            response = await llm.chat(request)
        except Exception as exc:  # any failure to get a reply is the judge's, never a 0
            record.attempts = attempt
            record.usage = usage
            record.status = "judge_error"
            record.cause = "transport"
            record.error = f"{type(exc).__name__}: {exc}"
            return record, None
        usage = usage.add(response.usage)
        record.attempts = attempt
        record.usage = usage
        record.raw = response.text
        record.finish_reason = response.finish_reason
        try:
            parsed, value = parse_json(response.text, schema, check)
        except JudgeParseError as exc:
            record.error = f"attempt {attempt}: {exc}"
            if response.finish_reason == "length":
                record.error += f" (the reply reached its cap of {limit} tokens)"
            conversation = [
                *conversation,
                Message(role="assistant", content=response.text),
                Message(role="user", content=CORRECTION.format(error=exc)),
            ]
            continue
        record.status = "ok"
        record.error = None
        record.parsed = value
        return record, parsed
    unreadable(record)
    return record, None


def unreadable(record: JudgeRecord, error: str | None = None) -> JudgeRecord:
    """Mark ``record`` a ``judge_parse_error``: cause ``length`` when its reply hit the token
    cap (``finish_reason`` ``length``), else ``parse``."""
    record.status = "judge_parse_error"
    record.cause = "length" if record.finish_reason == "length" else "parse"
    if error is not None:
        record.error = error
    return record


# --------------------------------------------------------------------------- context


@dataclass
class JudgeContext:
    """Everything a scorer may need beyond (trajectory, sample): the judge model, its
    configuration, and access to the documents (for page images and page counts).

    ``documents`` is a :class:`scanrag.evaluation.documents.DocumentSource` or ``None``. Judge
    calls made through :meth:`judge` share one semaphore of ``config.concurrency`` slots.
    """

    llm: ChatModel | None = None
    config: JudgeConfig = field(default_factory=JudgeConfig)
    documents: Any = None
    params: Mapping[str, Any] = field(default_factory=dict)
    _gate: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = field(
        default=None, init=False, repr=False
    )

    def model_for(self, role: str) -> str | None:
        if self.llm is None:
            return None
        return self.config.model_for(role)

    def why_not(self, role: str) -> str:
        if self.llm is None:
            return f"no judge model available for role {role!r}"
        return self.config.why_not(role)

    def skipped(
        self, role: str, key: str | None = None, prompt_hash: str | None = None
    ) -> JudgeRecord:
        """A record for a part not judged because no model can judge ``role``."""
        return JudgeRecord(
            role=role,
            prompt_hash=prompt_hash,
            status="skipped",
            key=key,
            error=self.why_not(role),
        )

    async def _refused(self, request: ChatRequest, record: JudgeRecord) -> bool:
        """Mark ``record`` a ``judge_error`` without a call when ``request`` cannot fit the
        judge model's context window (:func:`scanrag.llm.fit.check_request_fits`): a judge's
        input is never cut, so an oversized prompt is a judge failure, found before sending."""
        try:
            await check_request_fits(self.llm, request)
        except PlannedOverflowError as exc:
            record.status = "judge_error"
            record.cause = "not_sent"
            record.error = f"not sent: {exc.message}"
            record.attempts = 0
            return True
        return False

    def _slots(self) -> asyncio.Semaphore:
        """The semaphore of the running event loop (a context may outlive one loop)."""
        loop = asyncio.get_running_loop()
        if self._gate is None or self._gate[0] is not loop:
            self._gate = (loop, asyncio.Semaphore(self.config.concurrency))
        return self._gate[1]

    async def ask(
        self,
        role: str,
        messages: Sequence[Message],
        prompt_hash: str,
        *,
        key: str | None = None,
        max_tokens: int | None = None,
        overrides: Mapping[str, Any] | None = None,
    ) -> JudgeRecord:
        """One free-text call with this context's model for ``role``: no JSON asked for and
        none parsed, the reply is the record's ``raw`` (its ``finish_reason`` kept);
        ``judge_error`` when the call failed, ``skipped`` when the role has no model. The cap
        is ``max_tokens``, else the configured one, else ``OPEN_TOKENS`` (free text has no
        schema to size it by). ``overrides`` replace request fields (a released call shape's
        sampling: ``top_p``, ``seed``, ``temperature``, ``token_param``)."""
        model = self.model_for(role)
        if model is None or self.llm is None:
            return self.skipped(role, key, prompt_hash)
        record = JudgeRecord(role=role, model=model, prompt_hash=prompt_hash, key=key, attempts=1)
        request = ChatRequest(
            model=model,
            messages=list(messages),
            temperature=self.config.temperature,
            max_tokens=max_tokens or self.config.max_tokens or OPEN_TOKENS,
            stage=f"judge.{role}",
            prompt_hash=prompt_hash,
            seed=self.config.seed,
        ).model_copy(update=dict(overrides or {}))
        if await self._refused(request, record):
            return record
        async with self._slots():
            try:
                response = await self.llm.chat(request)
            except Exception as exc:  # any failure to get a reply is the judge's, never a 0
                record.status = "judge_error"
                record.cause = "transport"
                record.error = f"{type(exc).__name__}: {exc}"
                return record
        record.usage = response.usage
        record.raw = response.text
        record.finish_reason = response.finish_reason
        record.status = "ok"
        return record

    async def judge(
        self,
        role: str,
        messages: Sequence[Message],
        schema: type[T],
        prompt_hash: str,
        *,
        key: str | None = None,
        check: Callable[[T], None] | None = None,
        max_tokens: int | None = None,
        parse_retry: bool = True,
        items: int | None = None,
    ) -> tuple[JudgeRecord, T | None]:
        """:func:`judge_json` with this context's model for ``role`` and its settings; the
        token cap is ``max_tokens``, else the configured one, else sized to ``schema`` (with
        ``items`` entries per list); a ``skipped`` record when the role has no model."""
        model = self.model_for(role)
        if model is None or self.llm is None:
            return self.skipped(role, key, prompt_hash), None
        json_schema = schema.model_json_schema()
        limit = max_tokens if max_tokens is not None else self.config.max_tokens
        limit = limit if limit is not None else reply_tokens(json_schema, items)
        planned = ChatRequest(
            model=model,
            messages=list(messages),
            temperature=self.config.temperature,
            max_tokens=limit,
            json_schema=json_schema,
            stage=f"judge.{role}",
            prompt_hash=prompt_hash,
            seed=self.config.seed,
        )
        record = JudgeRecord(role=role, model=model, prompt_hash=prompt_hash, key=key)
        if await self._refused(planned, record):
            return record, None
        async with self._slots():
            return await judge_json(
                self.llm,
                role=role,
                model=model,
                messages=messages,
                schema=schema,
                prompt_hash=prompt_hash,
                key=key,
                check=check,
                temperature=self.config.temperature,
                max_tokens=limit,
                seed=self.config.seed,
                parse_retry=parse_retry,
            )
