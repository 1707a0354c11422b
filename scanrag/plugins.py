"""Importing plugins: modules (or ``.py`` files) whose import registers components.

A plugin registers retrievers, strategies, scorers, loaders, task types or commands with the
decorators of :mod:`scanrag.registry` when it is imported. Two ways name one: a config's
``plugins:`` list and ``--plugin MODULE`` on any ``scanrag`` sub-command. A name is a module
importable from the installed packages or the current directory (``my_retriever``,
``my_package.retrievers``), or a path to a ``.py`` file (``plugins/keyword.py``), imported
under its file name's stem.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import ModuleType


class PluginError(ImportError):
    """A plugin could not be imported; the message names it and says why."""


def is_file_plugin(name: str) -> bool:
    """Whether ``name`` is a path to a ``.py`` file rather than a module name."""
    return name.endswith(".py") or "/" in name or os.sep in name


def import_plugin(name: str) -> ModuleType:
    """Import one plugin (module name or ``.py`` file); :class:`PluginError` if it fails."""
    try:
        if is_file_plugin(name):
            return _import_file(Path(name).expanduser())
        cwd = os.getcwd()
        if cwd not in sys.path and "" not in sys.path:
            sys.path.append(cwd)  # after the installed packages: a local file cannot shadow them
        return importlib.import_module(name)
    except PluginError:
        raise
    except Exception as exc:
        raise PluginError(f"cannot import plugin {name!r}: {type(exc).__name__}: {exc}") from exc


def _import_file(path: Path) -> ModuleType:
    if not path.is_file():
        raise PluginError(f"cannot import plugin {str(path)!r}: no such file")
    name = path.stem
    loaded = sys.modules.get(name)
    if (
        loaded is not None
        and Path(getattr(loaded, "__file__", "") or "").resolve() == path.resolve()
    ):
        return loaded
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise PluginError(f"cannot import plugin {str(path)!r}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def import_plugins(names: Iterable[str]) -> list[ModuleType]:
    """Import every plugin in order (each once)."""
    return [import_plugin(name) for name in dict.fromkeys(names)]


def plugin_arguments(argv: Sequence[str]) -> list[str]:
    """The ``--plugin`` values of a command line (``--plugin X`` and ``--plugin=X``), read
    before the parser is built so that a plugin may add sub-commands too."""
    found: list[str] = []
    args = list(argv)
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if arg == "--plugin" and i + 1 < len(args):
            found.append(args[i + 1])
        elif arg.startswith("--plugin="):
            found.append(arg.split("=", 1)[1])
    return found
