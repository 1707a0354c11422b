"""``scanrag retrieve eval --retrievers bm25`` on a generated corpus far larger than memory.

    python benchmarks/scale_bm25.py OUT_DIR --pages 1000000 [--pages-per-doc 1000]
                                    [--memory-mb 512]

The corpus: ``pages`` pages of ~300 words drawn (Zipf-like) from the made-up vocabulary of
``benchmarks/scale_corpus.py``, ``pages-per-doc`` pages per document, two questions per
document (rare words of one page, that page as gold). To measure the index and not PDF
ingestion (which has its own figures in docs/scale.md), each document's pages are written
straight into the page store the way ingestion stores a text page, under the content hash
of a PDF with as many (blank) pages, so ``retrieve eval`` finds every document in its cache.

Then ``scanrag retrieve eval`` runs under ``/usr/bin/time`` with ``bm25.memory_mb`` set (the
postings past it are assembled on disk and memory-mapped, ``scanrag.indexes.bm25_disk``), and a
second process opens the saved index memory-mapped and times corpus-wide queries. Printed:
wall time, build seconds, per-document query p50, peak RSS of the command, and the
corpus-wide query p50 and peak RSS of the second process, as ``key=value`` lines.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def generate(out: Path, pages: int, per_doc: int, seed: int = 0) -> dict[str, Any]:
    """The corpus under ``out`` (``pdfs/``, ``cache/documents``, ``questions.jsonl``)."""
    params = {"pages": pages, "per_doc": per_doc, "seed": seed, "version": 1}
    marker = out / "corpus.json"
    if marker.is_file() and json.loads(marker.read_text())["params"] == params:
        return dict(json.loads(marker.read_text()))
    import numpy as np

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from scale_corpus import question_row, vocabulary

    from scanrag.documents import DocumentStore
    from scanrag.documents.pagewriter import write_document
    from scanrag.hashing import doc_id_from_sha, file_sha256
    from scanrag.schemas import Document, Page

    (out / "pdfs").mkdir(parents=True, exist_ok=True)
    store = DocumentStore(out / "cache" / "documents")
    vocab = np.array(vocabulary(6000, seed), dtype=object)
    weights = 1.0 / np.arange(1, vocab.size + 1)
    rng = np.random.default_rng(seed)
    rows, left, index = [], pages, 0
    while left > 0:
        count = min(per_doc, left)
        name = f"doc{index:05d}.pdf"
        (out / "pdfs" / name).write_bytes(blank_pdf(count, name))
        sha = file_sha256(out / "pdfs" / name)
        drawn = rng.choice(vocab.size, size=(count, 300), p=weights / weights.sum())
        texts = [vocab[row].tolist() for row in drawn]
        document = Document(
            id=doc_id_from_sha(sha),
            name=name,
            sha256=sha,
            num_pages=count,
            pages=[
                Page(number=n, width=612, height=792, text=f"Section {n}\n" + " ".join(words))
                for n, words in enumerate(texts, start=1)
            ],
        )
        write_document(document, store.path_for(sha))
        for q in range(2):
            page = int(rng.integers(1, count + 1))
            rare = vocab[np.unique(drawn[page - 1])[-6:]].tolist()
            rows.append(question_row(f"q{index:05d}-{q}", name, rare, page))
        left -= count
        index += 1
    (out / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    info = {"params": params, "docs": index, "questions": len(rows), "pages": pages}
    marker.write_text(json.dumps(info))
    return info


def blank_pdf(pages: int, title: str) -> bytes:
    """A valid PDF of ``pages`` empty letter pages (``title`` makes its bytes unique)."""
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids ["
        + " ".join(f"{i + 4} 0 R" for i in range(pages))
        + f"] /Count {pages} >>",
        f"<< /Title ({title}) >>",
        *["<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"] * pages,
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{offset:010d} 00000 n \n" for offset in offsets).encode()
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R /Info 3 0 R >>\n"
        f"startxref\n{xref}\n%%EOF\n"
    ).encode()
    return bytes(out)


def retrieve_eval(out: Path, memory_mb: int) -> dict[str, Any]:
    """Run the command under ``/usr/bin/time -v``; its figures."""
    scanrag = Path(sys.executable).with_name("scanrag")
    command = [
        "/usr/bin/time",
        "-v",
        str(scanrag),
        "retrieve",
        "eval",
        "--dataset",
        str(out / "questions.jsonl"),
        "--pdf-dir",
        str(out / "pdfs"),
        "--retrievers",
        "bm25",
        "--k",
        "5",
        "--cache-dir",
        str(out / "cache"),
        "--set",
        f"bm25.memory_mb={memory_mb}",
        "--set",
        f"bm25.spill_dir={out}",
        "--json",
    ]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    (out / "retrieve_eval.stderr").write_text(done.stderr)
    if done.returncode != 0:
        raise SystemExit(f"retrieve eval failed ({done.returncode}): {done.stderr[-2000:]}")
    payload = json.loads(done.stdout)
    run = payload["retrievers"]["bm25"]
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    return {
        "wall_s": wall,
        "build_s": run["build_s"],
        "scoped_p50_ms": run["latency_p50_ms"],
        "recall@5": run["macro"].get("recall@5", 0.0),
        "peak_rss_mib": int(peak.group(1)) / 1024 if peak else float("nan"),
    }


CORPUS_QUERIES = """
import json, sys, time
import numpy as np
from pathlib import Path
from scanrag.indexes.bm25 import BM25Index
folder = sorted(Path(sys.argv[1]).glob("bm25-*"))[-1]
start = time.perf_counter()
index = BM25Index.open(folder, mmap=True)
opened = time.perf_counter() - start
questions = [json.loads(line)["question"] for line in open(sys.argv[2])][:200]
times = []
for question in questions:
    start = time.perf_counter()
    index.search(question, 10)
    times.append(time.perf_counter() - start)
hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM:")).split()[1]
print(json.dumps({"open_s": opened, "corpus_p50_ms": float(np.percentile(times, 50) * 1000),
                  "corpus_p95_ms": float(np.percentile(times, 95) * 1000),
                  "query_process_rss_mib": int(hwm) / 1024}))
"""


def corpus_queries(out: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-c", CORPUS_QUERIES, str(out / "cache" / "indexes")]
    command.append(str(out / "questions.jsonl"))
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"corpus queries failed: {done.stderr[-2000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--pages", type=int, default=1_000_000)
    parser.add_argument("--pages-per-doc", type=int, default=1000)
    parser.add_argument("--memory-mb", type=int, default=512)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    info = generate(args.out, args.pages, args.pages_per_doc)
    print(
        f"corpus: {info['pages']:,} pages, {info['docs']} documents "
        f"({time.perf_counter() - start:.0f} s)",
        flush=True,
    )
    figures = {"load_before": os.getloadavg()[0], **retrieve_eval(args.out, args.memory_mb)}
    figures.update(corpus_queries(args.out))
    figures["load_after"] = os.getloadavg()[0]
    for key, value in figures.items():
        print(f"{key}={value:.4g}" if isinstance(value, float) else f"{key}={value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
