"""``scanrag retrieve eval`` on a tiny generated dataset: the retriever tests' three PDFs
(``pdf_dir`` from ``tests/retrievers/conftest.py``)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from scanrag.cli import main
from scanrag.evaluation.cli.retrieve import parse_ks, parse_settings
from scanrag.registry import RETRIEVERS

_spec = importlib.util.spec_from_file_location(
    "_retriever_test_corpus", Path(__file__).parents[2] / "retrievers" / "conftest.py"
)
assert _spec is not None and _spec.loader is not None
_corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_corpus)
pdf_dir = _corpus.pdf_dir


@pytest.fixture
def dataset(tmp_path, pdf_dir):
    rows = [
        {"id": "1", "doc": "energy.pdf", "question": "How do green plants turn sunlight into "
         "energy?", "answer": "photosynthesis", "evidence_pages": [1], "doc_type": "x"},
        {"id": "2", "doc": "finance.pdf", "question": "By how much did revenue grow in Europe?",
         "answer": "12%", "evidence_pages": [1]},
        {"id": "3", "doc": "space.pdf", "question": "What did the telescope observe?",
         "answer": "a galaxy cluster", "evidence_pages": [2]},
        {"id": "4", "doc": "space.pdf", "question": "Who won the 1998 World Cup?",
         "answer": "Not answerable", "evidence_pages": []},
    ]  # fmt: skip
    path = tmp_path / "questions.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["retrieve", "eval", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_json_output_shape(capsys, dataset, pdf_dir, tmp_path):
    args = ["--dataset", str(dataset), "--pdf-dir", str(pdf_dir), "--k", "1,3", "--json",
            "--retrievers", "bm25,oracle,example_tfidf,hybrid",
            "--set", 'hybrid.retrievers=["bm25","example_tfidf"]', "--set", "bm25.k1=1.2",
            "--cache-dir", str(tmp_path / "cache")]  # fmt: skip
    code, out, _ = _run(capsys, *args)
    assert code == 0
    data = json.loads(out)
    assert data["ks"] == [1, 3]
    assert (data["n_questions"], data["n_scored"], data["n_without_gold"]) == (4, 3, 1)
    assert data["n_skipped"] == 0
    assert list(data["retrievers"]) == ["bm25", "oracle", "example_tfidf", "hybrid"]
    for run in data["retrievers"].values():
        assert set(run["macro"]) == {
            f"{m}@{k}" for m in ("recall", "precision", "hit", "mrr", "ndcg") for k in (1, 3)
        }
        assert set(run["micro"]) == {"recall@1", "precision@1", "recall@3", "precision@3"}
        assert run["build_s"] >= 0 and run["latency_p95_ms"] >= run["latency_p50_ms"] >= 0
        assert run["n_queries"] == 4 and run["pages"] == 9
    assert data["retrievers"]["oracle"]["macro"]["recall@1"] == 1.0
    assert data["retrievers"]["bm25"]["params"] == {"k1": 1.2}
    assert data["retrievers"]["bm25"]["index_cached"] is False
    code, out, _ = _run(capsys, *args)
    assert json.loads(out)["retrievers"]["bm25"]["index_cached"] is True


def test_table_output(capsys, dataset, pdf_dir):
    code, out, _ = _run(
        capsys, "--dataset", str(dataset), "--pdf-dir", str(pdf_dir), "--retrievers", "bm25",
        "--k", "1,3",
    )  # fmt: skip
    assert code == 0
    assert "bm25" in out and "R@1/3" in out and "nDCG@1/3" in out and "p95 ms" in out


def test_missing_pdf_skips_its_questions(capsys, dataset, pdf_dir, tmp_path):
    rows = dataset.read_text()
    (tmp_path / "pdfs").mkdir()
    for name in ("energy.pdf", "finance.pdf"):
        (tmp_path / "pdfs" / name).write_bytes((pdf_dir / name).read_bytes())
    (tmp_path / "q.jsonl").write_text(rows)
    base = ["--dataset", str(tmp_path / "q.jsonl"), "--pdf-dir", str(tmp_path / "pdfs"),
            "--retrievers", "bm25"]  # fmt: skip
    code, out, err = _run(capsys, *base, "--json")
    assert code == 0
    data = json.loads(out)
    assert data["n_scored"] == 2 and data["dropped_rows"] == 2
    assert "warning: 2 of the 4 rows were dropped and are not scored" in err
    assert "missing PDF 'space.pdf'" in err
    code, out, _ = _run(capsys, *base)
    assert code == 0 and "2 rows dropped" in out


def test_every_row_dropped_is_an_error_before_any_index_is_built(capsys, dataset, tmp_path):
    # a --pdf-dir without the dataset's PDFs (an empty folder, or one still being filled)
    # used to print an all-zero table after loading every model, and exit 0
    (tmp_path / "empty").mkdir()
    code, out, err = _run(
        capsys, "--dataset", str(dataset), "--pdf-dir", str(tmp_path / "empty"),
        "--retrievers", "bm25,hybrid",
    )  # fmt: skip
    assert code == 2 and out == ""
    assert "the loader dropped every one of the 4 rows" in err
    assert "missing PDF 'energy.pdf'" in err and "and 1 more" in err and "--pdf-dir" in err
    assert "index bm25" not in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--k", "1,x"], "comma-separated integers"),
        (["--k", "0"], "positive"),
        (["--retrievers", "bm25,nope"], "known retrievers"),
        (["--retrievers", "bge", "--set", "bge.type=nope"], "known retrievers"),
        (["--set", "bm25k1=2"], "NAME.KEY=VALUE"),
    ],
)
def test_bad_arguments(capsys, dataset, args, message):
    code, _, err = _run(capsys, "--dataset", str(dataset), *args)
    assert code == 2 and message in err


class _Breaks:
    """A retriever with valid parameters whose index build fails at run time."""

    name = "breaks"

    def add(self, documents):
        raise ValueError("index build failed")

    def search(self, query, k, doc_ids=None):
        return []

    def search_batch(self, queries, k, doc_ids=None):
        return [[] for _ in queries]

    def manifest(self):
        return {"name": self.name}


def test_a_broken_retriever_is_reported_and_the_others_still_run(capsys, dataset, pdf_dir):
    RETRIEVERS.register("breaks", replace=True)(_Breaks)
    try:
        base = ["--dataset", str(dataset), "--pdf-dir", str(pdf_dir), "--json"]
        code, out, err = _run(capsys, *base, "--retrievers", "breaks,oracle")
        assert code == 1
        assert list(json.loads(out)["retrievers"]) == ["oracle"]
        assert "error: retriever 'breaks' failed: ValueError" in err and "Traceback" not in err
        code, out, err = _run(capsys, *base, "--retrievers", "breaks")
        assert code == 2 and json.loads(out)["failed"]["breaks"] == "ValueError: index build failed"
    finally:
        RETRIEVERS.unregister("breaks")


def test_retriever_parameters_are_refused_before_any_ingestion(capsys, dataset, tmp_path):
    """Every problem is named at once, components of a composite included, and nothing is
    ingested (the PDF folder does not even exist)."""
    code, out, err = _run(
        capsys, "--dataset", str(dataset), "--pdf-dir", str(tmp_path / "absent"),
        "--retrievers", "bm25,hybrid", "--set", "bm25.k1=-1", "--set", "bm25.x=1",
        "--set", "hybrid.fusion=bogus",
    )  # fmt: skip
    assert code == 2 and out == ""
    assert "unexpected keyword argument 'x'" in err and "must be > 0, got -1" in err
    assert "retrievers.hybrid.params.fusion" in err and "Traceback" not in err


def test_missing_dataset(capsys, tmp_path):
    code, _, err = _run(capsys, "--dataset", str(tmp_path / "none.jsonl"))
    assert code == 2 and "error" in err


def test_parsers():
    assert parse_ks("10, 1,5,1") == [1, 5, 10]
    assert parse_settings(["dense.model=x/y", "hybrid.weights=[1, 2]", "bm25.k1=1.5"]) == {
        "dense": {"model": "x/y"},
        "hybrid": {"weights": [1, 2]},
        "bm25": {"k1": 1.5},
    }


def test_an_alias_with_a_type_is_evaluated_and_resolved_in_hybrid(capsys, dataset, pdf_dir):
    code, out, _ = _run(
        capsys, "--dataset", str(dataset), "--pdf-dir", str(pdf_dir), "--json", "--k", "1",
        "--retrievers", "tf,hybrid", "--set", "tf.type=example_tfidf",
        "--set", 'hybrid.retrievers=["bm25","tf"]',
    )  # fmt: skip
    assert code == 0
    data = json.loads(out)
    assert list(data["retrievers"]) == ["tf", "hybrid"] and not data["failed"]
    assert data["retrievers"]["tf"]["params"] == {"type": "example_tfidf"}


def test_mixed_sources_print_a_breakdown_and_json_has_question_ranks(capsys, tmp_path, pdf_dir):
    rows = [
        {"id": "mmlb/1", "doc": "energy.pdf", "question": "How do green plants turn sunlight "
         "into energy?", "evidence_pages": [1]},
        {"id": "fb/1", "doc": "finance.pdf", "question": "By how much did revenue grow in "
         "Europe?", "evidence_pages": [1]},
        {"id": "fb/2", "doc": "space.pdf", "question": "What did the telescope observe?",
         "evidence_pages": [2]},
    ]  # fmt: skip
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    base = ["--dataset", str(path), "--pdf-dir", str(pdf_dir), "--retrievers", "bm25,oracle"]
    code, out, _ = _run(capsys, *base, "--k", "1,3")
    assert code == 0 and "per source" in out and "mmlb" in out and "fb" in out
    code, out, _ = _run(capsys, *base, "--json")
    data = json.loads(out)
    assert data["groups"] == {"fb": 2, "mmlb": 1}
    assert data["retrievers"]["oracle"]["per_question"]["fb/2"]["first_gold_rank"] == 1
    assert set(data["retrievers"]["bm25"]["by_group"]) == {"fb", "mmlb"}
    code, out, _ = _run(capsys, *base, "--json", "--by", "none_such_field")
    assert json.loads(out)["groups"] == {}


def test_progress_and_every_document_indexed_under_limit(capsys, dataset, pdf_dir):
    args = ["--dataset", str(dataset), "--pdf-dir", str(pdf_dir), "--retrievers", "bm25",
            "--json", "--limit", "1"]  # fmt: skip
    code, out, err = _run(capsys, *args)
    assert code == 0
    data = json.loads(out)
    assert data["n_questions"] == 1 and data["retrievers"]["bm25"]["pages"] == 9  # all PDFs
    assert "ingest   3/3 in " in err and "retrieve 1/1 in " in err
    full = json.loads(_run(capsys, "--dataset", str(dataset), "--pdf-dir", str(pdf_dir),
                           "--retrievers", "bm25", "--json")[1])  # fmt: skip
    one = data["retrievers"]["bm25"]["per_question"]["1"]
    assert one == full["retrievers"]["bm25"]["per_question"]["1"]


def test_the_printed_table_keeps_every_number_when_piped(capsys, dataset, pdf_dir, tmp_path):
    """Output to a pipe or file prints the table at its full width: no value folded or cut."""
    import re

    args = ["--dataset", str(dataset), "--pdf-dir", str(pdf_dir), "--k", "1,3,5,10",
            "--retrievers", "bm25,oracle,hybrid", "--by", "doc_type",
            "--cache-dir", str(tmp_path / "cache")]  # fmt: skip
    code, out, _ = _run(capsys, *args)
    assert code == 0 and "…" not in out
    rows = [line for line in out.splitlines() if line.lstrip("│ ").startswith("bm25")]
    assert rows and all(
        len(re.findall(r"\d\.\d{3}/\d\.\d{3}/\d\.\d{3}/\d\.\d{3}", row)) == 5 for row in rows
    ), rows
