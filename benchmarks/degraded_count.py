"""How many items a config degrades under its caps, counted by planning prompts, not running
the model.

    .venv/bin/python benchmarks/degraded_count.py [--config configs/quickstart.yaml]
        [--dataset Q.jsonl --pdf-dir DIR] [--reader MODEL] [--limit N] [--set K=V ...]

The real runner runs every item of the config (or of ``--dataset``, with full_doc,
topk_rag over bm25 (k=5), agentic_rag over bm25 and oracle_pages at their defaults) through the
real strategies, but the model client answers every call at once with a fixed reply. Context
windows and token counts still come from the real gateway (the reader's model entry, an
embedded model's ``n_ctx`` and tokenizer when its weights are installed, else the
characters / 4 estimate), so each item's reductions — page caps, character caps, image caps,
prompts planned to the window — are exactly those a real run would record for its first
read. Items of ``agentic_rag`` and ``scan`` read what the model decides, so their counts only
cover the path the fixed reply takes. Prints one line per cell: items, degraded, by kind, and
the items that lost gold pages; then ``degraded=n/N`` over the run.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

FIXED_REPLY = '{"answer": "x", "pages": [], "facts": []}'


class PlanOnly:
    """A chat model that plans like the real client and answers at once without a model."""

    def __init__(self, client: Any) -> None:
        self.client = client

    async def context_window_of(self, model: str) -> Any:
        return await self.client.context_window_of(model)

    async def count_prompt_tokens(self, request: Any) -> Any:
        return await self.client.count_prompt_tokens(request)

    async def chat(self, request: Any) -> Any:
        from scanrag.llm.types import ChatResponse
        from scanrag.schemas import Usage

        return ChatResponse(text=FIXED_REPLY, model=request.model, usage=Usage(calls=1))


def dataset_config(questions: Path, pdf_dir: Path, reader: str) -> dict[str, Any]:
    """Four strategies at their defaults over one dataset file."""
    return {
        "name": "degraded-count",
        "datasets": [
            {"name": questions.parent.name, "path": str(questions), "pdf_dir": str(pdf_dir)}
        ],
        "retrievers": {"bm25": {}},
        "strategies": [
            {"name": "full_doc"},
            {"name": "topk_rag", "retriever": "bm25"},
            {"name": "agentic_rag", "retriever": "bm25"},
            {"name": "oracle_pages"},
        ],
        "models": {"agents": {"reader": reader}},
    }


def main(argv: list[str] | None = None) -> int:
    import yaml

    from scanrag.config import config_from_dict, load_config
    from scanrag.runner import start_run
    from scanrag.runner.components import build_llm

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, default=REPO / "configs" / "quickstart.yaml")
    parser.add_argument("--dataset", type=Path, help="a generic-format questions file instead")
    parser.add_argument("--pdf-dir", type=Path)
    parser.add_argument("--reader", default=None, help="reader model (default: the config's)")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="degraded-count-") as tmp:
        overrides = [
            *args.overrides,
            f"runner.runs_dir={tmp}/runs",
            "runner.llm.cache=false",
            "runner.progress=false",
            "scoring.enabled=false",
        ]
        if args.reader:
            overrides.append(f"models.agents.reader={args.reader}")
        if args.dataset is not None:
            data = dataset_config(args.dataset, args.pdf_dir or args.dataset.parent / "pdfs",
                                  args.reader or "local/qwen2.5-0.5b")  # fmt: skip
            path = Path(tmp) / "config.yaml"
            path.write_text(yaml.safe_dump(data))
            config = load_config(path, overrides, limit=args.limit)
        else:
            config = load_config(args.config, overrides, limit=args.limit)
        config = config_from_dict(config.model_dump(mode="json"))
        llm = PlanOnly(build_llm(config.runner, config.model_entries()))
        result = start_run(config, llm=llm, log=None)
        total = degraded = 0
        for cell in result.summary["cells"].values():
            total += cell["items"]
            degraded += cell["degraded"]
            print(
                f"{cell['label']:<28} items={cell['items']:<4} degraded={cell['degraded']:<4} "
                f"gold_lost={cell['gold_pages_dropped']:<4} by_kind={json.dumps(cell['by_kind'])}"
            )
        print(f"degraded={degraded}/{total}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
