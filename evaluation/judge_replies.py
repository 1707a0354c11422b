"""Reading a judge's JSON out of whatever it wrote: fenced blocks, leading prose, trailing
chatter (:func:`parse_json`), validated against the reply's pydantic schema."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from scanrag.parsing import json_values

T = TypeVar("T", bound=BaseModel)


class JudgeParseError(ValueError):
    """The judge's text holds no JSON value matching the expected schema."""


def _coerce(value: Any, schema: type[T]) -> T:
    """Validate ``value``; a bare list for a schema with one list field is wrapped in it."""
    try:
        return schema.model_validate(value)
    except ValidationError as first:
        fields = schema.model_fields
        if isinstance(value, list) and len(fields) >= 1:
            required = [n for n, f in fields.items() if f.is_required()] or list(fields)
            if len(required) == 1:
                try:
                    return schema.model_validate({required[0]: value})
                except ValidationError:
                    pass
        raise first


def parse_json(
    text: str, schema: type[T], check: Callable[[T], None] | None = None
) -> tuple[T, Any]:
    """The first JSON value in ``text`` that validates against ``schema`` (and passes
    ``check``), with its raw JSON. Raises :class:`JudgeParseError` naming the problem."""
    candidates = json_values(text)
    if not candidates:
        raise JudgeParseError("no JSON value found in the reply")
    problem = ""
    for value in candidates:
        try:
            parsed = _coerce(value, schema)
            if check is not None:
                check(parsed)
            return parsed, value
        except ValidationError as exc:
            problem = _short_validation(exc)
        except ValueError as exc:
            problem = str(exc)
    raise JudgeParseError(problem or "JSON does not match the expected schema")


def _short_validation(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        where = ".".join(str(p) for p in err.get("loc", ())) or "value"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "; ".join(parts)
