"""Agreement of the ``mmlongbench`` scorer's official profile with MMLongBench-Doc's released
pipeline (``run_api.py`` + ``eval/extract_answer.py`` + ``eval/eval_score.py``) on a mixed set
(``tests/evaluation/mmlongbench/mmlb_pipeline.py``: refusals, failed extractions, expression lists).

    .venv/bin/python benchmarks/mmlongbench_pipeline_agreement.py                  # compare
    .venv/bin/python benchmarks/mmlongbench_pipeline_agreement.py --released PATH  # relabel

``--released PATH`` is a checkout of ``mayubo2333/MMLongBench-Doc`` you fetched yourself (the
folder holding ``run_api.py`` and ``eval/``). It is copied to a temporary folder (never into
this repository), given the set as ``samples.json`` with two one-page PDFs and our extractor
prompt file (``tests/evaluation/mmlongbench/golden/extractor_prompt.md``), and ``run_api.py``
runs against an OpenAI-compatible server on 127.0.0.1 that answers the model's requests with
each case's response (HTTP 400 when the case's model call fails) and the extractor's with each
case's extraction (HTTP 400 when it fails). Its result file gives every prediction and score,
and its ``eval_acc_and_f1`` the accuracy and F1; they are written to
``tests/evaluation/mmlongbench/golden/pipeline_released.json``.

Then the same set is scored with the ``mmlongbench`` scorer (official profile, official call
shape, the same prompt file and extractor replies) and the script prints how many predictions
and scores agree and both headline numbers, beside the lenient profile's for contrast.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
HERE = REPO / "tests" / "evaluation" / "mmlongbench"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "benchmarks"))

import mmlb_pipeline as mixed  # noqa: E402
from local_server import serve  # noqa: E402

OUTPUT = mixed.GOLDEN / "pipeline_released.json"


class _Server(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        return

    def _reply(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        messages = body["messages"]
        if messages[-1]["role"] == "assistant":  # the extractor's call shape
            text = mixed.case_of(mixed.question_of(messages[-1]["content"]))["extraction"]
        else:  # the model: the question is the first text part
            question = next(p["text"] for p in messages[0]["content"] if p["type"] == "text")
            text = mixed.case_of(question)["response"]
        if text is None:
            error = {"message": "scripted failure", "type": "invalid_request_error"}
            self._reply(400, {"error": error})
            return
        self._reply(
            200,
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            },
        )


def run_released(checkout: Path) -> None:
    if not (checkout / "run_api.py").is_file() or not (checkout / "eval").is_dir():
        raise SystemExit(f"{checkout} holds no MMLongBench-Doc run_api.py and eval/")
    with tempfile.TemporaryDirectory() as tmp, serve(_Server) as url:
        root = Path(tmp) / "mmlb"
        shutil.copytree(checkout, root, ignore=shutil.ignore_patterns("data", ".git"))
        mixed.write_inputs(root)
        (root / "tmp").mkdir(exist_ok=True)
        (root / "results").mkdir(exist_ok=True)
        command = [sys.executable, "run_api.py", "--input_path", "samples.json"]
        command += ["--document_path", "documents", "--model_name", "gpt-4o"]
        command += ["--resolution", "36", "--max_pages", "1", "--max_try", "1"]
        command += ["--extractor_prompt_path", str(mixed.PROMPT)]
        env = os.environ | {"OPENAI_API_KEY": "x", "OPENAI_BASE_URL": url}
        subprocess.run(command, cwd=root, env=env, check=True, capture_output=True)
        samples = json.loads((root / "results" / "res_gpt-4o.json").read_text())
        sys.path.insert(0, str(root / "eval"))
        from eval_score import eval_acc_and_f1  # type: ignore[import-not-found]

        accuracy, f1 = eval_acc_and_f1(samples)
        items = sorted(
            ({"question": s["question"], "pred": s["pred"], "score": s["score"]} for s in samples),
            key=lambda item: item["question"],
        )
        data = {"acc": accuracy, "f1": f1, "n": len(samples), "items": items}
        OUTPUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    print(f"golden file rewritten from the released pipeline: {OUTPUT}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--released", type=Path, help="an MMLongBench-Doc checkout")
    args = parser.parse_args(argv)
    if args.released is not None:
        run_released(args.released)
    golden = json.loads(OUTPUT.read_text())
    with tempfile.TemporaryDirectory() as tmp:
        ours = mixed.score_ours(Path(tmp) / "official")
        lenient = mixed.score_ours(Path(tmp) / "lenient", profile="lenient")
    pairs = list(zip(golden["items"], ours["items"], strict=True))
    same_pred = sum(a["pred"] == b["pred"] for a, b in pairs)
    same_score = sum(a["score"] == b["score"] for a, b in pairs)
    print(f"items: {len(pairs)}; predictions equal {same_pred}, scores equal {same_score}")
    for a, b in pairs:
        if a != b:
            released, mine = (a["pred"], a["score"]), (b["pred"], b["score"])
            print(f"  {a['question']}: released {released}, ours {mine}")
    print(f"accuracy: released {golden['acc']!r}, ours {ours['acc']!r}")
    print(f"F1: released {golden['f1']!r}, ours {ours['f1']!r}")
    print(
        f"lenient profile: accuracy {lenient['acc']:.4f}, F1 {lenient['f1']:.4f} "
        f"(n {lenient['n']}, {lenient['excluded']} excluded)"
    )
    same = same_pred == same_score == len(pairs)
    return 0 if same and golden["acc"] == ours["acc"] and golden["f1"] == ours["f1"] else 1


if __name__ == "__main__":
    sys.exit(main())
