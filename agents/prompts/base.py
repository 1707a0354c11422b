"""A prompt template: a fixed system part and a user part with ``$name`` placeholders.

``string.Template`` placeholders keep JSON braces in templates literal; the system part is
used verbatim (it may hold a JSON schema with ``$ref``). The hash covers both parts and the
name, so any wording change shows up in ``trajectory.prompt_hashes``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from string import Template
from typing import Any

from scanrag.hashing import stable_hash


class PromptError(KeyError):
    """A template was rendered without one of its placeholders."""


@dataclass(frozen=True)
class Prompt:
    name: str
    system: str
    user: str = "$body"

    @cached_property
    def hash(self) -> str:
        """The hash of the name and both parts (computed once per prompt)."""
        return stable_hash({"name": self.name, "system": self.system, "user": self.user})

    def render_user(self, **values: Any) -> str:
        """The user part with every placeholder filled (:class:`PromptError` names a missing
        one)."""
        try:
            return Template(self.user).substitute({k: str(v) for k, v in values.items()})
        except KeyError as exc:
            raise PromptError(f"prompt {self.name!r} needs a value for {exc.args[0]!r}") from None


def module_hash(*prompts: Prompt) -> str:
    """One hash for every template a module defines."""
    return stable_hash(sorted(p.hash for p in prompts))
