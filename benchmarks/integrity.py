"""What the integrity checks of issues 20 and 31 cost: page-file checksums, row-index
verification, dataset row bounds and run-folder verification.

**Page files.** Two ways to notice a page file edited after it was written: a whole-file
checksum recomputed when the document is opened (what ``scanrag.documents.pagestore`` does),
or a checksum per page checked on every page read. Measured on the same page files, best of
``--repeats`` interleaved rounds:

* ``open_ms``: ``open_document`` without a check (the floor);
* ``verify_ms``: the whole-file CRC-32 (``pagecheck.file_crc``), once per file per process;
* ``decode_ms_per_page``: decoding one page (what every page read costs anyway);
* ``page_crc_ms_per_page``: a CRC-32 of one page row already fetched (what a per-page check
  would add to each page read);
* ``break_even_reads``: how many page reads per page of a file a process must make for the
  per-page check to cost more than the whole-file one (``verify / (pages × page_crc)``).

**Row indexes.** ``JsonlLog.digests()`` of an ``--rows``-row trajectory log: through the index
(every entry's offsets and checksum verified against the log's bytes), against a full scan
(every row parsed), and parsing the index alone (the old trust-the-index cost, without the
verification).

**Dataset rows** (issue 31). Reading ``--rows`` generic rows with the row bounds
(``read_records``: nesting, text UTF-8 cannot store) against ``json.loads`` of each line (the
floor, what reading cost before), ``load_generic`` whole (rows into samples), the check of
every sample before a run stores it (``drop_unstorable``), and ``RunDir.verify`` of a run
folder holding those samples (config hash, SHA-256 of ``samples.jsonl`` and
``datasets.json``: what every command that opens a run pays first).

    python benchmarks/integrity.py [--pdf-dir DIR] [--repeats 5] [--rows 20000] [--pages 40]

Without ``--pdf-dir`` (or when it holds no PDF) four generated PDFs of ``--pages`` pages are
used. The last line
is ``summary: ...`` with the figures above.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def _best(rounds: int, tasks: dict[str, Callable[[], object]]) -> dict[str, float]:
    """Best wall time (s) of each task over ``rounds`` interleaved rounds."""
    best = {name: float("inf") for name in tasks}
    for _ in range(rounds):
        for name, task in tasks.items():
            start = time.perf_counter()
            task()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def _generated_pdfs(folder: Path, count: int = 4, pages: int = 40) -> list[Path]:
    import pymupdf

    rng = random.Random(0)
    words = ["revenue", "growth", "table", "figure", "page", "region", "answer", "value"]
    out = []
    for n in range(count):
        doc = pymupdf.open()
        for _ in range(pages):
            page = doc.new_page()
            for line in range(40):
                text = " ".join(rng.choice(words) for _ in range(12))
                page.insert_text((50, 60 + line * 17), text, fontsize=10)
        path = folder / f"gen{n}.pdf"
        doc.save(path)
        doc.close()
        out.append(path)
    return out


def page_files(pdf_dir: Path | None, repeats: int, pages: int = 40) -> dict[str, float]:
    from scanrag.documents import DocumentStore
    from scanrag.documents.pagecheck import file_crc, row_crc
    from scanrag.documents.pagestore import _READERS, PAGE_CACHE, open_document

    with tempfile.TemporaryDirectory() as tmp:
        pdfs = sorted(pdf_dir.glob("*.pdf")) if pdf_dir and pdf_dir.is_dir() else []
        pdfs = pdfs or _generated_pdfs(Path(tmp), pages=pages)
        list(DocumentStore(Path(tmp) / "docs").ingest_many(pdfs, ocr="never"))
        files = sorted((Path(tmp) / "docs").glob("*.pages.sqlite"))
        total = sum(open_document(f).num_pages for f in files)
        megabytes = sum(f.stat().st_size for f in files) / 1e6

        def open_all() -> None:
            for f in files:
                _READERS.forget(str(f))
                open_document(f)

        def verify_all() -> None:
            for f in files:
                file_crc(f)

        def decode_all() -> None:
            PAGE_CACHE.clear()
            for f in files:
                document = open_document(f)
                for i in range(document.num_pages):
                    document.pages[i]

        rows = []  # a per-page check hashes a row the read has fetched already
        for f in files:
            conn = sqlite3.connect(f"file:{f}?mode=ro&immutable=1", uri=True)
            rows += conn.execute("SELECT number, source, text, record FROM pages").fetchall()
            conn.close()

        def page_crc_all() -> None:
            for row in rows:
                row_crc(0, *row)

        best = _best(
            repeats,
            {"open": open_all, "verify": verify_all, "decode": decode_all, "crc": page_crc_all},
        )
    verify_ms = best["verify"] * 1000
    page_crc = best["crc"] * 1000 / total
    return {
        "files": len(files),
        "pages": total,
        "megabytes": round(megabytes, 1),
        "open_ms": round(best["open"] * 1000, 1),
        "verify_ms": round(verify_ms, 1),
        "verify_ms_per_mb": round(verify_ms / megabytes, 2),
        "decode_ms_per_page": round(best["decode"] * 1000 / total, 3),
        "page_crc_ms_per_page": round(page_crc, 3),
        "break_even_reads": round(verify_ms / (total * page_crc), 2),
    }


def row_index(rows: int, repeats: int) -> dict[str, float]:
    from scanrag.rundir import JsonlLog, RowIndex

    with tempfile.TemporaryDirectory() as tmp:
        log_path, index_path = Path(tmp) / "t.jsonl", Path(tmp) / "t.index.jsonl"
        log = JsonlLog(log_path, index=RowIndex(index_path, log_path))
        for i in range(rows):
            log.append(
                {
                    "run_key": "rag+bm25",
                    "sample_id": f"q{i}",
                    "status": "ok",
                    "answer": "x" * 200,
                    "raw_output": "y" * 2000,
                    "pages": list(range(10)),
                    "usage": {"reader": {"calls": 1, "prompt_tokens": 900, "cost_usd": 0.001}},
                }
            )
        log.close()

        def indexed() -> None:
            JsonlLog(log_path, index=RowIndex(index_path, log_path)).digests()

        def scan() -> None:
            JsonlLog(log_path).digests()

        def index_alone() -> None:
            with open(index_path, "rb") as fh:
                [json.loads(line) for line in fh]

        best = _best(repeats, {"indexed": indexed, "scan": scan, "index_alone": index_alone})
        megabytes = log_path.stat().st_size / 1e6
    return {
        "rows": rows,
        "log_megabytes": round(megabytes, 1),
        "indexed_ms": round(best["indexed"] * 1000, 1),
        "scan_ms": round(best["scan"] * 1000, 1),
        "index_alone_ms": round(best["index_alone"] * 1000, 1),
        "scan_over_indexed": round(best["scan"] / best["indexed"], 1),
    }


def dataset_rows(rows: int, repeats: int) -> dict[str, float]:
    """What the row bounds of issue 31 cost when a dataset file is read and a run folder is
    opened, on ``rows`` generic rows (question, answer, pages, a little metadata)."""
    from scanrag.config import config_from_dict
    from scanrag.datasets import load_generic
    from scanrag.datasets.base import drop_unstorable
    from scanrag.datasets.sources import read_records
    from scanrag.rundir import RunDir

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "questions.jsonl"
        lines = [
            json.dumps(
                {
                    "id": f"q{i}",
                    "doc": f"doc{i % 50}.pdf",
                    "question": f"What is the value of item {i} in the second table? " * 2,
                    "answer": f"{i * 7} units",
                    "answer_format": "Str",
                    "evidence_pages": [i % 30 + 1, i % 30 + 2],
                    "doc_type": "Research report",
                    "evidence_sources": ["Table", "Pure-text"],
                }
            )
            for i in range(rows)
        ]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        dataset = load_generic(path, validate=False)
        run = RunDir.create(Path(tmp) / "runs", "bench")
        run.write_config(
            config_from_dict(
                {
                    "name": "b",
                    "datasets": [{"path": str(path)}],
                    "strategies": [{"name": "full_doc"}],
                }
            )
        )
        run.write_samples(dataset.samples)
        run.write_json(
            RunDir.DATASETS, [{"name": "b", "sample_ids": [s.id for s in dataset.samples]}]
        )
        run.write_json(
            RunDir.MANIFEST,
            {"config_hash": run.recorded_config_hash(), "files": run.file_digests()},
        )

        def json_only() -> None:  # the floor: what reading the rows cost before the bounds
            [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

        best = _best(
            repeats,
            {
                "json_only": json_only,
                "read_records": lambda: read_records(path, arrays=False),
                "load_generic": lambda: load_generic(path, validate=False),
                "sample_check": lambda: drop_unstorable(dataset),
                "verify_run": run.verify,
            },
        )
        megabytes = path.stat().st_size / 1e6
    return {
        "rows": rows,
        "file_megabytes": round(megabytes, 1),
        **{f"{name}_ms": round(value * 1000, 1) for name, value in best.items()},
        "read_over_json": round(best["read_records"] / best["json_only"], 2),
        "checks_share_of_load": round(
            (best["read_records"] - best["json_only"] + best["sample_check"])
            / best["load_generic"],
            3,
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pdf-dir", type=Path, default=REPO.parent / "shared/data/mmlb-dev/pdfs")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--pages", type=int, default=40, help="pages of each generated PDF")
    args = parser.parse_args(argv)
    pages = page_files(args.pdf_dir, args.repeats, args.pages)
    print("page files:", json.dumps(pages))
    index = row_index(args.rows, args.repeats)
    print("row index:", json.dumps(index))
    rows = dataset_rows(args.rows, args.repeats)
    print("dataset rows:", json.dumps(rows))
    print(
        f"summary: verify {pages['verify_ms_per_mb']} ms/MB vs decode "
        f"{pages['decode_ms_per_page']} ms/page, per-page crc {pages['page_crc_ms_per_page']} "
        f"ms/page, break-even {pages['break_even_reads']} reads per page; index "
        f"{index['indexed_ms']} ms vs scan {index['scan_ms']} ms ({index['scan_over_indexed']}x) "
        f"for {index['rows']} rows; dataset rows read {rows['read_over_json']}x bare json, "
        f"checks {rows['checks_share_of_load']:.1%} of a load, run folder verified in "
        f"{rows['verify_run_ms']} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
