"""Keyword parameters checked without calling the factory they are for.

Configs name components (strategies, retrievers, dataset loaders...) and give their
parameters as plain data; a typo or a wrong type should stop a run before anything is built or
loaded, with the accepted names listed. ``param_problems`` reports, for one factory (a class or
a function):

* for a factory whose parameters one pydantic model owns (a class attribute ``params_class``:
  the strategies), what that model refuses — names, types and rules, checked once, by the class
  the factory itself builds (:func:`model_problems`);
* otherwise, from the signature: every given name it does not accept (with the accepted names),
  every required parameter left without a value, every given value that does not fit its
  annotation, checked by pydantic in strict mode (no string-to-number coercion; an int is a
  valid float; annotations pydantic cannot check — protocols, names only imported for type
  checkers — are skipped); then the factory's own ``check_params(arguments)`` classmethod, when
  it has one: cheap range and cross-parameter rules. It receives every argument with the
  defaults filled in (a value already reported above is replaced by its default) and raises
  ``ValueError`` or ``TypeError`` (reported for the parameters as a whole), or
  :class:`ParamProblemsError` to name several parameters at once; constructors call the same
  hook, so one place owns a rule.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

M = TypeVar("M", bound=BaseModel)
Problem = tuple[str | None, str]
"""(parameter name, or ``None`` for the parameters as a whole; message)."""


class ParamProblemsError(ValueError):
    """Several problems found by a ``check_params`` rule, each under its parameter name."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(_joined(name, message) for name, message in self.problems))


class ParamNamesError(ParamProblemsError, TypeError):
    """Problems that include a name the parameters do not accept, or a missing one: a
    ``TypeError`` too, as a call with a wrong keyword raises."""


def _joined(name: str | None, message: str) -> str:
    return message if name is None or message.startswith(name) else f"{name}: {message}"


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
    model = getattr(factory, "params_class", None)
    if isinstance(model, type) and issubclass(model, BaseModel):
        return model_problems(model, params)
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
    except ParamProblemsError as exc:
        return list(exc.problems)
    except (TypeError, ValueError, LookupError, RuntimeError) as exc:
        return [(None, str(exc))]
    return []


def model_problems(model: type[BaseModel], params: Mapping[str, Any]) -> list[Problem]:
    """What ``model`` (a parameter class with ``extra="forbid"``) refuses in ``params``, in the
    order :func:`param_problems` reports a signature's: unknown names (with the accepted
    ones, the class's own before those it inherits), missing ones, then each refused value
    under its name (a message that starts with the name, as a validator writes it, without
    it), then the rules relating several values."""
    try:
        model.model_validate(params)
    except ValidationError as exc:
        found = _problems(model, params, exc.errors())
    except (TypeError, LookupError, RuntimeError) as exc:  # a rule's own error (a model folder)
        return [(None, str(exc))]
    else:
        return []
    return [(n, m.removeprefix(f"{n} ") if n else m) for n, m in found]


def _problems(
    model: type[BaseModel], params: Mapping[str, Any], errors: list[Any]
) -> list[Problem]:
    unknown = [e for e in errors if e["type"] == "extra_forbidden"]
    missing = [e for e in errors if e["type"] == "missing"]
    whole = [e for e in errors if not e["loc"] and e not in unknown]
    by_field: dict[str, list[Any]] = {}
    for error in errors:
        if error["loc"] and error not in unknown and error not in missing:
            by_field.setdefault(str(error["loc"][0]), []).append(error)
    accepted = ", ".join(accepted_names(model)) or "(none)"
    problems: list[Problem] = [
        (None, f"got an unexpected keyword argument {e['loc'][0]!r}; accepted: {accepted}")
        for e in unknown
    ]
    problems += [(None, f"missing a required argument: {e['loc'][0]!r}") for e in missing]
    for name, found in by_field.items():
        problems.append((name, _value_problem(model, name, found, params.get(name))))
    return problems + [(None, _message(e)) for e in whole]


def accepted_names(model: type[BaseModel]) -> list[str]:
    """The fields of ``model``, those it declares itself first, then its bases' in turn."""
    names: dict[str, None] = {}
    for klass in model.__mro__:
        own = inspect.get_annotations(klass)
        names.update((n, None) for n in own if n in model.model_fields)
    return list(names)


def _message(error: Any) -> str:
    """A validator's own message without pydantic's ``Value error, `` prefix."""
    message = str(error["msg"])
    return message.removeprefix("Value error, ") if error["type"] == "value_error" else message


def _value_problem(model: type[BaseModel], name: str, errors: list[Any], value: Any) -> str:
    if len(errors) > 1:
        annotation = model.model_fields[name].annotation
        return f"expected {getattr(annotation, '__name__', annotation)}, got {value!r}"
    error = errors[0]
    if error["type"] == "value_error":
        return _message(error)
    where = "".join(f"[{part!r}]" for part in error["loc"][1:])
    return f"{error['msg']}{' at ' + where if where else ''}, got {value!r}"


def checked(model: type[M], params: Mapping[str, Any]) -> M:
    """``model`` built from ``params``, or :class:`ParamProblemsError` naming every problem
    :func:`model_problems` finds (:class:`ParamNamesError` when a name is wrong); a
    validator's message that names its parameter reads as written (``k must be >= 1``)."""
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        errors = exc.errors()
        problems = _problems(model, params, errors)
        names = any(e["type"] in ("extra_forbidden", "missing") for e in errors)
        raise (ParamNamesError if names else ParamProblemsError)(problems) from None
