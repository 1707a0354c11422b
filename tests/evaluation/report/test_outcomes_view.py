"""A run with failures: errors are told apart from wrong answers in the tables, the CSV, the
question list and the viewer, which also shows raw replies, prompts and per-call usage."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from scanrag.evaluation.report.data import load_run
from scanrag.evaluation.report.measures import outcome_counts, outcomes


def _csv(path: Path) -> dict[str, dict[str, str]]:
    return {r["label"]: r for r in csv.DictReader(path.open(encoding="utf-8"))}


def test_outcomes_per_cell(error_run: Path) -> None:
    for group in load_run(error_run).groups:
        by_item = outcomes(group)
        assert by_item["synth-s3-d00-q01"] == "error"  # the provider failed
        assert by_item["synth-s3-d00-q02"] == "error"  # nothing readable in the reply
        assert by_item["synth-s3-d00-q03"] == "unanswered"  # cited, but no answer
        counts = outcome_counts(group, by_item)
        assert counts.error == 2 and counts.unanswered == 1
        assert counts.errors_by_kind == {"model_error": 1, "unparsed": 1}
        assert counts.correct + counts.wrong == 3


def test_the_comparison_shows_errors_beside_every_metric(error_report: Path) -> None:
    table = json.loads((error_report / "comparison.json").read_text())
    for row in table["rows"]:
        assert row["metrics"]["answer.accuracy"]["errors"] == 2
        assert row["metrics"]["answer.accuracy"]["n"] == 6
        assert row["outcomes"]["errors_by_kind"] == {"model_error": 1, "unparsed": 1}
    markdown = (error_report / "comparison.md").read_text()
    assert "(2 err)" in markdown and "(1 model_error, 1 unparsed)" in markdown
    index = (error_report / "index.html").read_text()
    assert index.count('<span class="errs">2 err</span>') >= 3
    assert "1 model_error<br>1 unparsed" in index


def test_the_csv_has_cell_outcome_and_error_columns(error_report: Path) -> None:
    rows = _csv(error_report / "comparison.csv")
    full, topk = rows["full_doc"], rows["topk_rag+bm25"]
    for row in rows.values():
        assert row["dataset"] == "synth" and row["model.reader"] == "scripted/report-reader"
        assert row["judge.default"] == "scripted/report-judge" and row["run"] == "report-errors"
        assert row["n_error"] == "2" and row["n_unanswered"] == "1"
        assert row["errors.model_error"] == "1" and row["errors.unparsed"] == "1"
        assert row["answer.accuracy.errors"] == "2"
    assert full["retriever"] == "none" and full["param.k"] == ""
    assert topk["retriever"] == "bm25" and topk["retriever_type"] == "bm25"
    assert topk["param.k"] == "1" and topk["strategy"] == "topk_rag"
    assert float(topk["retrieval.recall@5"]) >= 0  # retrieval recall beside cited pages
    header = next(csv.reader((error_report / "comparison.csv").open()))
    assert header.index("pages.f1") < header.index("retrieval.recall@5")
    assert header[:4] == ["label", "run", "cell", "run_key"]
    for name in ("model_seconds_per_q", "wait_seconds_per_q", "seconds_per_q"):
        assert name in header


def test_the_question_list_marks_each_kind(error_report: Path) -> None:
    index = (error_report / "index.html").read_text()
    cells = re.findall(r'<td data-cell="full_doc" data-outcome="(\w+)" data-status="(\w+)"', index)
    assert cells[:3] == [("error", "model_error"), ("error", "unparsed"), ("unanswered", "ok")]
    assert 'title="error: model_error — the model call failed after its retries: ' in index
    assert "⚠ model</span>" in index and "⚠ parse</span>" in index
    assert 'class="o o-unanswered"' in index
    assert '<option value="kind:model_error">' in index and 'id="q-search"' in index


def test_viewer_pages_show_the_exchange(error_report: Path) -> None:
    failed = (error_report / "q" / "q0001.html").read_text()
    assert "scripted outage: 503 from the provider" in failed
    assert "failed: ModelError" in failed and "No reply was recorded" in failed
    unread = (error_report / "q" / "q0002.html").read_text()
    assert "Hmm &lt;b&gt;not sure&lt;/b&gt; &amp; I would rather not say." in unread
    assert "<b>Raw model reply</b>" in unread and "<b>Prompt of this reply</b>" in unread
    assert re.search(r"=== Page 1 \(printed: [^)]*\) ===", unread)
    assert "characters of page text; the first few kept" in unread
    assert "Question: In Table 4, what was the orchard area" in unread
    assert re.search(r"#0 reader · scripted/report-reader · \d+ \+ \d+ tokens · \$0\.\d+", unread)
    answered = (error_report / "q" / "q0004.html").read_text()
    assert "raw judge reply" in answered and "&quot;label&quot;: &quot;covered&quot;" in answered


def test_the_summary_times_model_calls(error_run: Path) -> None:
    summary = json.loads((error_run / "summary.json").read_text())
    for cell in summary["cells"].values():
        assert cell["model_seconds_per_item"] is not None
        assert cell["wait_seconds_per_item"] is not None
        assert cell["seconds_per_item"] >= cell["model_seconds_per_item"]
    groups = summary["scoring"]["groups"]
    assert groups["full_doc"]["item_status"] == {"model_error": 1, "ok": 4, "unparsed": 1}


def test_the_prompt_section_names_the_pages_the_prompt_held(error_report: Path) -> None:
    """Under "Prompt of this reply": the pages that prompt really held, gold and predicted
    marked apart; the gold/predicted page images come under their own heading."""
    page = (error_report / "q" / "q0004.html").read_text()
    section = page.split('id="cell-topk_rag+bm25"', 1)[1].split("</section>", 1)[0]
    prompt = section.split("<b>Prompt of this reply</b>", 1)[1].split("<h4>Gold and", 1)[0]
    held = re.search(r'class="prompt-pages">pages in this prompt: (.*?)</span></summary>', prompt)
    assert held is not None
    pages = re.findall(r'<span class="nowrap">(\d+)', held.group(1))
    shown = re.findall(r"<details class=\"page\"><summary>=== Page (\d+)", prompt)
    assert pages == list(dict.fromkeys(shown)) and len(pages) == 1  # k=1: one page read
    assert section.index("Prompt of this reply") < section.index(
        "<h4>Gold and predicted pages</h4>"
    )
    full = page.split('id="cell-full_doc"', 1)[1].split("</section>", 1)[0]
    tags = re.findall(r'class="tag tag-(gold|predicted)"', full.split("</summary>", 2)[1])
    assert "gold" in tags  # full_doc's prompt held the gold page, and says so
