"""Every whole number of the config is an integer within documented bounds (issue 31.4):
``runner.concurrency: 1000000000000`` and ``runner.concurrency: true`` ran with exit 0."""

from __future__ import annotations

import re
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

from scanrag.config import ExperimentConfig, config_from_dict
from scanrag.llm.endpoints import ModelEntry


def _models(model: type[BaseModel], seen: set[type[BaseModel]]) -> Iterator[type[BaseModel]]:
    if model in seen:
        return
    seen.add(model)
    yield model
    for field in model.model_fields.values():
        for arg in _flatten(field.annotation):
            if isinstance(arg, type) and issubclass(arg, BaseModel):
                yield from _models(arg, seen)


def _flatten(annotation: Any) -> Iterator[Any]:
    yield annotation
    for arg in typing.get_args(annotation):
        yield from _flatten(arg)


def _integer_fields() -> list[tuple[str, Any]]:
    """(model.field, a validator of that field's value) for every field that holds an int,
    as a value or as the values of a mapping (``per_provider``)."""
    out = []
    for model in _models(ExperimentConfig, set()):
        for name, field in model.model_fields.items():
            args = list(_flatten(field.annotation))
            if int not in args or bool in args:
                continue
            meta = tuple(field.metadata)
            annotation = Annotated[(field.annotation, *meta)] if meta else field.annotation
            out.append((f"{model.__name__}.{name}", TypeAdapter(annotation)))
    return out


FIELDS = _integer_fields()


def test_the_walk_finds_the_counts() -> None:
    names = {name for name, _ in FIELDS}
    assert {
        "RunnerSpec.concurrency",
        "RunnerSpec.per_provider",
        "LLMSpec.max_retries",
        "ScoringSpec.resamples",
        "DatasetSpec.limit",
        "ModelEntry.max_tokens",
        "PageCaps.max_pages",
    } <= names
    assert ModelEntry in set(_models(ExperimentConfig, set()))


def _value(name: str, number: Any) -> Any:
    return {"openai": number} if name == "RunnerSpec.per_provider" else number


@pytest.mark.parametrize(("name", "adapter"), FIELDS, ids=[n for n, _ in FIELDS])
def test_every_count_refuses_booleans_strings_fractions_and_huge_values(
    name: str, adapter: TypeAdapter[Any]
) -> None:
    for bad in (True, False, "4", 4.0, 4.5, 10**30, -(10**30)):
        with pytest.raises(ValidationError):
            adapter.validate_python(_value(name, bad))


@pytest.mark.parametrize(("name", "adapter"), FIELDS, ids=[n for n, _ in FIELDS])
def test_every_count_has_both_bounds(name: str, adapter: TypeAdapter[Any]) -> None:
    schema = repr(adapter.core_schema)
    assert "'le':" in schema and "'ge':" in schema, f"{name} needs ge= and le= bounds"


README = Path(__file__).resolve().parents[2] / "README.md"
_BOUND = re.compile(
    r"`((?:runner|scoring|datasets|entry)\.[a-z_.]+)` (?:\(each value\) )?"
    r"(-?[\d,]+)\.\.([\d,]+)"
)


def _field(key: str) -> tuple[type[BaseModel], str]:
    """The model and field a README key names (``entry.`` is a model entry)."""
    head, *rest = key.split(".")
    model: type[BaseModel] = ModelEntry if head == "entry" else ExperimentConfig
    parts = rest if head == "entry" else [head, *rest]
    for part in parts[:-1]:
        annotation = model.model_fields[part].annotation
        model = next(
            a for a in _flatten(annotation) if isinstance(a, type) and issubclass(a, BaseModel)
        )
    return model, parts[-1]


def test_the_readme_states_every_bound_as_the_code_holds_it() -> None:
    """Each ``key`` lo..hi of the README's config section is the field's bounds, and every
    integer field of the config is listed there."""
    text = " ".join(README.read_text().split())
    stated = {m.group(1): (m.group(2), m.group(3)) for m in _BOUND.finditer(text)}
    assert "runner.concurrency" in stated
    listed: set[str] = set()
    for key, (low, high) in stated.items():
        model, name = _field(key)
        adapter = dict(FIELDS)[f"{model.__name__}.{name}"]
        low_n, high_n = int(low.replace(",", "")), int(high.replace(",", ""))
        for good in (low_n, high_n):
            adapter.validate_python(_value(f"{model.__name__}.{name}", good))
        for bad in (low_n - 1, high_n + 1):
            with pytest.raises(ValidationError):
                adapter.validate_python(_value(f"{model.__name__}.{name}", bad))
        listed.add(f"{model.__name__}.{name}")
    entry_seed = "ModelEntry.seed"
    assert {n for n, _ in FIELDS} - {entry_seed} <= listed, "README lacks some bounds"
    assert "`entry.seed` any 64-bit integer" in text


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (1_000_000_000_000, "runner.concurrency: Input should be less than or equal to 1024"),
        (True, "runner.concurrency: must be a whole number, got a boolean (true)"),
        ("8", "runner.concurrency: Input should be a valid integer"),
    ],
)
def test_concurrency_out_of_bounds_is_a_config_error(value: Any, message: str) -> None:
    from scanrag.config import ConfigError

    data = {"name": "n", "datasets": [{"synthetic": {}}], "strategies": [{"name": "full_doc"}]}
    with pytest.raises(ConfigError) as caught:
        config_from_dict({**data, "runner": {"concurrency": value}})
    assert message in str(caught.value)
    assert config_from_dict({**data, "runner": {"concurrency": 1024}}).runner.concurrency == 1024
