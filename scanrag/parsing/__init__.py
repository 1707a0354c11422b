"""What comes out of a model call, read one way for every caller (agents and judges alike).

One module per concern:

* :mod:`scanrag.parsing.jsonscan` — JSON inside a reply: fenced blocks, bracket spans (string
  literals respected), every decodable value (judges), the first object with the repair of a
  reply cut by the token limit (readers);
* :mod:`scanrag.parsing.verdicts` — yes/no words, one vocabulary;
* :mod:`scanrag.parsing.text` — coercion of a JSON value to text.

What goes *into* a model call as untrusted data (page text, another model's answer) is fenced by
:mod:`scanrag.untrusted`.
"""

from scanrag.parsing.jsonscan import (
    bracket_end,
    close_truncated,
    fenced_blocks,
    first_object,
    json_values,
)
from scanrag.parsing.text import as_text
from scanrag.parsing.verdicts import NO_WORDS, YES_WORDS, parse_verdict

__all__ = [
    "NO_WORDS",
    "YES_WORDS",
    "as_text",
    "bracket_end",
    "close_truncated",
    "fenced_blocks",
    "first_object",
    "json_values",
    "parse_verdict",
]
