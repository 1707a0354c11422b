"""Named extension points: retrievers, strategies, scorers, dataset loaders, task types, CLI
commands and stage backends.

Each ``Registry`` maps names to factories. Factories arrive three ways, all lazy:

* the ``@REGISTRY.register("name")`` decorator, for code that is already imported;
* ``REGISTRY.register_lazy("name", "package.module:attr")``, imported on first use;
* Python entry points in the registry's group (``scanrag.retrievers`` ...), which is how
  both the built-ins (declared in ``pyproject.toml``) and third-party plugins register.

Nothing heavy is imported until ``create``/``get`` asks for that one name, so the kernel never
imports the upper layers of the project.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterable
from importlib import metadata
from typing import Any, Generic, TypeVar

T = TypeVar("T")


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` for the closest candidate to a mistyped ``word``, else ``""``."""
    match = difflib.get_close_matches(word, sorted(set(candidates)), n=1, cutoff=0.75)
    return f" (did you mean {match[0]!r}?)" if match else ""


class UnknownNameError(KeyError):
    """A registry was asked for a name it does not know; the message suggests the closest
    known name and lists them all."""

    def __init__(self, kind: str, name: str, known: list[str]) -> None:
        self.kind, self.name, self.known = kind, name, known
        listing = ", ".join(known) if known else "(none registered)"
        hint = did_you_mean(name, known)
        super().__init__(f"unknown {kind} {name!r}{hint}; known {kind}s: {listing}")

    def __str__(self) -> str:  # KeyError quotes its message otherwise
        return str(self.args[0])


class RegistryError(RuntimeError):
    """A registered factory could not be loaded."""


def import_target(target: str) -> Any:
    """The object named by ``"package.module:attr"`` (``attr`` may be dotted), imported now."""
    module_name, _, attr = target.partition(":")
    module = importlib.import_module(module_name)
    obj: Any = module
    for part in attr.split(".") if attr else []:
        obj = getattr(obj, part)
    return obj


class Registry(Generic[T]):
    """A name → factory table with lazy loading and entry-point discovery."""

    def __init__(self, kind: str, group: str) -> None:
        self.kind = kind
        self.group = group
        self._factories: dict[str, Callable[..., T]] = {}
        self._lazy: dict[str, str] = {}
        self._entry_points_loaded = False

    def register(
        self, name: str, *, replace: bool = False
    ) -> Callable[[Callable[..., T]], Callable[..., T]]:
        """Decorator registering a factory (a class or a function) under ``name``."""

        def decorate(factory: Callable[..., T]) -> Callable[..., T]:
            self._add(name, replace)
            self._factories[name] = factory
            return factory

        return decorate

    def register_lazy(self, name: str, target: str, *, replace: bool = False) -> None:
        """Register ``"module:attr"``, imported only when ``name`` is first used."""
        self._add(name, replace)
        self._lazy[name] = target

    def unregister(self, name: str) -> None:
        self._factories.pop(name, None)
        self._lazy.pop(name, None)

    def _add(self, name: str, replace: bool) -> None:
        if not name or not name.replace("_", "").replace("-", "").replace(".", "").isalnum():
            raise ValueError(f"invalid {self.kind} name {name!r}")
        if not replace and (name in self._factories or name in self._lazy):
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._factories.pop(name, None)
        self._lazy.pop(name, None)

    def _load_entry_points(self) -> None:
        if self._entry_points_loaded:
            return
        self._entry_points_loaded = True
        for ep in metadata.entry_points(group=self.group):
            if ep.name not in self._factories and ep.name not in self._lazy:
                self._lazy[ep.name] = ep.value

    def names(self) -> list[str]:
        self._load_entry_points()
        return sorted({*self._factories, *self._lazy})

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.names()

    def get(self, name: str) -> Callable[..., T]:
        """Return the factory for ``name``, importing it if needed."""
        self._load_entry_points()
        if name in self._factories:
            return self._factories[name]
        if name not in self._lazy:
            raise UnknownNameError(self.kind, name, self.names())
        target = self._lazy[name]
        try:
            factory = import_target(target)
        except Exception as exc:
            raise RegistryError(f"{self.kind} {name!r}: cannot load {target}: {exc}") from exc
        self._factories[name] = factory
        del self._lazy[name]
        return factory

    def create(self, name: str, /, **kwargs: Any) -> T:
        """Instantiate ``name`` with keyword arguments."""
        return self.get(name)(**kwargs)


# The project's extension points. Built-ins register through entry points in pyproject.toml.
RETRIEVERS: Registry[Any] = Registry("retriever", "scanrag.retrievers")
STRATEGIES: Registry[Any] = Registry("strategy", "scanrag.strategies")
SCORERS: Registry[Any] = Registry("scorer", "scanrag.scorers")
COMMANDS: Registry[Any] = Registry("command", "scanrag.commands")
# Dataset loaders: ``loader(path, pdf_dir=None, *, validate=True, **options) -> Dataset``
# (``scanrag.datasets.load_dataset`` looks one up by name).
LOADERS: Registry[Any] = Registry("dataset loader", "scanrag.loaders")
# Task types: each entry is a ``scanrag.tasks.TaskSpec`` (reader prompt, output fields, default
# scorers); ``scanrag.tasks.task_spec(name)`` reads one.
TASKS: Registry[Any] = Registry("task type", "scanrag.tasks")
# Stages the runner delegates to upper packages: ``scoring`` (a ``ScoringBackend``) and
# ``report`` (a ``ReportWriter``), so the kernel never imports ``evaluation`` itself.
BACKENDS: Registry[Any] = Registry("backend", "scanrag.backends")
