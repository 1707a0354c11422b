"""Model calls recorded on the trajectory: prompts with page text reduced to previews, raw
replies, usage, latency, the step each call belongs to, failed calls."""

from __future__ import annotations

from types import SimpleNamespace

from scanrag.agents.calls import PAGE_MARKER, PAGE_PREVIEW_CHARS, TEXT_CAP_CHARS, prompt_parts
from scanrag.agents.common import parse_context
from scanrag.agents.context import ContextOptions, PageRef, page_marker
from scanrag.agents.planning import ReaderSpec
from scanrag.agents.reader import read_pages
from scanrag.llm import ModelError
from scanrag.llm.types import ImagePart, Message, TextPart
from scanrag.schemas import Page, Trajectory
from scanrag.tasks import task_spec

REPLY = 'Page 3 reports 30 [page=3, doc_page="3", bbox=[0.1, 0.3, 0.9, 0.5]]. <answer>30</answer>'


def test_the_marker_pattern_matches_what_the_reader_writes() -> None:
    page = Page(number=12, doc_page="iv", width=1, height=1, text="x")
    for marker in (page_marker(page), page_marker(page, "annual report.pdf")):
        match = PAGE_MARKER.match(marker)
        assert match is not None and match.group(1) == "12", marker
    unlabelled = Page(number=3, doc_page="none", width=1, height=1, text="x")
    assert PAGE_MARKER.match(page_marker(unlabelled))
    fenced = PAGE_MARKER.match("=== Page 4 (printed: 2) === [id 3f9a2c1b7d4e]")  # with an id
    assert fenced is not None and fenced.group(1) == "4"
    assert PAGE_MARKER.match("=== end of page 4 === [id 3f9a2c1b7d4e]") is None


def test_page_text_is_kept_as_a_preview_and_images_as_names() -> None:
    body = "Table 4 orchard area " * 100
    message = Message(
        role="user",
        content=[
            TextPart(text=f"=== Page 7 (printed: 5) ===\n{body}"),
            ImagePart(path="/tmp/cache/doc/p0007.png"),
            TextPart(text="Question: what is the area?"),
        ],
    )
    page, image, question = prompt_parts(message)
    assert page.kind == "page" and page.page == 7 and page.chars == len(body)
    head, preview = page.text.split("\n", 1)
    assert head == "=== Page 7 (printed: 5) ===" and preview.endswith(" […]")
    assert len(preview) <= PAGE_PREVIEW_CHARS + 4
    assert image.kind == "image" and image.text == "p0007.png" and image.page == 7
    assert question.kind == "text" and question.text == "Question: what is the area?"
    long = prompt_parts(Message(role="user", content="y" * (TEXT_CAP_CHARS + 50)))[0]
    assert long.chars == TEXT_CAP_CHARS + 50 and len(long.text) < long.chars


async def test_each_call_is_recorded_with_its_step(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=4)
    model = kit.ScriptedModel([REPLY, REPLY], cost_per_token=0.001)
    ctx = kit.make_context(model, [doc])
    trajectory = Trajectory(sample_id="q1", strategy="test")
    for refs in ([PageRef(doc, 2), PageRef(doc, 3)], [PageRef(doc, 3)]):
        await read_pages(
            ctx,
            trajectory,
            refs,
            question="What value?",
            task=task_spec("qa"),
            spec=ReaderSpec(),
            options=ContextOptions(),
            parse_ctx=parse_context(doc, []),
        )
    first, second = trajectory.calls
    assert [c.index for c in trajectory.calls] == [0, 1]
    assert [c.step for c in trajectory.calls] == [s.index for s in trajectory.steps]
    assert first.stage == "reader" and first.role == "reader" and first.model == "scripted/reader"
    assert first.reply == REPLY and first.reply_chars == len(REPLY) and first.error is None
    assert first.usage.calls == 1 and first.usage.prompt_tokens > 0
    assert first.usage.cost_usd > 0 and first.finish_reason == "stop" and first.seconds >= 0
    assert first.system is not None and "<answer>" in first.system
    assert second.system is None and second.system_of == 0  # stored once
    pages = [p.page for p in first.user if p.kind == "page"]
    assert pages == [2, 3] and first.user[-1].text.rstrip().endswith("Question: What value?")
    stored = trajectory.model_dump_json()
    assert "Page 2 body" in stored  # the preview
    assert trajectory.usage["reader"].calls == 2


async def test_a_failed_call_is_recorded_with_its_error(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=2)
    model = kit.ScriptedModel([ModelError("scripted/reader", "provider down")])
    ctx = kit.make_context(model, [doc])
    trajectory = Trajectory(sample_id="q1", strategy="test")
    await read_pages(
        ctx,
        trajectory,
        [PageRef(doc, 1)],
        question="What value?",
        task=task_spec("qa"),
        spec=ReaderSpec(),
        options=ContextOptions(),
        parse_ctx=parse_context(doc, []),
    )
    (call,) = trajectory.calls
    assert call.reply is None and call.error is not None and "provider down" in call.error
    assert trajectory.steps[call.step or 0].kind == "model_error"
