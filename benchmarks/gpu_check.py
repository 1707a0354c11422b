"""GPU code paths checked against the CPU, with figures: run it on a machine with CUDA.

    python benchmarks/gpu_check.py [--pages 2000] [--json OUT]
    python benchmarks/gpu_check.py --compile-only

``--compile-only`` needs no GPU: it compiles every Triton kernel the MaxSim paths launch for
sm_80 and sm_90 on the CPU (``scanrag.indexes.colpali_aot``), prints one line per kernel
variant and target, then ``compiled N kernels for sm_80, sm_90``; the exit status is 0 only
when every one compiled.

1. Dense: a ``DenseIndex`` left to choose its device (CUDA when torch sees a GPU; FAISS on the
   GPU when the installed faiss has GPU support) against one forced onto the CPU, same pages
   and queries: the chosen devices, top-5 pages equal, largest score difference.
2. ColPali: a ``ColPaliIndex`` (tiny offline ColQwen2 and ColPali models) on the chosen device
   against the CPU: stored fp16 vectors, MaxSim scores (on CUDA: the project's Triton kernel)
   and region proposals, and the MaxSim path that scored.
3. MaxSim throughput on the chosen device (``benchmarks/colpali.py``'s measurement), with the
   largest relative difference from colpali-engine's own scorer.

No PDF library is needed: pages are drawn with PIL from in-memory documents, so the check runs
where only torch, transformers, sentence-transformers, faiss and colpali-engine are installed.
On a machine without CUDA every "chosen" device is the CPU and the check still runs.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from colpali import print_sections, throughput  # noqa: E402

from scanrag.hashing import stable_hash  # noqa: E402
from scanrag.schemas import Document, Page  # noqa: E402

TEXTS = [
    "Quarterly revenue grew by twelve percent in Europe and Asia.",
    "The telescope observed a galaxy cluster behind a black hole.",
    "Plants turn sun light into energy inside the cell.",
    "The table reports profit and growth per quarter and year.",
    "",
    "A figure shows water use per plant over one year.",
]
QUERIES = ["revenue growth in europe", "galaxy telescope", "energy from light", "profit table"]


def documents(copies: int = 2) -> list[Document]:
    out = []
    for c in range(copies):
        texts = [f"{t} Part {c}." if t else "" for t in TEXTS]
        sha = stable_hash([c, *texts], length=64)
        pages = [Page(number=i, width=612, height=792, text=t) for i, t in enumerate(texts, 1)]
        out.append(Document(id=sha[:16], name=f"d{c}.pdf", sha256=sha, num_pages=6, pages=pages))
    return out


class DrawnPages:
    """A page renderer that draws each page's text with PIL (no PDF needed)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def render(self, document: Document, page: int, dpi: int | None = None) -> Path:
        from PIL import Image, ImageDraw

        dpi = dpi or 72
        info = document.pages[page - 1]
        size = (int(info.width * dpi / 72), int(info.height * dpi / 72))
        image = Image.new("RGB", size, "white")
        draw = ImageDraw.Draw(image)
        for line, start in enumerate(range(0, len(info.text), 30)):
            draw.text((size[0] // 10, size[1] // 10 + 14 * line), info.text[start : start + 30])
        path = self.folder / f"{document.id}-{page}-{dpi}.png"
        image.save(path)
        return path


def compare_hits(chosen: Any, cpu: Any) -> dict[str, Any]:
    same, diff = True, 0.0
    for query in QUERIES:
        a, b = chosen.search(query, 5), cpu.search(query, 5)
        same &= [(h.doc_id, h.page) for h in a] == [(h.doc_id, h.page) for h in b]
        diff = max(diff, *(abs(x.score - y.score) for x, y in zip(a, b, strict=False)))
    return {"top5_same": same, "max_score_diff": diff}


def dense(docs: list[Document]) -> dict[str, Any]:
    from scanrag.indexes.dense import DenseIndex
    from scanrag.indexes.dense_tiny import tiny_encoder_dir
    from scanrag.indexes.encoders import faiss_dist

    model = str(tiny_encoder_dir())
    chosen = DenseIndex(model, chunk_tokens=24, chunk_overlap=4)
    cpu = DenseIndex(model, chunk_tokens=24, chunk_overlap=4, device="cpu")
    start = time.perf_counter()
    chosen.add(docs)
    build_s = time.perf_counter() - start
    cpu.add(docs)
    return {
        "encoder_device": chosen.devices.encoder,
        "faiss_gpu": chosen.devices.faiss_gpu,
        "faiss_dist": faiss_dist(),
        "backend": chosen.backend,
        "encoder_param_device": _param_device(chosen.encoder),
        "build_s": build_s,
        **compare_hits(chosen, cpu),
    }


def _param_device(encoder: Any) -> str:
    """Where a torch encoder's weights sit; ONNX Runtime sessions (the CPU default) run on the
    CPU execution provider."""
    if hasattr(encoder, "parameters"):
        return str(next(encoder.parameters()).device)
    return "cpu (onnxruntime)"


def colpali(docs: list[Document], family: str) -> dict[str, Any]:
    from scanrag.indexes.colpali import ColPaliIndex
    from scanrag.indexes.colpali_tiny import tiny_model_dir

    model = str(tiny_model_dir(family))
    with tempfile.TemporaryDirectory() as tmp:
        renderer = DrawnPages(Path(tmp))
        chosen = ColPaliIndex(model, dpi=48, batch_size=4, renderer=renderer)
        cpu = ColPaliIndex(model, dpi=48, batch_size=4, renderer=renderer, device="cpu")
        chosen.add(docs)
        cpu.add(docs)
    a, b = chosen.store.vectors.astype(np.float32), cpu.store.vectors.astype(np.float32)
    regions = sum(len(h.regions) for q in QUERIES for h in chosen.search(q, 3))
    return {
        "device": chosen.device,
        "model_param_device": str(next(chosen.encoder.model.parameters()).device),
        "scorer_device": chosen.scorer.device,
        "maxsim_path": chosen.scorer.record(),
        "pages": chosen.page_count,
        "vectors_max_abs_diff": float(np.abs(a - b).max()) if a.shape == b.shape else None,
        "regions_on_top3": regions,
        **compare_hits(chosen, cpu),
    }


def maxsim(pages: int) -> dict[str, Any]:

    args = argparse.Namespace(
        pages=pages, tokens=700, dim=128, query_tokens=20, queries=5, repeats=5
    )
    return throughput(args)


def environment() -> dict[str, Any]:
    import torch

    info: dict[str, Any] = {"torch": torch.__version__, "cuda": torch.cuda.is_available()}
    if info["cuda"]:
        info["gpu"] = torch.cuda.get_device_name(0)
    try:
        import faiss

        info["faiss"] = faiss.__version__
        info["faiss_gpus"] = faiss.get_num_gpus() if hasattr(faiss, "get_num_gpus") else 0
    except ImportError:
        info["faiss"] = "not installed"
    return info


def compile_only() -> int:
    """Compile every MaxSim kernel for sm_80 and sm_90 here; 0 when all compiled."""
    from scanrag.indexes import colpali_aot

    results = colpali_aot.compile_all(report=lambda result: print(result.line(), flush=True))
    targets = ", ".join(f"sm_{t}" for t in dict.fromkeys(r.target for r in results))
    failed = [r for r in results if r.error is not None]
    for module in colpali_aot.missing_libraries():
        print(f"not installed, not compiled: {module}")
    print(f"compiled {len(results) - len(failed)} kernels for {targets}")
    if failed:
        print(f"FAILED: {len(failed)} of {len(results)}")
    return 1 if failed or not results else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=2000, help="pages for the MaxSim figures")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--compile-only", action="store_true", help="compile the MaxSim kernels; no GPU needed"
    )
    args = parser.parse_args(argv)
    if args.compile_only:
        return compile_only()
    docs = documents()
    report: dict[str, Any] = {"environment": environment()}
    for name, run in (
        ("dense", lambda: dense(docs)),
        ("colpali_colqwen2", lambda: colpali(docs, "colqwen2")),
        ("colpali_colpali", lambda: colpali(docs, "colpali")),
        ("maxsim", lambda: maxsim(args.pages)),
    ):
        try:
            report[name] = run()
        except Exception as exc:  # report every section, even when one breaks
            report[name] = {"error": f"{type(exc).__name__}: {exc}"}
    print_sections(report, number=",.6g")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, default=str))
    failed = [k for k, v in report.items() if "error" in v]
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
