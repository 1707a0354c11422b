"""How a reply ended: answer-first bounded schemas, bare-text answers, the truncated status and
the parse status, from the parser up to a strategy, the scorers and --retry-errors."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from scanrag.agents.evidence import ParseContext
from scanrag.agents.reader import parse_reply
from scanrag.agents.reply import TRUNCATED_MESSAGE, apply_output
from scanrag.agents.structured import MAX_ITEMS, parse_structured, schema_for
from scanrag.evaluation.docscope.answer import AnswerRulesScorer
from scanrag.llm import ScriptedModel
from scanrag.llm.types import ChatRequest, ChatResponse
from scanrag.registry import STRATEGIES
from scanrag.runner.engine import RETRYABLE
from scanrag.schemas import ParseStatus, Sample, Status, Trajectory
from scanrag.tasks import task_names, task_spec

COUNTING = '{"pages": [' + ", ".join(str(i) for i in range(1, 40))


def _settled(text: str, output: str = "json", finish: str | None = "stop") -> Trajectory:
    parsed = parse_reply(text, output, ParseContext.with_pages(50), finish)
    return apply_output(Trajectory(sample_id="s", strategy="t"), parsed, text)


def _arrays(node: Any) -> list[dict[str, Any]]:
    """Every array schema inside ``node``."""
    found = []
    if isinstance(node, dict):
        if node.get("type") == "array":
            found.append(node)
        for value in node.values():
            found += _arrays(value)
    elif isinstance(node, list):
        for value in node:
            found += _arrays(value)
    return found


@pytest.mark.parametrize("task", task_names())
def test_the_answer_comes_before_every_list_and_every_list_is_bounded(task: str) -> None:
    schema = schema_for(task_spec(task))
    first = schema["required"][0]
    assert first in ("answer", "verdict") and next(iter(schema["properties"])) == first
    assert schema["properties"][first]["type"] in ("string", "boolean")  # never null
    arrays = _arrays(schema)
    assert arrays and all(isinstance(a.get("maxItems"), int) for a in arrays)


def test_the_bound_is_what_a_schema_validator_enforces() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = schema_for(task_spec("qa"))
    reply = {"answer": "x", "pages": list(range(1, MAX_ITEMS["pages"] + 1)), "facts": []}
    jsonschema.validate(reply, schema)
    reply["pages"].append(99)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(reply, schema)


def test_a_long_list_from_an_unconstrained_model_is_still_read() -> None:
    parsed = parse_structured(json.dumps({"answer": "a", "pages": list(range(1, 16))}))
    assert parsed.pages == list(range(1, 16))


def test_prose_on_the_json_path_is_a_bare_text_answer() -> None:
    trajectory = _settled("The revenue was   4 million dollars.")
    assert trajectory.answer == "The revenue was 4 million dollars."
    assert trajectory.status == Status.OK and trajectory.parse == ParseStatus.BARE_TEXT
    assert trajectory.metadata["parse_notes"]["answer_source"] == "bare_text"
    assert trajectory.metadata["parser"] == "json->citations"


@pytest.mark.parametrize(
    ("text", "parse"),
    [
        ('{"answer": "4", "pages": [2], "facts": []}', ParseStatus.CLEAN),
        ('{"answer": "4", "pages": [2,],}', ParseStatus.REPAIRED),
        ('{"answer": "4", "pages": [2', ParseStatus.REPAIRED),
        ("It grew [page=2]. <answer>4</answer>", ParseStatus.FALLBACK),
        ("Answer: 4", ParseStatus.FALLBACK),
        ("4", ParseStatus.BARE_TEXT),
        ("{not json", ParseStatus.NONE),
    ],
)
def test_parse_status_tells_how_the_reply_was_read(text: str, parse: ParseStatus) -> None:
    trajectory = _settled(text)
    assert trajectory.parse == parse
    assert trajectory.status == (Status.UNPARSED if parse == ParseStatus.NONE else Status.OK)


def test_citation_path_parse_status() -> None:
    assert _settled("x [page=2]. <answer>4</answer>", "citations").parse == ParseStatus.CLEAN
    assert _settled("4", "citations").parse == ParseStatus.BARE_TEXT


@pytest.mark.parametrize(
    "text",
    [
        COUNTING,  # the small model counting pages until max_tokens
        '{"answer": "',  # cut before the answer's first word: an empty answer
        "The document discusses several things, among them the revenue of",  # prose, cut
        "It grew [page=2] and then",  # citations without an answer, cut
    ],
)
def test_a_reply_cut_before_any_answer_is_truncated(text: str) -> None:
    for output in ("json", "citations"):
        trajectory = _settled(text, output, finish="length")
        assert trajectory.status == Status.TRUNCATED and trajectory.answer is None
        assert trajectory.errors == [TRUNCATED_MESSAGE]
        assert trajectory.metadata["parse_notes"]["finish_reason"] == "length"
        assert trajectory.raw_output == text


def test_a_cut_reply_that_gave_its_answer_stays_ok() -> None:
    trajectory = _settled('{"answer": "4", "pages": [1, 2, 3, 4, 5', finish="length")
    assert trajectory.status == Status.OK and trajectory.answer == "4"
    assert trajectory.parse == ParseStatus.REPAIRED and trajectory.pages == [1, 2, 3, 4, 5]


def test_the_same_replies_that_stopped_by_themselves_are_not_truncated() -> None:
    assert _settled(COUNTING).status == Status.OK  # pages only: usable, no answer
    assert _settled("The document discusses the revenue").parse == ParseStatus.BARE_TEXT


class CutModel:
    """A scripted model whose every reply stopped at the token limit."""

    def __init__(self, *replies: str) -> None:
        self.inner = ScriptedModel(list(replies))

    async def chat(self, request: ChatRequest) -> ChatResponse:
        response = await self.inner.chat(request)
        return response.model_copy(update={"finish_reason": "length"})


async def test_a_strategy_marks_the_item_truncated_and_scorers_count_it_unanswered(
    kit: SimpleNamespace, tmp_path: Path
) -> None:
    doc = kit.make_document(num_pages=4)
    ctx = kit.make_context(CutModel(COUNTING), [doc], checkpoint_dir=tmp_path)
    sample = kit.make_sample(answer="30")
    trajectory = await STRATEGIES.create("full_doc", output="json").run(sample, ctx)
    assert trajectory.status == Status.TRUNCATED and trajectory.answer is None
    assert trajectory.steps[-1].data["finish_reason"] == "length"
    row = AnswerRulesScorer().compute(trajectory, sample)
    assert row.metrics["correct"] == 0.0
    assert row.item_status == "truncated"


def test_truncated_items_are_not_retried_by_default() -> None:
    # A replay of the same prompt gives the same cut reply; raise max_tokens instead.
    assert Status.TRUNCATED not in RETRYABLE and Status.UNPARSED not in RETRYABLE


# --------------------------------------------------------------------------- ambiguous replies

BOTH_PATHS = ("json", "citations")
# text, the answers it states, the output paths that read them all (the citation grammar
# does not read JSON objects)
AMBIGUOUS_REPLIES = [
    ("The total is <answer>3</answer>. Rechecking: <answer>9</answer>", ["3", "9"], BOTH_PATHS),
    ('{"answer": "<answer>3</answer> or <answer>9</answer>"}', ["3", "9"], BOTH_PATHS),
    ('{"answer": "3"}\n<answer>9</answer>', ["3", "9"], ("json",)),
    ('{"answer": "3"}\n{"answer": "9"}', ["3", "9"], ("json",)),
]


@pytest.mark.parametrize(
    ("text", "answers", "output"),
    [(text, answers, output) for text, answers, paths in AMBIGUOUS_REPLIES for output in paths],
)
def test_a_reply_with_two_different_answers_is_ambiguous_on_both_paths(
    text: str, answers: list[str], output: str
) -> None:
    """Issue 20: the citation path kept the last tag, the JSON path the first, both ``ok``."""
    trajectory = _settled(text, output)
    assert trajectory.parse == ParseStatus.AMBIGUOUS
    assert trajectory.status == Status.UNPARSED and trajectory.answer is None
    assert trajectory.metadata["parse_notes"]["ambiguous_answers"] == answers
    assert trajectory.errors == [
        f"the reply gives 2 different answers ({', '.join(repr(a) for a in answers)}); "
        "none is taken"
    ]
    assert trajectory.raw_output == text


@pytest.mark.parametrize("output", ["json", "citations"])
def test_one_answer_said_twice_is_not_ambiguous(output: str) -> None:
    trajectory = _settled("<answer>Paris</answer> So: <answer>paris.</answer>", output)
    assert trajectory.status == Status.OK and trajectory.answer == "Paris"
    assert trajectory.parse in (ParseStatus.CLEAN, ParseStatus.FALLBACK)
    unwrapped = _settled('{"answer": "<answer>Paris</answer>"}', "json")
    assert unwrapped.answer == "Paris" and unwrapped.parse == ParseStatus.CLEAN


@pytest.mark.parametrize(
    "reply",
    [
        '{ "answer": "2.20 EUR }\n\nThe dividend per share is shown in the table of page 4 and',
        '{ "answer": "2.20 EUR }\nThe "dividend" line {of page 4} reads',
        '{\n  "answer": "2.20 EUR",\n  "pages": [4],\n  "facts": [{"page": 4, "text": "EUR 2',
    ],
)
def test_a_cut_json_reply_with_a_complete_answer_is_scored_and_flagged(reply: str) -> None:
    """The answer field is complete and the token limit cut what followed it: the answer is
    kept (without the ``}`` the model meant to close it with), the item stays ``ok`` and is
    flagged ``truncated`` with a warning, never the error "before giving an answer"."""
    trajectory = _settled(reply, finish="length")
    assert trajectory.status == Status.OK and trajectory.answer == "2.20 EUR"
    assert trajectory.parse == ParseStatus.REPAIRED and TRUNCATED_MESSAGE not in trajectory.errors
    assert trajectory.metadata["truncated"] is True
    assert any("after giving its answer" in w for w in trajectory.metadata["warnings"])
    sample = Sample(id="s", doc_ids=["d.pdf"], question="Dividend?", answer="2.20 EUR")
    row = AnswerRulesScorer().compute(trajectory, sample)
    assert row.metrics["correct"] == 1.0 and row.item_status == "ok"


def test_a_reply_that_stopped_by_itself_is_not_flagged() -> None:
    trajectory = _settled('{"answer": "2.20 EUR", "pages": [4]}')
    assert trajectory.status == Status.OK and "truncated" not in trajectory.metadata
    assert "warnings" not in trajectory.metadata
