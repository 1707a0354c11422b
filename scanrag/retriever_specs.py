"""Retriever specs: config aliases resolved (inside composites too), checked, and built.

A config names retrievers by alias (``bge: {type: dense, params: {model: ...}}``; the type
defaults to the alias). A composite retriever (``hybrid``) lists the constructor parameters
that hold its component retrievers in the class attribute ``component_params``; each such
parameter takes a list whose entries are

* a config alias (``bge``): that alias's type and parameters;
* otherwise a registered retriever name (``bm25``), with its defaults;
* or a mapping ``{name: TYPE, **params}`` of a registered type (``type`` may stand for
  ``name``, and ``{type: TYPE, params: {...}}`` is read as well).

Aliases that refer to each other in a cycle are an error. ``RetrieverSpecs.problems`` checks
every alias against the real constructors without building anything (``scanrag.params``:
names, annotated types, the class's ``check_params`` rules), recursively through composites.
``RetrieverSpecs.build`` builds bottom-up, so a composite receives built components, and gives
``inject`` values (the run's samples) to every constructor that takes them and was not given
them. A composite's component parameter left out resolves its default list the same way
(``hybrid``'s ``("bm25", "dense")`` names the config's aliases ``bm25`` and ``dense`` when it
has them). With an ``IndexPool`` (``scanrag.index_pool``), leaves are shared by type and
parameters and indexed once, from a saved index where there is one. Everything resolves
through the ``RETRIEVERS`` registry, so the kernel imports no retriever code itself.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from scanrag.params import param_problems
from scanrag.protocols import Retriever
from scanrag.registry import RETRIEVERS, Registry, RegistryError, UnknownNameError

if TYPE_CHECKING:
    from scanrag.index_pool import IndexPool


class AliasSpec(Protocol):
    """What a config says about one retriever alias (``scanrag.config.RetrieverSpec``)."""

    @property
    def type(self) -> str | None: ...

    @property
    def params(self) -> dict[str, Any]: ...


class RetrieverSpecError(ValueError):
    """Retriever aliases cannot be resolved (a cycle, an entry that names nothing)."""


def component_params(factory: Callable[..., Any]) -> tuple[str, ...]:
    """The constructor parameters of ``factory`` that hold lists of component retrievers."""
    return tuple(getattr(factory, "component_params", ()))


def component_entry(entry: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """``(registered type, params)`` of a mapping entry (see the module docstring)."""
    keys = [key for key in ("name", "type") if key in entry]
    if len(keys) != 1:
        raise RetrieverSpecError(
            f"a component mapping needs one 'name' (or 'type') key, got {sorted(entry)}"
        )
    kind = entry[keys[0]]
    if not isinstance(kind, str):
        raise RetrieverSpecError(f"a component's {keys[0]!r} must be a string, got {kind!r}")
    params = {key: value for key, value in entry.items() if key != keys[0]}
    if set(params) == {"params"} and isinstance(params["params"], Mapping):
        params = dict(params["params"])
    return kind, params


def accepts(factory: Callable[..., Any], name: str) -> bool:
    """Whether ``factory`` takes a keyword argument ``name``."""
    try:
        parameters = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return False
    return name in parameters


def create_retriever(
    name: str,
    params: Mapping[str, Any] | None = None,
    *,
    aliases: Mapping[str, AliasSpec] | None = None,
    inject: Mapping[str, Any] | None = None,
    built: Mapping[str, Any] | None = None,
) -> Retriever:
    """Build retriever ``name``, empty: a config alias of ``aliases`` (its type and
    parameters), else the registered type ``name`` with ``params`` (the constructor's keyword
    arguments). Component entries of a composite resolve the same way; ``inject`` values go to
    every constructor that takes them and was not given them.

    Unknown names raise ``scanrag.registry.UnknownNameError`` listing the known ones; a
    factory that does not build a ``Retriever`` raises ``TypeError``.
    """
    specs = RetrieverSpecs(aliases or {})
    if name in specs.aliases:
        if params:
            raise RetrieverSpecError(
                f"{name!r} is a retriever alias of the config, which sets its parameters; "
                f"got {sorted(params)} as well"
            )
        return specs.build(name, inject=inject, built=built)
    return specs.build_type(name, params or {}, inject=inject, built=built)


class RetrieverSpecs:
    """A config's retriever aliases, resolved against each other and the registry."""

    def __init__(
        self,
        aliases: Mapping[str, AliasSpec],
        registry: Registry[Any] = RETRIEVERS,
        prefix: str = "retrievers",
        pool: IndexPool | None = None,
        factories: dict[str, Callable[..., Any]] | None = None,
    ) -> None:
        self.aliases, self.registry, self.prefix = aliases, registry, prefix
        self.pool = pool
        self.factories: dict[str, Callable[..., Any]] = factories if factories is not None else {}
        """Registered type → its factory, bound when first resolved (by :meth:`problems`, the
        check before a run, for every type the config names and every default component)
        and used from then on: the run builds what was checked, without asking the registry
        again."""

    def type_of(self, alias: str) -> str:
        return self.aliases[alias].type or alias

    def factory(self, kind: str) -> Callable[..., Any]:
        """The factory of the registered type ``kind`` (bound on first use; an unknown name
        raises ``UnknownNameError`` listing the known ones)."""
        found = self.factories.get(kind)
        if found is None:
            found = self.factories[kind] = self.registry.get(kind)
        return found

    def with_pool(self, pool: IndexPool | None) -> RetrieverSpecs:
        """These specs building through ``pool``, sharing the bound factories."""
        return RetrieverSpecs(self.aliases, self.registry, self.prefix, pool, self.factories)

    # -- building -------------------------------------------------------------------------
    def build(
        self,
        alias: str,
        *,
        inject: Mapping[str, Any] | None = None,
        built: Mapping[str, Any] | None = None,
    ) -> Retriever:
        """Build ``alias``; aliases in ``built`` are reused instead of built again."""
        return self._alias(alias, dict(inject or {}), dict(built or {}), ())

    def build_type(
        self,
        kind: str,
        params: Mapping[str, Any],
        *,
        inject: Mapping[str, Any] | None = None,
        built: Mapping[str, Any] | None = None,
    ) -> Retriever:
        """Build the registered type ``kind`` with ``params``."""
        return self._build(kind, params, dict(inject or {}), dict(built or {}), ())

    def _alias(
        self, alias: str, inject: dict[str, Any], built: dict[str, Any], stack: tuple[str, ...]
    ) -> Retriever:
        if alias in stack:
            raise RetrieverSpecError(_cycle_message([*stack, alias]))
        if alias in built:
            reused: Retriever = built[alias]
            return reused
        spec = self.aliases[alias]
        return self._build(spec.type or alias, spec.params, inject, built, (*stack, alias))

    def _build(
        self,
        kind: str,
        params: Mapping[str, Any],
        inject: dict[str, Any],
        built: dict[str, Any],
        stack: tuple[str, ...],
    ) -> Retriever:
        factory = self.factory(kind)
        arguments = dict(params)
        components = component_params(factory)
        for name in components:
            value = arguments.get(name, _default(factory, name))
            if value is not _NO_DEFAULT:  # a default list resolves like a given one
                entries = _entry_list(value, name)
                arguments[name] = [self._entry(e, inject, built, stack) for e in entries]
        for name, value in inject.items():
            if name not in arguments and accepts(factory, name):
                arguments[name] = value
        pool = self.pool
        if pool is None:
            return _create(kind, factory, arguments)
        if components:
            retriever = _create(kind, factory, arguments)
            pool.index_composite(retriever)
            return retriever
        key = pool.key(kind, factory, params)
        return pool.leaf(kind, key, lambda: _create(kind, factory, arguments))

    def _entry(
        self, entry: Any, inject: dict[str, Any], built: dict[str, Any], stack: tuple[str, ...]
    ) -> Any:
        if isinstance(entry, str):
            if entry in self.aliases:
                return self._alias(entry, inject, built, stack)
            return self._build(entry, {}, inject, built, stack)
        if isinstance(entry, Mapping):
            kind, params = component_entry(entry)
            return self._build(kind, params, inject, built, stack)
        return entry  # an instance, given from Python

    # -- checking -------------------------------------------------------------------------
    def problems(self, skip: Sequence[str] = ()) -> list[str]:
        """Every problem of every alias, each under its config key; ``[]`` when all is well.

        ``skip`` names constructor arguments the caller fills in (never config errors).
        """
        check = _Check(self, skip)
        for alias, spec in self.aliases.items():
            key = f"{self.prefix}.{alias}"
            check.node(spec.type or alias, spec.params, key, f"{key}.params", (alias,), True)
        return check.found

    def references(self, alias: str) -> list[str]:
        """The aliases ``alias`` builds on, directly or through other aliases, in order."""
        check = _Check(self, ())
        spec = self.aliases[alias]
        key = f"{self.prefix}.{alias}"
        check.node(spec.type or alias, spec.params, key, f"{key}.params", (alias,), False)
        if check.found:
            raise RetrieverSpecError("; ".join(check.found))
        return list(dict.fromkeys(check.followed))


class _Check:
    """One walk over alias specs, collecting problems (cycles reported once each)."""

    def __init__(self, specs: RetrieverSpecs, skip: Sequence[str]) -> None:
        self.specs, self.skip = specs, tuple(skip)
        self.found: list[str] = []
        self.followed: list[str] = []
        self._cycles: set[frozenset[str]] = set()

    def node(
        self,
        kind: str,
        params: Mapping[str, Any],
        type_key: str,
        params_key: str,
        stack: tuple[str, ...],
        report: bool,
    ) -> None:
        """Check one retriever (``report``: its own parameters too, not only its links)."""
        try:
            factory = self.specs.factory(kind)
        except (UnknownNameError, RegistryError) as exc:
            if report:
                self.found.append(f"{type_key}: {exc}")
            return
        components = component_params(factory)
        if report:
            for name, message in param_problems(
                factory, params, skip=self.skip, untyped=components
            ):
                at = f"{params_key}.{name}" if name else params_key
                self.found.append(f"{at}: {message}")
        for name in components:
            if name in params:
                self._entries(params[name], f"{params_key}.{name}", stack, report)
            else:
                self._bind_defaults(_default(factory, name))

    def _bind_defaults(self, value: Any) -> None:
        """Bind the registered types of a component parameter's default list (the class's
        own choice, not checked: an alias among them is checked as an alias; a name that
        does not resolve fails when the composite is built, as it would unbound)."""
        if isinstance(value, str | Mapping) or not isinstance(value, Sequence):
            return
        for entry in value:
            if isinstance(entry, Mapping):
                try:
                    entry, _ = component_entry(entry)
                except RetrieverSpecError:
                    continue
            if isinstance(entry, str) and entry not in self.specs.aliases:
                with contextlib.suppress(UnknownNameError, RegistryError):
                    self.specs.factory(entry)

    def _entries(self, value: Any, key: str, stack: tuple[str, ...], report: bool) -> None:
        try:
            entries = _entry_list(value, key.rsplit(".", 1)[-1])
        except RetrieverSpecError as exc:
            if report:
                self.found.append(f"{key}: {exc}")
            return
        for i, entry in enumerate(entries):
            self._entry(entry, f"{key}.{i}", stack, report)

    def _entry(self, entry: Any, key: str, stack: tuple[str, ...], report: bool) -> None:
        aliases = self.specs.aliases
        if isinstance(entry, str) and entry in aliases:
            if entry in stack:
                self._cycle([*stack[stack.index(entry) :], entry], key)
                return
            self.followed.append(entry)
            own = f"{self.specs.prefix}.{entry}"
            spec = aliases[entry]
            # the alias's own parameters are reported under its own key
            self.node(spec.type or entry, spec.params, own, f"{own}.params", (*stack, entry), False)
        elif isinstance(entry, str):
            if not self._binds(entry) and report:
                defined = ", ".join(sorted(aliases)) or "(none)"
                known = ", ".join(self.specs.registry.names()) or "(none)"
                self.found.append(
                    f"{key}: {entry!r} is neither a retriever alias of this config (defined: "
                    f"{defined}) nor a registered retriever (known: {known})"
                )
        elif isinstance(entry, Mapping):
            try:
                kind, params = component_entry(entry)
            except RetrieverSpecError as exc:
                if report:
                    self.found.append(f"{key}: {exc}")
                return
            nested = "params" in entry and set(entry) - {"name", "type"} == {"params"}
            self.node(kind, params, key, f"{key}.params" if nested else key, stack, report)
        elif report:
            self.found.append(
                f"{key}: expected a retriever alias, a registered name or a mapping "
                f"{{name: ..., <params>}}, got {entry!r}"
            )

    def _binds(self, kind: str) -> bool:
        """Whether ``kind`` names a registered type (bound here; one that fails to load is
        the build's to report)."""
        try:
            self.specs.factory(kind)
        except UnknownNameError:
            return False
        except RegistryError:
            return True
        return True

    def _cycle(self, path: list[str], key: str) -> None:
        members = frozenset(path)
        if members in self._cycles:
            return
        self._cycles.add(members)
        self.found.append(f"{key}: {_cycle_message(path)}")


_NO_DEFAULT: Any = object()


def _default(factory: Callable[..., Any], name: str) -> Any:
    """The default value of ``factory``'s parameter ``name`` (``_NO_DEFAULT``: none)."""
    try:
        parameter = inspect.signature(factory).parameters.get(name)
    except (TypeError, ValueError):
        return _NO_DEFAULT
    if parameter is None or parameter.default is inspect.Parameter.empty:
        return _NO_DEFAULT
    return parameter.default


def _create(kind: str, factory: Callable[..., Any], arguments: Mapping[str, Any]) -> Retriever:
    retriever = factory(**arguments)
    if not isinstance(retriever, Retriever):
        raise TypeError(
            f"retriever {kind!r} built a {type(retriever).__name__}, which lacks the "
            "Retriever protocol (name, add, search, search_batch, manifest)"
        )
    return retriever


def _entry_list(value: Any, name: str) -> list[Any]:
    if isinstance(value, str | Mapping) or not isinstance(value, Sequence):
        raise RetrieverSpecError(
            f"{name!r} takes a list of retrievers (aliases, names or mappings), got {value!r}"
        )
    return list(value)


def _cycle_message(path: Sequence[str]) -> str:
    return (
        f"retriever aliases refer to each other in a cycle: {' → '.join(path)} (a mapping "
        "{name: TYPE} always means the registered retriever TYPE, never an alias)"
    )
