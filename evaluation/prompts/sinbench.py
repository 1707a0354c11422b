"""Prompts of the SIN-Bench judges: evidence-text matching (0–3) and answer correctness (0–3)."""

from __future__ import annotations

from collections.abc import Sequence

from scanrag.hashing import stable_hash
from scanrag.llm.types import Message

SYSTEM = """You compare a system's statement with reference statements from a scientific paper \
and reply with one JSON object and nothing else."""

MATCH_INSTRUCTIONS = """A system cited the visual anchor {anchor} of a paper and wrote the \
evidence text below for it. The reference evidence for that same anchor is listed after it \
(one or more numbered references). Grade how well the system's text conveys the content of \
EACH reference, on this scale:
3 = same content: every key point of the reference is stated, nothing contradicts it;
2 = mostly the same: the main point agrees, a detail is missing or vague;
1 = related but weak: same topic or figure, but the key point is missing or partly wrong;
0 = unrelated or contradicting.
Judge meaning, not wording. Reply as {{"scores": [g1, g2, ...]}} with one integer per \
reference, in the references' order."""

MATCH_TEMPLATE = """{instructions}

System text:
{text}

References:
{references}"""

ANSWER_INSTRUCTIONS = """Grade the system answer to the question against the reference answer, \
on this scale:
3 = correct and complete: the same conclusion with the key facts;
2 = largely correct: the conclusion agrees, a secondary fact is missing or imprecise;
1 = partly correct: some overlap, but the main conclusion is missing, hedged or partly wrong;
0 = wrong, unrelated or empty.
Judge meaning, not wording; extra claims that contradict the reference lower the grade. Reply \
as {"grade": g} with g an integer from 0 to 3."""

ANSWER_TEMPLATE = """{instructions}

Question:
{question}

Reference answer:
{reference}

System answer:
{answer}"""

MATCH_PROMPT_HASH = stable_hash(["sinbench.match.v1", SYSTEM, MATCH_INSTRUCTIONS, MATCH_TEMPLATE])
ANSWER_PROMPT_HASH = stable_hash(
    ["sinbench.answer.v1", SYSTEM, ANSWER_INSTRUCTIONS, ANSWER_TEMPLATE]
)


def match_messages(anchor: str, text: str, references: Sequence[str]) -> list[Message]:
    """Messages grading one predicted evidence text against the gold texts of its anchor."""
    numbered = "\n".join(f"[{k}] {ref.strip()}" for k, ref in enumerate(references, start=1))
    user = MATCH_TEMPLATE.format(
        instructions=MATCH_INSTRUCTIONS.format(anchor=anchor),
        text=text.strip() or "(empty)",
        references=numbered,
    )
    return [Message(role="system", content=SYSTEM), Message(role="user", content=user)]


def answer_messages(question: str, reference: str, answer: str) -> list[Message]:
    """Messages grading a chain-QA answer."""
    user = ANSWER_TEMPLATE.format(
        instructions=ANSWER_INSTRUCTIONS,
        question=question.strip(),
        reference=reference.strip(),
        answer=answer.strip() or "(empty)",
    )
    return [Message(role="system", content=SYSTEM), Message(role="user", content=user)]
