"""Prompt of the MMLongBench-Doc answer extractor: the short answer a free-form response
commits to, in the benchmark's answer formats, for the official scoring rules.

The extractor sees the question and the system's response only (never the gold answer or
its format). It answers with JSON: ``{"answer": ..., "format": ...}``; ``answer`` is
"Not answerable" when the response says the document does not answer the question and
"Fail to answer" when the response only says it could not read or process the document.
"""

from __future__ import annotations

from scanrag.hashing import stable_hash
from scanrag.llm.types import Message

SYSTEM = """You turn a system's free-form response to a question about a document into the \
short final answer it gives, so that the answer can be checked by exact rules. You reply \
with one JSON object and nothing else."""

INSTRUCTIONS = """How to extract:
- Keep only the final answer the response commits to, as short as possible; drop the \
reasoning, the citations and any restatement of the question.
- Pick the form that fits the question: an integer (a count: 12), a float (an amount, a \
ratio or a percentage: 3.5, 21%), a string (a name, a phrase, a date: "Berlin") or a list \
(several items asked for: a JSON array such as ["Jun", "Aug"]).
- Copy values as the response states them; do not correct, complete or round them, and \
do not judge whether they are right.
- If the response says the document does not contain the answer, or that the question \
cannot be answered from it, the answer is "Not answerable".
- If the response only says it could not read, see or process the document or its images, \
the answer is "Fail to answer".

Examples (response -> JSON):
- "Page 4's table shows that 38.5% of respondents agreed." -> \
{"answer": "38.5%", "format": "Float"}
- "Three companies are named: Acme, Borla and Cintra." -> \
{"answer": ["Acme", "Borla", "Cintra"], "format": "List"}
- "The report never mentions the 2019 budget, so this cannot be determined." -> \
{"answer": "Not answerable", "format": "String"}"""

USER_TEMPLATE = """Question: {question}
Response: {response}

Reply with {{"answer": <string | number | array>, "format": "Integer" | "Float" | "String" \
| "List"}}."""

PROMPT_HASH = stable_hash(["mmlongbench.extract.v1", SYSTEM, INSTRUCTIONS, USER_TEMPLATE])


def build_messages(*, question: str, response: str) -> list[Message]:
    text = USER_TEMPLATE.format(question=question, response=response)
    return [
        Message(role="system", content=SYSTEM),
        Message(role="user", content=f"{INSTRUCTIONS}\n\n{text}"),
    ]


# The free-text prompt of the official call shape (``call_shape: official`` without a prompt
# file): the user turn; the question and the response follow as an assistant turn. Our words;
# the reply is read by scanrag.evaluation.mmlongbench.extraction.read_free_text.
FREE_TEXT = """You will see a question about a document and a system's free-form analysis of it, \
written as your own earlier turn. Pull out the short final answer the analysis commits to, \
without reasoning or citations, in one of four forms: Integer, Float, String or List (a list \
written as a Python list such as ['Jun', 'Aug']). Copy values as the analysis states them. \
If the analysis says the documents do not answer the question, the answer is Not answerable; \
if it only says it could not read or process the documents or images, the answer is \
Fail to answer.

Reply with exactly two lines and nothing else:
Extracted answer: <the answer>
Answer format: <Integer | Float | String | List>"""

FREE_TEXT_HASH = stable_hash(["mmlongbench.extract.free_text.v1", FREE_TEXT])
