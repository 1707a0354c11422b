"""YAML read with bounds: a config cannot expand to more than it plausibly holds.

YAML anchors and aliases let a tiny document name the same node many times; nested, they
multiply (six levels of ten aliases is a million values, the "billion laughs" pattern). PyYAML
builds such a document cheaply (aliases share one object), but everything downstream expands
it: validation walks every copy, and the resolved config and the manifest write every copy
out. :func:`load_yaml` composes the document's node graph first and refuses, before anything
is built, a text over ``MAX_BYTES``, more than ``MAX_ALIASES`` alias uses, a graph that
expands to more than ``MAX_NODES`` values or ``MAX_CHARS`` characters of scalars, and an
alias that refers to the node it sits in (a recursive document). Every real config is far
inside these bounds (the shipped ones: under 200 values, no aliases).
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_BYTES = 4 * 1024 * 1024
MAX_ALIASES = 1_000
MAX_NODES = 100_000
MAX_CHARS = 8 * 1024 * 1024


class YamlLimitError(ValueError):
    """A YAML text beyond the bounds (see the module docstring); the message says which."""


class _CountingLoader(yaml.SafeLoader):
    """The safe loader, counting alias uses while it composes the node graph."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.aliases = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                raise YamlLimitError(
                    f"more than {MAX_ALIASES:,} alias uses (*name); write the values out"
                )
        return super().compose_node(parent, index)  # type: ignore[no-any-return]


def load_yaml(text: str) -> Any:
    """``yaml.safe_load(text)`` within the bounds; :class:`YamlLimitError` beyond them,
    ``yaml.YAMLError`` for text that is not YAML."""
    size = len(text.encode("utf-8", errors="replace"))
    if size > MAX_BYTES:
        raise YamlLimitError(f"{size:,} bytes; a config may hold at most {MAX_BYTES:,}")
    loader = _CountingLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_expansion(node)
        return loader.construct_document(node)
    except RecursionError:
        raise YamlLimitError("nested too deeply") from None
    finally:
        loader.dispose()  # type: ignore[no-untyped-call]


def _check_expansion(root: yaml.Node) -> None:
    """Raise unless the graph under ``root``, every alias expanded, stays within the bounds.
    Each distinct node is sized once (memoised), so the check is linear in the document."""
    sizes: dict[int, tuple[int, int]] = {}  # id(node) → (values, scalar characters)
    open_nodes: set[int] = set()

    def size(node: yaml.Node) -> tuple[int, int]:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_nodes:
            raise YamlLimitError("an alias refers to a node that contains it (recursive YAML)")
        if isinstance(node, yaml.ScalarNode):
            found = (1, len(str(node.value)))
        else:
            open_nodes.add(key)
            children: list[yaml.Node] = (
                [n for pair in node.value for n in pair]
                if isinstance(node, yaml.MappingNode)
                else list(node.value)
            )
            values, chars = 1, 0
            for child in children:
                child_values, child_chars = size(child)
                values, chars = values + child_values, chars + child_chars
                if values > MAX_NODES:
                    raise YamlLimitError(
                        f"its aliases expand to more than {MAX_NODES:,} values; write the "
                        "values out or use fewer nested aliases"
                    )
                if chars > MAX_CHARS:
                    raise YamlLimitError(
                        f"its aliases expand to more than {MAX_CHARS:,} characters of text"
                    )
            open_nodes.discard(key)
            found = (values, chars)
        sizes[key] = found
        return found

    size(root)
