"""The ``scanrag`` command line.

Sub-commands come from the ``COMMANDS`` registry (entry-point group ``scanrag.commands``):
each entry is a ``register(subparsers)`` function that adds its parser and sets ``func``.
Command modules stay light at import time; heavy work is imported inside the handlers.
Every sub-command takes ``--plugin MODULE`` (repeatable; a module name or a ``.py`` file):
plugins are imported before the parser is built, so what they register (retrievers,
strategies, scorers, loaders, even commands) is known to every command.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from scanrag import __version__
from scanrag.plugins import PluginError, import_plugins, plugin_arguments
from scanrag.registry import COMMANDS, RegistryError
from scanrag.runner.progress import quiet_library_progress
from scanrag.scrub import ScrubbedStream

PLUGIN_HELP = (
    "import MODULE first (a module name or a .py file) so that what it registers is known; "
    "repeatable"
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="scanrag",
        description="Question answering over long PDFs with per-stage trust scores.",
    )
    parser.add_argument("--version", action="version", version=f"scanrag {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS.names():
        try:
            COMMANDS.get(name)(subparsers)
        except RegistryError as exc:
            print(f"warning: command {name!r} unavailable: {exc}", file=sys.stderr)
    for command in _leaf_parsers(parser):
        command.add_argument(
            "--plugin", action="append", default=[], metavar="MODULE", help=PLUGIN_HELP
        )
    return parser


def _leaf_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """The parsers of every sub-command (``retrieve eval`` too), nested ones included."""
    found: list[argparse.ArgumentParser] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                found += _leaf_parsers(child) or [child]
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Everything it prints, its logging included, goes through the secret
    scrubber (:class:`scanrag.scrub.ScrubbedStream`): a key a server echoes in an error
    message never reaches the terminal."""
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = ScrubbedStream(sys.stdout), ScrubbedStream(sys.stderr)
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = streams


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    quiet_library_progress()  # libraries' tqdm bars stay off a log file or a pipe
    try:
        import_plugins(plugin_arguments(argv))
    except PluginError as exc:
        print(f"error: --plugin: {exc}", file=sys.stderr)
        return 2
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
