"""The cumulative oracle strategies: gold pages; + region descriptions; + gold facts."""

from __future__ import annotations

from types import SimpleNamespace

from scanrag.graphs.oracle import OracleFactsStrategy, OraclePagesStrategy, OracleRegionsStrategy
from scanrag.schemas import BBox, Fact, Region

REPLY = 'Page 3 says 30 [page=3, doc_page="3", bbox=[0.1, 0.3, 0.9, 0.5]]. <answer>30</answer>'


def _sample(kit: SimpleNamespace):
    return kit.make_sample(
        gold_pages=[3, 5],
        gold_regions=[
            Region(page=3, bbox=BBox(x1=0.1, y1=0.3, x2=0.9, y2=0.5), element_type="table"),
            Region(page=5, bbox=BBox(x1=0, y1=0, x2=0.5, y2=0.2), text="Total: 30"),
        ],
        gold_facts=[Fact(page=3, text="The value on page 3 is 30.")],
    )


async def test_oracle_pages_reads_only_gold_pages(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=6)
    model = kit.ScriptedModel([REPLY])
    trajectory = await OraclePagesStrategy().run(_sample(kit), kit.make_context(model, [doc]))
    assert [s.kind for s in trajectory.steps] == ["prepare", "select", "read"]
    assert trajectory.steps[2].data["pages"] == [3, 5]
    text = model.requests[0].messages[1].text
    assert "Known evidence locations" not in text and "Known facts" not in text
    assert trajectory.pages == [3] and "oracle_regions" not in trajectory.prompt_hashes


async def test_oracle_regions_describes_gold_boxes(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=6)
    doc.pages[2].words = [(0.2, 0.35, 0.3, 0.4, "Revenue"), (0.5, 0.8, 0.6, 0.85, "outside")]
    model = kit.ScriptedModel([REPLY])
    trajectory = await OracleRegionsStrategy().run(_sample(kit), kit.make_context(model, [doc]))
    text = model.requests[0].messages[1].text
    assert (
        '- Region 1: page 3 (printed: 3), table, box [0.100, 0.300, 0.900, 0.500]; text: "Revenue"'
        in text
    )
    assert (
        '- Region 2: page 5 (printed: 5), text, box [0.000, 0.000, 0.500, 0.200]; text: "Total: 30"'
        in text
    )
    assert "Known facts" not in text
    assert [s.kind for s in trajectory.steps] == ["prepare", "select", "inject", "read"]
    assert trajectory.steps[2].data == {"level": "regions", "regions": 2, "facts": 0}
    assert "oracle_regions" in trajectory.prompt_hashes


async def test_oracle_facts_adds_facts_to_regions(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=6)
    model = kit.ScriptedModel([REPLY])
    trajectory = await OracleFactsStrategy().run(_sample(kit), kit.make_context(model, [doc]))
    text = model.requests[0].messages[1].text
    assert "Known evidence locations" in text
    assert "- (page 3) The value on page 3 is 30." in text
    assert text.index("Known facts") < text.index("Question:")
    assert set(trajectory.prompt_hashes) == {"reader", "oracle_regions", "oracle_facts"}


async def test_all_three_use_the_same_reader_prompt(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=6)
    systems = set()
    for cls in (OraclePagesStrategy, OracleRegionsStrategy, OracleFactsStrategy):
        model = kit.ScriptedModel([REPLY])
        await cls().run(_sample(kit), kit.make_context(model, [doc]))
        systems.add(model.requests[0].messages[0].text)
    assert len(systems) == 1


async def test_no_gold_pages_reads_nothing_and_says_so(kit: SimpleNamespace) -> None:
    doc = kit.make_document(num_pages=4)
    model = kit.ScriptedModel(["<answer>Unanswerable</answer>"])
    sample = kit.make_sample(gold_pages=[], gold_regions=[], answerable=False)
    trajectory = await OraclePagesStrategy().run(sample, kit.make_context(model, [doc]))
    assert trajectory.steps[2].data["pages"] == []
    assert trajectory.metadata["oracle_note"] == "no gold pages: the reader sees no page"
    assert trajectory.answer == "Unanswerable"
