"""Judge prompts supplied by the user (``--judge-prompt ROLE=FILE``, ``scoring.judge_prompts``).

A prompt file replaces the built-in prompt of one judge role and is used verbatim: the
whole file becomes the single user message of the call (the region judge's page image goes
first), after its ``{field}`` placeholders are filled Python ``str.format`` style (``{{`` and
``}}`` stand for literal braces). This is the format of the prompt files shipped with
DocScope's evaluation code, so a user who holds them can run our judges with them. Our own
prompts stay the default.

The fields each role fills (the names DocScope's files use):

* ``answer``: ``question``, ``gold_answer``, ``model_answer``;
* ``fact``: ``question``, ``gt_page``, ``gold_facts_block`` (one ``id=<fid> :: <fact>`` line
  per gold fact of the page), ``sibling_facts`` (the item's facts of other pages joined by
  ``"; "``, or ``(none)``), ``model_raw`` (under the official profile the whole reply; under
  the paper profile the evidence units cited for the page, one per line, since that profile
  lets the judge see nothing else);
* ``region``: ``question``, ``gold_answer``, ``gt_page``, ``gold_total_on_page``,
  ``gold_facts_block`` (one ``id=g<i> :: index_on_page=<i>, element_type=<type>,
  gold_bbox_px=[...]`` line per gold box, pixels of a 144-DPI render), ``n_pred``,
  ``pred_bboxes_norm`` (the predicted boxes as a list of ``[x1, y1, x2, y2]``).

* ``extractor`` (MMLongBench-Doc's answer extraction with ``call_shape: official``): no field;
  the file is sent as it is, braces included, as the user turn, and the question and the
  response follow as an assistant turn (as ``eval/extract_answer.py`` sends its prompt file).

A template naming any other field is refused when it is loaded, with the known fields listed;
so is a file over ``MAX_PROMPT_BYTES`` (256 KiB), before it is read.
The reply must have the shape the role expects (``{"consistent": ..., "reason": ...}`` for
answers, ``{"items": [{"id": ..., "label": ..., "reason": ...}]}`` for boxes and facts).
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scanrag.hashing import stable_hash
from scanrag.llm.types import ImagePart, Message, TextPart

ROLE_FIELDS: dict[str, tuple[str, ...]] = {
    "answer": ("question", "gold_answer", "model_answer"),
    "fact": ("question", "gt_page", "gold_facts_block", "sibling_facts", "model_raw"),
    "region": (
        "question",
        "gold_answer",
        "gt_page",
        "gold_total_on_page",
        "gold_facts_block",
        "n_pred",
        "pred_bboxes_norm",
    ),
}


LITERAL_ROLES = frozenset({"extractor"})  # prompt files used as they are, never formatted
BRACES_HINT = " (write literal braces as {{ and }})"
# A prompt file is sent with every judge call: DocScope's are a few KB. A larger file is a
# wrong path (a PDF, a dataset), refused before it is read.
MAX_PROMPT_BYTES = 256 * 1024


class PromptFileError(ValueError):
    """A prompt file cannot be used (unknown role, unreadable file, unknown field)."""


def template_fields(template: str) -> set[str]:
    """The placeholder names of a ``str.format`` template; ``ValueError`` on bad syntax."""
    names: set[str] = set()
    for _, name, _, _ in string.Formatter().parse(template):
        if name is not None:
            names.add(name.split(".")[0].split("[")[0])
    return names


def check_template(role: str, template: str) -> None:
    """Raise :class:`PromptFileError` unless ``template`` fits ``role``."""
    if role in LITERAL_ROLES:
        return
    if role not in ROLE_FIELDS:
        known = ", ".join(sorted({*ROLE_FIELDS, *LITERAL_ROLES}))
        raise PromptFileError(f"no prompt file can replace role {role!r}; known roles: {known}")
    try:
        names = template_fields(template)
    except ValueError as exc:
        raise PromptFileError(
            f"prompt for {role!r} is not a format template ({exc}){BRACES_HINT}"
        ) from exc
    unknown = sorted(names - set(ROLE_FIELDS[role]))
    if "" in names or unknown:
        shown = ", ".join(unknown) or "{}"
        hint = "" if all(n.isidentifier() for n in unknown) and unknown else BRACES_HINT
        raise PromptFileError(
            f"prompt for {role!r} uses unknown fields {shown}; "
            f"known fields: {', '.join(ROLE_FIELDS[role])}{hint}"
        )


def read_prompt_files(
    items: Sequence[str] | Mapping[str, str | Path], base: Path | None = None
) -> dict[str, str]:
    """Role → template text from ``ROLE=FILE`` strings or a ``{role: path}`` mapping
    (relative paths against ``base``); every template is checked."""
    pairs: list[tuple[str, str]] = []
    if isinstance(items, Mapping):
        pairs = [(str(k), str(v)) for k, v in items.items()]
    else:
        for item in items:
            role, sep, name = item.partition("=")
            if not sep or not role.strip() or not name.strip():
                raise PromptFileError(f"expected ROLE=FILE, got {item!r}")
            pairs.append((role.strip(), name.strip()))
    out: dict[str, str] = {}
    for role, name in pairs:
        path = Path(name).expanduser()
        if base is not None and not path.is_absolute():
            path = base / path
        try:
            size = path.stat().st_size
            if size > MAX_PROMPT_BYTES:
                raise PromptFileError(
                    f"the prompt file for {role!r} ({path}) holds {size:,} bytes; a prompt file "
                    f"may hold at most {MAX_PROMPT_BYTES:,}"
                )
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise PromptFileError(f"cannot read the prompt file for {role!r}: {exc}") from exc
        check_template(role, text)
        out[role] = text
    return out


def template_hash(template: str) -> str:
    return stable_hash(["user-prompt", template])


def custom_template(judge: Any, role: str) -> str | None:
    """The user's template for ``role`` in a judge context, if any."""
    config = getattr(judge, "config", None)
    prompts = getattr(config, "prompts", None) or {}
    value = prompts.get(role)
    return value if isinstance(value, str) else None


def custom_messages(
    template: str, fields: Mapping[str, Any], image: Path | None = None
) -> list[Message]:
    """The one user message of a custom prompt (image first when given)."""
    text = template.format_map(dict(fields))
    if image is None:
        return [Message(role="user", content=text)]
    return [Message(role="user", content=[ImagePart.of(image), TextPart(text=text)])]
