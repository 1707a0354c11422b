"""A safe reader for list answers written as Python expressions.

MMLongBench-Doc's released ``eval_score`` reads a gold or a prediction starting with ``[``
with Python's ``eval``, so an extractor writing ``['White'] + ['10%']``, ``[['a', 'b']][0]``,
``[f'a']`` or ``['a', 'b'][::-1]`` is scored on the list those expressions make. This module
computes the same values without ``eval``, from the syntax tree, for a closed set of forms:

* literals: strings, numbers, ``True``/``False``/``None``, and lists, tuples, sets and dicts of
  allowed expressions, with ``*`` unpacking inside list, tuple and set displays;
* ``+`` between any two values (lists, strings, tuples, numbers: whatever Python adds);
* indexing and slicing (``x[0]``, ``x[1:]``, ``x[::-1]``, a dict by key);
* f-strings whose fields are allowed expressions (conversions ``!s``/``!r``/``!a`` and format
  specs included, widths up to :data:`MAX_WIDTH`);
* arithmetic on numbers: ``-x``, ``+x``, ``-``, ``*``, ``/``, ``//``, ``%`` and ``**`` (an
  exponent up to :data:`MAX_EXPONENT`).

Every intermediate value is bounded before it is made, so no answer can take the scorer's
time or memory: an integer holds at most :data:`MAX_INT_BITS` bits (a power is refused from
its base's bit length × its exponent, a product from the sum of its factors' bit lengths,
before either is computed; about 4,200 digits, which ``str`` can still print), a string or a
sequence at most :data:`MAX_SIZE` characters or items, and one evaluation runs at most
:data:`MAX_SECONDS` (:func:`time_bound`). What passes a bound raises :class:`TooCostlyError`, a
refused form like the others (``eval`` would compute ``[(9**999)**999]``, slowly, and then fail
to print it; ``[((9**999)**999)**999]`` would run for minutes).

Where ``eval`` itself would raise on such an expression (an unknown name, ``1 / 0``,
``[1] + 'a'``, an index out of range), :func:`evaluate` raises the same kind of error, and the
caller scores it as the released pipeline does. Anything outside the set (a call, an
attribute, a comparison, ``and``/``or``, a comprehension, a lambda, repetition of a sequence)
raises :class:`OutsideSubsetError`, whose message says what was refused; such an answer scores 0
with that reason, where ``eval`` might have computed a list.
"""

from __future__ import annotations

import ast
import operator
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

MAX_LENGTH = 100_000  # characters of an expression
MAX_EXPONENT = 1_000
MAX_WIDTH = 10_000
MAX_INT_BITS = 14_000  # below the 4,300 digits int -> str prints by default
MAX_SIZE = 100_000  # characters of a string, items of a list, tuple, set or dict
MAX_SECONDS = 5.0  # one evaluation, all of it
_NUMBER = (int, float, complex)
_ARITHMETIC: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_CONVERSIONS: dict[int, Callable[[Any], str]] = {ord("s"): str, ord("r"): repr, ord("a"): ascii}
_WIDTHS = re.compile(r"\d+")


class OutsideSubsetError(ValueError):
    """The expression uses a form this reader does not compute (``eval`` might)."""


class TooCostlyError(OutsideSubsetError):
    """A value or the time it takes passes a bound (``eval`` might compute it, slowly)."""


# The deadline of the work under way, per thread and task (``time.monotonic()`` seconds).
_DEADLINE: ContextVar[float] = ContextVar("expression_deadline", default=float("inf"))


@contextmanager
def time_bound(seconds: float) -> Iterator[None]:
    """Work inside the block passes :func:`check_time` for ``seconds`` at most (or until an
    enclosing bound ends, if that comes first)."""
    token = _DEADLINE.set(min(_DEADLINE.get(), time.monotonic() + seconds))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def check_time(what: str = "evaluating the expression") -> None:
    """Raise :class:`TooCostlyError` once the enclosing :func:`time_bound` has run out."""
    if time.monotonic() > _DEADLINE.get():
        raise TooCostlyError(f"{what} took longer than its time bound")


def evaluate(text: str) -> Any:
    """The value ``eval(text)`` would give, for the forms listed in the module docstring; at
    most :data:`MAX_SECONDS` (less inside a shorter :func:`time_bound`)."""
    if len(text) > MAX_LENGTH:
        raise OutsideSubsetError(f"expression longer than {MAX_LENGTH} characters")
    with time_bound(MAX_SECONDS):
        tree = ast.parse(text.strip(), mode="eval")  # SyntaxError as eval would raise
        return _value(tree.body)


def _value(node: ast.expr) -> Any:
    handler = _HANDLERS.get(type(node))
    if handler is None:
        raise OutsideSubsetError(f"{type(node).__name__.lower()} is outside the safe subset")
    check_time()
    return _bounded(handler(node))


def _bounded(value: Any) -> Any:
    """``value``, or :class:`TooCostlyError` when it passes a size bound."""
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise TooCostlyError(
            f"an integer of {value.bit_length():,} bits is outside the safe subset (at most "
            f"{MAX_INT_BITS:,})"
        )
    if isinstance(value, str | list | tuple | set | dict) and len(value) > MAX_SIZE:
        kind = "string" if isinstance(value, str) else type(value).__name__
        unit = "characters" if isinstance(value, str) else "items"
        raise TooCostlyError(
            f"a {kind} of {len(value):,} {unit} is outside the safe subset (at most {MAX_SIZE:,})"
        )
    return value


def _check_cost(op: ast.operator, left: Any, right: Any) -> None:
    """Refuse a power or a product of integers whose result would pass :data:`MAX_INT_BITS`,
    before it is computed (its bit length is at most the bound computed here)."""
    if isinstance(op, ast.Pow) and abs(right) > MAX_EXPONENT:
        raise OutsideSubsetError(f"an exponent above {MAX_EXPONENT} is outside the safe subset")
    if not isinstance(left, int) or not isinstance(right, int):
        return  # floats overflow (OverflowError, as eval) and complex numbers stay small
    if isinstance(op, ast.Pow) and right > 0:
        bits = left.bit_length() * right
        what = f"a power of up to {bits:,} bits ({left.bit_length():,}-bit base, exponent {right})"
    elif isinstance(op, ast.Mult):
        bits = left.bit_length() + right.bit_length()
        what = f"a product of up to {bits:,} bits"
    else:
        return
    if bits > MAX_INT_BITS:
        raise TooCostlyError(f"{what} is outside the safe subset (at most {MAX_INT_BITS:,} bits)")


def _constant(node: ast.expr) -> Any:
    assert isinstance(node, ast.Constant)
    return node.value


def _items(elements: list[ast.expr]) -> list[Any]:
    out: list[Any] = []
    for element in elements:
        if isinstance(element, ast.Starred):
            out.extend(_value(element.value))  # TypeError for a non-iterable, as eval
        else:
            out.append(_value(element))
    return out


def _list(node: ast.expr) -> Any:
    assert isinstance(node, ast.List)
    return _items(node.elts)


def _tuple(node: ast.expr) -> Any:
    assert isinstance(node, ast.Tuple)
    return tuple(_items(node.elts))


def _set(node: ast.expr) -> Any:
    assert isinstance(node, ast.Set)
    return set(_items(node.elts))


def _dict(node: ast.expr) -> Any:
    assert isinstance(node, ast.Dict)
    out: dict[Any, Any] = {}
    for key, value in zip(node.keys, node.values, strict=True):
        if key is None:
            raise OutsideSubsetError("** unpacking in a dict is outside the safe subset")
        out[_value(key)] = _value(value)
    return out


def _binary(node: ast.expr) -> Any:
    assert isinstance(node, ast.BinOp)
    left, right = _value(node.left), _value(node.right)
    if isinstance(node.op, ast.Add):
        return left + right
    function = _ARITHMETIC.get(type(node.op))
    if function is None:
        raise OutsideSubsetError(f"operator {type(node.op).__name__} is outside the safe subset")
    if not isinstance(left, _NUMBER) or not isinstance(right, _NUMBER):
        name = type(node.op).__name__
        raise OutsideSubsetError(f"{name} of non-numbers is outside the safe subset")
    _check_cost(node.op, left, right)
    return function(left, right)


def _unary(node: ast.expr) -> Any:
    assert isinstance(node, ast.UnaryOp)
    operand = _value(node.operand)
    if not isinstance(node.op, ast.USub | ast.UAdd) or not isinstance(operand, _NUMBER):
        raise OutsideSubsetError(f"{type(node.op).__name__} is outside the safe subset")
    return -operand if isinstance(node.op, ast.USub) else +operand


def _slice(node: ast.expr) -> Any:
    assert isinstance(node, ast.Slice)

    def part(value: ast.expr | None) -> Any:
        return None if value is None else _value(value)

    return slice(part(node.lower), part(node.upper), part(node.step))


def _subscript(node: ast.expr) -> Any:
    assert isinstance(node, ast.Subscript)
    return _value(node.value)[_value(node.slice)]


def _fstring(node: ast.expr) -> Any:
    assert isinstance(node, ast.JoinedStr)
    return "".join(str(_value(part)) for part in node.values)


def _field(node: ast.expr) -> Any:
    assert isinstance(node, ast.FormattedValue)
    value = _value(node.value)
    if node.conversion != -1:
        value = _CONVERSIONS[node.conversion](value)
    spec = "" if node.format_spec is None else str(_value(node.format_spec))
    if any(int(width) > MAX_WIDTH for width in _WIDTHS.findall(spec)):
        raise OutsideSubsetError(f"a format width above {MAX_WIDTH} is outside the safe subset")
    return format(value, spec)


def _name(node: ast.expr) -> Any:
    assert isinstance(node, ast.Name)
    raise NameError(f"name {node.id!r} is not defined")  # what eval raises without globals


_HANDLERS: dict[type[ast.expr], Callable[[ast.expr], Any]] = {
    ast.Constant: _constant,
    ast.List: _list,
    ast.Tuple: _tuple,
    ast.Set: _set,
    ast.Dict: _dict,
    ast.BinOp: _binary,
    ast.UnaryOp: _unary,
    ast.Slice: _slice,
    ast.Subscript: _subscript,
    ast.JoinedStr: _fstring,
    ast.FormattedValue: _field,
    ast.Name: _name,
}
