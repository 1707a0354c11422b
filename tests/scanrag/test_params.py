"""Keyword parameters checked against a factory's signature without calling it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from scanrag.params import ParamProblemsError, field_problems, param_problems
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


# -- constructors that forward **kwargs, several named problems, parameter classes ---------------


class Base:
    forwards_kwargs = True

    def __init__(self, *, depth: int = 1, label: str = "x") -> None:
        self.depth, self.label = depth, label


class Child(Base):
    def __init__(self, *, width: int = 2, **rest: Any) -> None:
        super().__init__(**rest)


class Opaque:
    def __init__(self, **anything: Any) -> None: ...


def test_forwarded_keywords_are_checked_against_the_base_constructor() -> None:
    assert param_problems(Child, {"width": 3, "depth": 2, "label": "y"}) == []
    problems = param_problems(Child, {"dpeth": 2, "label": 5})
    assert problems[0] == (
        None,
        "got an unexpected keyword argument 'dpeth'; accepted: width, depth, label",
    )
    assert problems[1] == ("label", "Input should be a valid string, got 5")
    assert param_problems(Opaque, {"dpeth": 2}) == []  # no forwarding declared: open-ended


@dataclass(frozen=True)
class Window:
    size: int = 2
    stride: int | None = None
    mode: str = "map"

    def __post_init__(self) -> None:
        if self.size < 1:
            raise ValueError(f"size must be >= 1, got {self.size}")
        if self.mode not in ("map", "reduce"):
            raise ValueError(f"mode must be map or reduce, got {self.mode!r}")
        if self.stride is not None and self.stride > self.size:
            raise ValueError("stride must not exceed size")


def test_field_problems_names_every_bad_value_then_checks_them_together() -> None:
    assert field_problems(Window, {"size": 0, "mode": "scan", "other": 1}) == [
        ("size", "must be >= 1, got 0"),
        ("mode", "must be map or reduce, got 'scan'"),
    ]
    assert field_problems(Window, {"size": 1, "stride": 2}) == [
        (None, "stride must not exceed size")
    ]
    assert field_problems(Window, {"size": 3, "stride": 3}) == []  # stride > default size
    assert field_problems(Window, {"size": 3, "stride": 3, "mode": "scan"}) == [
        ("mode", "must be map or reduce, got 'scan'")
    ]
    assert field_problems(Window, {"size": 0, "stride": 3}) == [
        ("size", "must be >= 1, got 0"),
        ("stride", "must not exceed size"),
    ]


class Checked(Child):
    @classmethod
    def check_params(cls, arguments: Mapping[str, Any]) -> None:
        problems = field_problems(Window, {"size": arguments["width"]})
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
