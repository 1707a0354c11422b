"""``scanrag.agents.scope``: an item's context resolves its documents once; page keys round-trip."""

from __future__ import annotations

from types import SimpleNamespace

from scanrag.agents.scope import ItemContext, ReaderParams, Scope
from scanrag.schemas import Status, Trajectory


def _scope(item: ItemContext) -> Scope:
    return Scope(item, Trajectory(sample_id=item.sample.id, strategy="s"), ReaderParams())


def test_item_context_resolves_the_documents(kit: SimpleNamespace) -> None:
    citing = kit.make_document("citing.pdf", num_pages=3)
    cited = kit.make_document("cited.pdf", num_pages=2)
    sample = kit.make_sample(doc_ids=["citing.pdf"], cited_doc_ids=["cited.pdf"])
    item = ItemContext.resolve(sample, kit.make_context(kit.ScriptedModel([]), [citing, cited]))
    assert item.problem is None and item.primary is citing and item.others == (cited,)
    assert item.parse_ctx is not None and item.parse_ctx.primary.id == citing.id


def test_a_missing_document_is_kept_as_the_problem(kit: SimpleNamespace) -> None:
    item = ItemContext.resolve(kit.make_sample(), kit.make_context(kit.ScriptedModel([]), []))
    assert item.primary is None and "report.pdf" in (item.problem or "")
    scope = _scope(item)
    assert scope.prepare() is False
    assert scope.trajectory.status == Status.INPUT_ERROR
    assert scope.trajectory.steps[0].data == {"error": item.problem}


def test_page_keys_round_trip_with_the_file_names_shown(kit: SimpleNamespace) -> None:
    citing = kit.make_document("citing.pdf", num_pages=3)
    cited = kit.make_document("cited.pdf", num_pages=2)
    sample = kit.make_sample(doc_ids=["citing.pdf"], cited_doc_ids=["cited.pdf"])
    scope = _scope(ItemContext.resolve(sample, kit.make_context(None, [citing, cited])))
    refs = scope.refs([2, 1]) + scope.cited_refs()
    keys = scope.keys(refs)
    assert keys == [(citing.id, 2), (citing.id, 1), (cited.id, 1), (cited.id, 2)]
    assert scope.page_refs(keys) == refs
    assert [r.show_doc for r in refs] == [True, True, True, True]
    report = kit.make_document()
    alone = _scope(ItemContext.resolve(kit.make_sample(), kit.make_context(None, [report])))
    assert alone.page_refs([(report.id, 2)]) == alone.refs([2])
    assert alone.refs([2])[0].show_doc is False
