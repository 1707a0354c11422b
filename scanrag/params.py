"""Keyword parameters checked against a factory's signature, without calling the factory.

Configs name components (retrievers, dataset loaders...) and give their parameters as plain
data; a typo or a wrong type should stop a run before anything is built or loaded, with the
accepted names listed. ``param_problems`` reports, for one factory (a class or a function):

* every given name the signature does not accept (with the accepted names), and every required
  parameter left without a value;
* every given value that does not fit its annotation, checked by pydantic in strict mode (no
  string-to-number coercion; an int is a valid float). Annotations pydantic cannot check
  (protocols, names only imported for type checkers) are skipped;
* the factory's own ``check_params(arguments)`` classmethod, when it has one: cheap range and
  cross-parameter rules. It receives every argument with the defaults filled in (a value
  already reported above is replaced by its default) and raises ``ValueError`` or
  ``TypeError``; constructors call the same hook, so one place owns a rule.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Collection, Mapping
from typing import Any

from pydantic import ConfigDict, TypeAdapter, ValidationError

Problem = tuple[str | None, str]
"""(parameter name, or ``None`` for the parameters as a whole; message)."""

_STRICT = ConfigDict(arbitrary_types_allowed=True, strict=True)
_ACCEPTED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def param_problems(
    factory: Callable[..., Any],
    params: Mapping[str, Any],
    *,
    positional: int = 0,
    skip: Collection[str] = (),
    untyped: Collection[str] = (),
) -> list[Problem]:
    """What is wrong with calling ``factory(<positional args>, **params)``; ``[]`` if nothing.

    ``positional`` arguments are supplied by the caller; ``skip`` names parameters the caller
    fills in itself (not required, not listed as accepted); ``untyped`` names parameters whose
    values are checked elsewhere (component specs of a composite).
    """
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # no signature to check against
        return []
    parameters = list(signature.parameters.values())[positional:]
    open_ended = any(p.kind is p.VAR_KEYWORD for p in parameters)
    named = {p.name: p for p in parameters if p.kind in _ACCEPTED}
    accepted = ", ".join(n for n in named if n not in skip) or "(none)"
    problems: list[Problem] = [
        (None, f"got an unexpected keyword argument {name!r}; accepted: {accepted}")
        for name in params
        if name not in named and not open_ended
    ]
    problems += [
        (None, f"missing a required argument: {name!r}")
        for name, p in named.items()
        if p.default is p.empty and name not in params and name not in skip
    ]
    hints = _hints(factory)
    usable = {}
    for name, value in params.items():
        if name not in named:
            continue
        message = None
        if name in hints and name not in untyped:
            message = _type_problem(hints[name], value, named[name].annotation)
        if message:
            problems.append((name, message))
        else:
            usable[name] = value
    return problems + _own_checks(factory, named, usable)


def _hints(factory: Callable[..., Any]) -> dict[str, Any]:
    target = factory.__init__ if inspect.isclass(factory) else factory  # type: ignore[misc]
    try:
        return typing.get_type_hints(target)
    except Exception:  # an annotation that only exists for type checkers: check nothing
        return {}


def _type_problem(annotation: Any, value: Any, written: Any) -> str | None:
    try:
        adapter: TypeAdapter[Any] = TypeAdapter(annotation, config=_STRICT)
    except Exception:  # a type pydantic cannot check (a protocol...): accept any value
        return None
    try:
        adapter.validate_python(value)
    except ValidationError as exc:
        errors = exc.errors()
        if len(errors) == 1:
            where = "".join(f"[{part!r}]" for part in errors[0]["loc"])
            return f"{errors[0]['msg']}{' at ' + where if where else ''}, got {value!r}"
        expected = written if isinstance(written, str) else getattr(written, "__name__", written)
        return f"expected {expected}, got {value!r}"
    except Exception:  # e.g. isinstance() against a protocol that is not runtime-checkable
        return None
    return None


def _own_checks(
    factory: Callable[..., Any], named: Mapping[str, inspect.Parameter], params: Mapping[str, Any]
) -> list[Problem]:
    check = getattr(factory, "check_params", None)
    if not callable(check):
        return []
    arguments = {n: p.default for n, p in named.items() if p.default is not p.empty}
    arguments.update(params)
    try:
        check(arguments)
    except (TypeError, ValueError, LookupError, RuntimeError) as exc:
        return [(None, str(exc))]
    return []
