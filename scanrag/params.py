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
  ``TypeError`` (reported for the parameters as a whole), or :class:`ParamProblemsError` to name
  several parameters at once; constructors call the same hook, so one place owns a rule.

A class whose constructor passes its ``**kwargs`` on to its base class's constructor
(``super().__init__(**kwargs)``) says so with a true class attribute ``forwards_kwargs``: its
accepted names and annotations are then its own plus those of the constructors it forwards to,
up the method resolution order, until one without ``**kwargs``. ``field_problems`` tries each
argument of a small parameter class (a dataclass whose ``__post_init__`` owns the rules) alone,
so every bad value is named, not only the first.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from pydantic import ConfigDict, TypeAdapter, ValidationError

Problem = tuple[str | None, str]
"""(parameter name, or ``None`` for the parameters as a whole; message)."""


class ParamProblemsError(ValueError):
    """Several problems found by a ``check_params`` rule, each under its parameter name."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(_joined(name, message) for name, message in self.problems))


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
    chain = _signatures(factory)
    if not chain:  # no signature to check against
        return []
    parameters = list(chain[0].parameters.values())[positional:]
    for signature in chain[1:]:
        parameters += [p for p in signature.parameters.values() if p.kind in _ACCEPTED]
    open_ended = any(p.kind is p.VAR_KEYWORD for p in chain[-1].parameters.values())
    named: dict[str, inspect.Parameter] = {}
    for p in parameters:
        if p.kind in _ACCEPTED:
            named.setdefault(p.name, p)  # a subclass's own parameter wins
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


def _constructors(factory: Callable[..., Any]) -> list[Callable[..., Any]]:
    """The callables whose keyword parameters ``factory`` accepts: itself, or for a class that
    ``forwards_kwargs``, the ``__init__`` of each class up its MRO until one without
    ``**kwargs``."""
    if not (inspect.isclass(factory) and getattr(factory, "forwards_kwargs", False)):
        return [factory]
    chain: list[Callable[..., Any]] = []
    for klass in factory.__mro__:
        init = klass.__dict__.get("__init__")
        if klass is object or not inspect.isfunction(init):
            continue
        chain.append(init)
        if not any(p.kind is p.VAR_KEYWORD for p in inspect.signature(init).parameters.values()):
            break
    return chain or [factory]


def _signatures(factory: Callable[..., Any]) -> list[inspect.Signature]:
    """The signatures of :func:`_constructors` (``self`` dropped); ``[]`` when there is none."""
    constructors = _constructors(factory)
    if constructors == [factory]:
        try:
            return [inspect.signature(factory)]
        except (TypeError, ValueError):
            return []
    signatures = []
    for init in constructors:
        signature = inspect.signature(init)
        signatures.append(signature.replace(parameters=list(signature.parameters.values())[1:]))
    return signatures


def _hints(factory: Callable[..., Any]) -> dict[str, Any]:
    hints: dict[str, Any] = {}
    for constructor in _constructors(factory):
        target = constructor.__init__ if inspect.isclass(constructor) else constructor  # type: ignore[misc]
        try:
            found = typing.get_type_hints(target)
        except Exception:  # an annotation that only exists for type checkers: check nothing
            continue
        for name, hint in found.items():
            hints.setdefault(name, hint)
    return hints


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


def field_problems(factory: Callable[..., Any], arguments: Mapping[str, Any]) -> list[Problem]:
    """What ``factory`` (a small parameter class whose constructor owns the rules) refuses in
    ``arguments``, so that every bad value is named, not only the first.

    Each of its parameters found there is tried alone (the others at their defaults); one that
    fails alone is named unless it passes beside the values that passed alone (it only clashed
    with a default). The values not named are then tried together: a rule relating two of them
    is reported for the parameters as a whole. Messages drop a leading parameter name (the
    caller shows it as the key)."""
    try:
        accepted = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return []
    given = {name: value for name, value in arguments.items() if name in accepted}
    if _refusal(factory, given) is None:
        return []
    alone = {name: _refusal(factory, {name: value}) for name, value in given.items()}
    good = {name: given[name] for name, error in alone.items() if error is None}
    good_error = _refusal(factory, good)
    problems: list[Problem] = []
    kept = dict(good)
    for name, error in alone.items():
        if error is None:
            continue
        if good_error is None:
            error = _refusal(factory, {**good, name: given[name]})
            if error is None:
                kept[name] = given[name]
                continue
        problems.append((name, error.removeprefix(f"{name} ")))
    together = _refusal(factory, kept)
    if together is not None:
        problems.append((None, together))
    return problems


def _refusal(factory: Callable[..., Any], arguments: Mapping[str, Any]) -> str | None:
    """Why ``factory(**arguments)`` refuses them, or ``None``."""
    try:
        factory(**arguments)
    except (TypeError, ValueError) as exc:
        return str(exc)
    return None
