"""Keyword parameters checked against a factory's signature or its parameter class without
calling it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from scanrag.params import ParamProblemsError, checked, model_problems, param_problems
from scanrag.protocols import PageRenderer


class Widget:
    """A factory with typed parameters and its own rules."""

    built = 0

    def __init__(
        self,
        size: int = 3,
        ratio: float = 0.5,
        mode: Literal["fast", "exact"] = "fast",
        weights: Sequence[float] | None = None,
        folder: str | Path | None = None,
        renderer: PageRenderer | None = None,
        *,
        parts: Sequence[Any] = (),
    ) -> None:
        Widget.built += 1

    @classmethod
    def check_params(cls, arguments: Mapping[str, Any]) -> None:
        if arguments["size"] < 1:
            raise ValueError(f"size must be >= 1, got {arguments['size']}")
        if arguments["weights"] is not None and len(arguments["weights"]) != arguments["size"]:
            raise ValueError("one weight per size unit")


def needs_path(path: str, pdf_dir: str, *, limit: int, tag: str = "x") -> None:
    """A function factory with required parameters."""


def test_a_good_call_has_no_problems() -> None:
    params = {"size": 2, "ratio": 1, "mode": "exact", "weights": [1, 2.5], "folder": "out"}
    assert param_problems(Widget, params) == []
    assert Widget.built == 0  # nothing was built


def test_every_unknown_name_is_reported_with_the_accepted_ones() -> None:
    problems = param_problems(Widget, {"sise": 2, "mood": "fast"})
    assert [name for name, _ in problems] == [None, None]
    assert "unexpected keyword argument 'sise'" in problems[0][1]
    assert "unexpected keyword argument 'mood'" in problems[1][1]
    assert problems[0][1].endswith("accepted: size, ratio, mode, weights, folder, renderer, parts")


def test_types_are_strict_and_named() -> None:
    problems = dict(
        param_problems(
            Widget, {"size": "3", "ratio": "half", "mode": "slow", "weights": [1, "x"], "folder": 5}
        )
    )
    assert problems["size"] == "Input should be a valid integer, got '3'"
    assert problems["ratio"].startswith("Input should be a valid number")
    assert problems["mode"] == "Input should be 'fast' or 'exact', got 'slow'"
    assert problems["weights"] == "Input should be a valid number at [1], got [1, 'x']"
    assert problems["folder"] == "expected str | Path | None, got 5"


def test_unchecked_annotations_and_untyped_names_accept_anything() -> None:
    assert param_problems(Widget, {"renderer": object()}) == []
    assert param_problems(Widget, {"parts": 42}) != []
    assert param_problems(Widget, {"parts": 42}, untyped={"parts"}) == []


def test_own_rules_see_defaults_and_skip_values_already_reported() -> None:
    assert param_problems(Widget, {"size": 0}) == [(None, "size must be >= 1, got 0")]
    assert param_problems(Widget, {"weights": [1.0]}) == [(None, "one weight per size unit")]
    # size is reported as a type problem; the rule runs with its default (3) instead
    problems = param_problems(Widget, {"size": "2", "weights": [1.0, 1.0]})
    assert [p[1] for p in problems] == [
        "Input should be a valid integer, got '2'",
        "one weight per size unit",
    ]


def test_required_positional_and_skipped_arguments() -> None:
    problems = param_problems(needs_path, {"tag": "y"}, positional=2)
    assert problems == [(None, "missing a required argument: 'limit'")]
    assert param_problems(needs_path, {}, positional=2, skip={"limit"}) == []
    unknown = param_problems(needs_path, {"pdf_dir": "d", "limit": 1}, positional=2)
    assert "unexpected keyword argument 'pdf_dir'; accepted: limit, tag" in unknown[0][1]


def test_factories_without_a_signature_are_not_checked() -> None:
    assert param_problems(dict, {"anything": 1}) == []


# -- parameter classes, several named problems ------------------------------------------------


class Window(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    size: int = 2
    stride: int | None = None
    mode: Literal["map", "reduce"] = "map"

    @field_validator("size")
    @classmethod
    def _size(cls, size: int) -> int:
        if size < 1:
            raise ValueError(f"size must be >= 1, got {size}")
        return size

    @model_validator(mode="after")
    def _stride(self) -> Window:
        if self.stride is not None and self.stride > self.size:
            raise ValueError("stride must not exceed size")
        return self


class Wide(Window):
    depth: int = 1


class Windowed:
    params_class = Wide

    def __init__(self, **params: Any) -> None:
        self.params = checked(Wide, params)


def test_a_parameter_class_owns_names_types_and_rules() -> None:
    assert param_problems(Windowed, {"size": 3, "stride": 3, "depth": 2}) == []
    assert param_problems(Windowed, {"size": 0, "mode": "scan", "other": 1, "depth": "2"}) == [
        (None, "got an unexpected keyword argument 'other'; accepted: depth, size, stride, mode"),
        ("size", "must be >= 1, got 0"),
        ("mode", "Input should be 'map' or 'reduce', got 'scan'"),
        ("depth", "Input should be a valid integer, got '2'"),
    ]
    assert param_problems(Windowed, {"size": 1, "stride": 2}) == [
        (None, "stride must not exceed size")
    ]
    with pytest.raises(ParamProblemsError, match="size must be >= 1, got 0; mode: Input"):
        Windowed(size=0, mode="scan")
    assert Windowed(size=4).params == Wide(size=4)


class Checked:
    def __init__(self, *, width: int = 2, depth: int = 1) -> None:
        self.width, self.depth = width, depth

    @classmethod
    def check_params(cls, arguments: Mapping[str, Any]) -> None:
        problems = model_problems(Window, {"size": arguments["width"]})
        if arguments["depth"] > 5:
            problems.append(("depth", "at most 5"))
        if problems:
            raise ParamProblemsError(problems)


def test_check_params_may_name_several_parameters() -> None:
    assert param_problems(Checked, {"width": 0, "depth": 9}) == [
        ("size", "must be >= 1, got 0"),
        ("depth", "at most 5"),
    ]
    assert str(ParamProblemsError([("depth", "at most 5"), (None, "size too big")])) == (
        "depth: at most 5; size too big"
    )


def test_a_wrong_name_is_a_type_error_like_a_wrong_keyword() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'sise'"):
        Windowed(sise=2)
    with pytest.raises(ValueError, match="unexpected keyword argument 'sise'"):
        Windowed(sise=2)
