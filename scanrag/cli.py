"""The ``scanrag`` command line.

Sub-commands come from the ``COMMANDS`` registry (entry-point group ``scanrag.commands``):
each entry is a ``register(subparsers)`` function that adds its parser and sets ``func``.
Command modules stay light at import time; heavy work is imported inside the handlers.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from scanrag import __version__
from scanrag.registry import COMMANDS, RegistryError
from scanrag.scrub import ScrubbedStream


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
    return parser


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
