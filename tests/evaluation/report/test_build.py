"""The static report: files, the viewer's content, escaping, secrets, offline references."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from PIL import Image

from scanrag.evaluation.report import ReportOptions, build_report
from scanrag.evaluation.report.viewer import item_warnings, judge_reasons
from scanrag.schemas import Trajectory

SECRET = "hunter2-very-secret-value"
PLOTS = ("cost_latency", "breakdowns", "layout", "funnel", "recall_at_k", "oracle_ablation")


class _Refs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []
        self.scripts = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.scripts += 1
        for name, value in attrs:
            if name in ("src", "href") and value:
                self.refs.append(value)


def _refs(path: Path) -> _Refs:
    parser = _Refs()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def test_report_files_and_offline_references(report_dir: Path) -> None:
    for name in ("index.html", "comparison.md", "comparison.csv", "comparison.json"):
        assert (report_dir / name).is_file()
    assert (report_dir / "items_long.csv").is_file()
    for name in PLOTS:
        assert (report_dir / "plots" / f"{name}.png").is_file()
    pages = sorted((report_dir / "q").glob("q*.html"))
    assert len(pages) == 6
    for html_file in [report_dir / "index.html", *pages]:
        found = _refs(html_file)
        assert found.scripts == (1 if html_file.name == "index.html" else 0)  # inline only
        for ref in found.refs:
            assert "://" not in ref and not ref.startswith("/"), ref
            if ref.startswith("#"):  # an anchor in the same page
                assert f'id="{ref[1:]}"' in html_file.read_text(encoding="utf-8"), ref
                continue
            assert (html_file.parent / ref).resolve().is_file(), ref
    index = (report_dir / "index.html").read_text(encoding="utf-8")
    assert '<table id="comparison">' in index and '<table id="questions">' in index
    assert "6 of 6 questions have a viewer page" in index
    baseline = json.loads((report_dir / "comparison.json").read_text())["baseline"]
    assert baseline == "topk_rag+bm25"  # the config's first cell, not the alphabetical first


def test_viewer_pages_show_overlays_verdicts_and_reasons(report_dir: Path) -> None:
    first = (report_dir / "q" / "q0001.html").read_text(encoding="utf-8")
    assert first.count('<section class="group"') == 3
    assert "GOLD[1] covered: the red box sits on the row" in first
    assert "[Attributable]" in first and "<h4>Steps and model calls</h4>" in first
    assert 'class="ok">valid</span>' in first  # the parsed citation
    overlay = re.search(r'src="\.\./(img/q0001_oracle_pages_p\d+\.png)"', first)
    assert overlay is not None
    with Image.open(report_dir / overlay.group(1)) as image:
        pixels = list(image.convert("RGB").getdata())
    assert sum(1 for p in pixels if p == (0, 170, 0)) > 100  # gold outline
    assert sum(1 for p in pixels if p == (230, 0, 0)) > 50  # predicted outline


def test_text_is_escaped_and_secrets_never_reach_the_report(
    run_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    lines = (run_copy / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[-1])
    row["answer"] = f"<script>alert('x')</script> key {SECRET} and sk-abcdefghijklmnop0123456789"
    row["steps"].append({"index": 99, "kind": "note", "data": {"token": SECRET}})
    with open(run_copy / "trajectories.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps(row) + "\n")
    options = ReportOptions(n_resamples=50, max_pages=1)
    out = build_report([run_copy], tmp_path / "rep", options=options)
    texts = [
        p.read_text(encoding="utf-8")
        for p in out.parent.rglob("*")
        if p.suffix in {".html", ".md", ".csv", ".json"}
    ]
    joined = "\n".join(texts)
    assert SECRET not in joined and "sk-abcdefghijklmnop" not in joined
    assert "<script>alert" not in joined
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in joined


def test_question_limit_and_stale_files(finished_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "rep"
    build_report([finished_run], out, options=ReportOptions(n_resamples=0, max_pages=1))
    assert len(list((out / "q").glob("*.html"))) == 6
    fewer = ReportOptions(n_resamples=0, max_questions=2, max_pages=1)
    build_report([finished_run], out, options=fewer)
    assert sorted(p.name for p in (out / "q").glob("*.html")) == ["q0001.html", "q0002.html"]
    assert "2 of 6 questions have a viewer page" in (out / "index.html").read_text()
    foreign = tmp_path / "mine"
    (foreign / "img").mkdir(parents=True)
    (foreign / "img" / "keep.txt").write_text("not ours")
    one = ReportOptions(n_resamples=0, max_questions=1, max_pages=0)
    build_report([finished_run], foreign, options=one)
    assert (foreign / "img" / "keep.txt").is_file()  # no marker from an earlier report


def test_judge_reasons_are_found_in_nested_replies() -> None:
    parsed = {
        "items": [
            {"id": "GOLD[1]", "label": "covered", "reason": "on the row"},
            {"id": "GOLD[2]", "label": "not_covered", "reason": ""},
        ]
    }
    assert judge_reasons(parsed) == ["GOLD[1] covered: on the row"]
    assert judge_reasons({"consistent": False, "reason": "wrong year"}) == [
        "consistent=False: wrong year"
    ]
    assert judge_reasons("plain text") == []


def test_item_warnings_reach_the_question_pages_escaped(run_copy: Path, tmp_path: Path) -> None:
    path = run_copy / "trajectories.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        row.setdefault("metadata", {})["warnings"] = ["doc <b>1</b>.pdf: repaired by MuPDF"]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    options = ReportOptions(n_resamples=100, max_questions=1, max_pages=1)
    out = tmp_path / "rep"
    build_report([run_copy], out, options=options)
    pages = [p.read_text(encoding="utf-8") for p in out.rglob("*.html") if p.parent != out]
    shown = [p for p in pages if "<th>warnings</th>" in p]
    assert shown and all("doc &lt;b&gt;1&lt;/b&gt;.pdf: repaired by MuPDF" in p for p in shown)
    assert (
        item_warnings(Trajectory.model_validate(rows[0]).model_copy(update={"metadata": {}})) == ""
    )


def test_a_run_without_scores_still_reports(run_copy: Path, tmp_path: Path) -> None:
    (run_copy / "scores.jsonl").unlink()
    summary = json.loads((run_copy / "summary.json").read_text())
    summary.pop("scoring", None)
    (run_copy / "summary.json").write_text(json.dumps(summary))
    options = ReportOptions(n_resamples=100, max_questions=1, max_pages=1)
    index = build_report([run_copy], tmp_path / "rep", options=options)
    text = index.read_text(encoding="utf-8")
    assert '<table id="comparison">' in text and "topk_rag+bm25" in text
    assert "Stage funnel: not drawn" in text
    assert "Oracle ablation: not drawn (oracle_pages ran, but no cell has an accuracy" in text
    assert (tmp_path / "rep" / "plots" / "recall_at_k.png").is_file()  # from the steps alone
    assert (
        "| grid cell | outcomes | items | $/q |" in (tmp_path / "rep" / "comparison.md").read_text()
    )
