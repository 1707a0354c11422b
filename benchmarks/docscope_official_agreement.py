"""Agreement of ScanRAG's official DocScope pipeline with DocScope's released evaluation code on
an edge-item benchmark (``tests/evaluation/docscope/docscope_edge.py``).

    .venv/bin/python benchmarks/docscope_official_agreement.py                  # compare only
    .venv/bin/python benchmarks/docscope_official_agreement.py --released PATH  # relabel first

``--released PATH`` is a checkout of ``MiliLab/DocScope`` you fetched yourself (the folder that
holds ``code/``). Its ``code/`` folder is copied to a temporary folder, never into this
repository; the edge benchmark, its PDFs, ``infer.jsonl`` and the three judge prompt files
(our own wording, in DocScope's template format) are put where its scripts look for them, and
``eval/score_pages.py``, ``score_bbox.py``, ``score_facts.py``, ``score_answer.py`` and
``scripts/summarize_eval.py`` run as ``scripts/run_eval.sh`` runs them (one judge call at a
time: ``--concurrency 1``, see :func:`run_released`), against the scripted
judge (``docscope_edge.judge_reply``) served on 127.0.0.1 as an OpenAI-compatible streaming
endpoint. It needs ``pdftoppm`` (poppler-utils) and the ``openai`` package. The golden files
under ``tests/evaluation/docscope/golden/edge/`` are rewritten from what it printed and wrote:
``summarize_eval.json`` (its output, ``eval_dir`` left out), ``rows.json`` (every row of
``pages.jsonl``, ``bbox.jsonl``, ``facts.jsonl``, ``answer.jsonl``, reduced to the fields the
summary reads) and ``prompts.json`` (a digest of every judge prompt it sent).

Then, always, the same ``infer.jsonl`` is imported with ``scanrag import docscope-infer
--profile official`` and scored with ``scanrag score`` (the same judge, in this process), and
the script prints how many summary numbers, rows and prompts agree with the golden files, plus
the paper profile's numbers on the same run for contrast. ``--call-shape official`` scores the
judges with the released request shape (``scanrag score --set
scoring.params.<judge>.call_shape=official``: no ``response_format``, no seed,
``max_completion_tokens``) instead of the default ``json`` shape.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
HERE = REPO / "tests" / "evaluation" / "docscope"
GOLDEN = HERE / "golden" / "edge"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "benchmarks"))

import docscope_edge as edge  # noqa: E402
from local_server import serve  # noqa: E402

STAGES = edge.STAGES


# --------------------------------------------------------------------------- the judge server


def user_text(messages: list[dict[str, Any]]) -> str:
    """The text of the last user message (its text parts joined)."""
    content = messages[-1]["content"]
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if part.get("type") == "text")


PROMPTS: list[str] = []  # every prompt the released scorers sent


class _Judge(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:  # quiet
        return

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        text = user_text(body["messages"])
        PROMPTS.append(text)
        reply = edge.judge_reply(text)
        chunks = [
            {"choices": [{"index": 0, "delta": {"role": "assistant", "content": reply}}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            {
                "choices": [],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            },
        ]
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for chunk in chunks:
            chunk |= {"id": "edge", "object": "chat.completion.chunk", "created": 0, "model": "j"}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")


# --------------------------------------------------------------------------- the released code


def _rows(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def released_rows(results: Path) -> dict[str, list[list[Any]]]:
    """Every row of the four score files, reduced to what the summary reads, sorted."""
    pages = [  # rows of records whose inference failed are skipped, not scored
        [str(r["question_id"]), r["status"]]
        + [r.get(k) for k in ("tp", "fp", "fn", "precision", "recall", "f1")]
        for r in _rows(results / "pages.jsonl")
        if r.get("status") == "ok"
    ]

    def label(row: dict[str, Any]) -> Any:  # the summary counts the labels of ok rows only
        return row.get("label") if row["status"] == "ok" else None

    bbox = [
        [str(r["question_id"]), r["page"], r["gold_id"], r["status"], label(r)]
        for r in _rows(results / "bbox.jsonl")
    ]
    facts = [
        [str(r["question_id"]), r["page"], r["fact_id"], r["status"], label(r)]
        for r in _rows(results / "facts.jsonl")
    ]
    answer = [
        [str(r["question_id"]), r["status"], r.get("consistent"), bool(r.get("has_answer_tag"))]
        for r in _rows(results / "answer.jsonl")
    ]
    found = (pages, bbox, facts, answer)
    return {k: sorted(v, key=repr) for k, v in zip(edge.STAGES, found, strict=True)}


def run_released(checkout: Path) -> None:
    code = checkout / "code" if (checkout / "code").is_dir() else checkout
    if not (code / "eval" / "score_bbox.py").is_file():
        raise SystemExit(f"{checkout} holds no DocScope code/eval/score_bbox.py")
    if shutil.which("pdftoppm") is None:
        raise SystemExit("the released region scorer renders pages with pdftoppm (poppler-utils)")
    with tempfile.TemporaryDirectory() as tmp, serve(_Judge) as url:
        root = Path(tmp) / "code"
        shutil.copytree(code, root)
        files = edge.write_edge_run(Path(tmp) / "edge")
        shutil.copy(files["benchmark"], root / "benchmark.json")
        shutil.copytree(files["pdfs"], root / "pdfs", dirs_exist_ok=True)
        (root / "prompts").mkdir(exist_ok=True)
        for role, (name, _) in edge.PROMPT_FILES.items():
            shutil.copy(files[role], root / "prompts" / name)
        out = root / "results" / "edge"
        out.mkdir(parents=True)
        shutil.copy(files["infer"], out / "infer.jsonl")
        env = os.environ | {"JUDGE_API_KEY": "x", "JUDGE_BASE_URL": url, "JUDGE_MODEL": "edge"}
        common = ["--infer", str(out / "infer.jsonl"), "--benchmark", str(root / "benchmark.json")]
        # One judge call at a time: at a higher concurrency the released page cache races
        # (two threads rendering one page: the later finds its PNG renamed away and records
        # render_failed), so which boxes fail to render would change from run to run.
        serial = ["--concurrency", "1"]
        for script, name, extra in (
            ("score_pages.py", "pages", []),
            ("score_bbox.py", "bbox", ["--imgs-dir", str(out / "imgs"), *serial]),
            ("score_facts.py", "facts", serial),
            ("score_answer.py", "answer", serial),
        ):
            command = [
                sys.executable,
                f"eval/{script}",
                *common,
                "--output",
                str(out / f"{name}.jsonl"),
            ]
            subprocess.run([*command, *extra], cwd=root, env=env, check=True, capture_output=True)
        printed = subprocess.run(
            [sys.executable, "scripts/summarize_eval.py", "--eval-dir", str(out)],
            cwd=root,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        summary = json.loads(printed)
        summary.pop("eval_dir", None)
        GOLDEN.mkdir(parents=True, exist_ok=True)
        (GOLDEN / "summarize_eval.json").write_text(json.dumps(summary, indent=1) + "\n")
        (GOLDEN / "rows.json").write_text(json.dumps(released_rows(out), indent=0) + "\n")
        digests = sorted(edge.prompt_digest(t) for t in PROMPTS)
        (GOLDEN / "prompts.json").write_text(json.dumps(digests, indent=0) + "\n")
    print(f"golden files rewritten from the released code: {GOLDEN}")


# --------------------------------------------------------------------------- ours


def ours(
    folder: Path, profile: str = "official", call_shape: str = "json"
) -> tuple[dict, dict, list[str], str]:
    """Import and score the edge run with our CLI; (official summary, rows, prompt digests,
    what ``scanrag score`` printed). With ``profile="paper"`` the summary is the headline
    metrics (value and n) of the paper profile instead; ``call_shape`` is the judges' request
    shape under the official profile."""
    from scanrag.cli import main
    from scanrag.llm.scripted import ScriptedModel, register_scripted

    files = edge.write_edge_run(folder / "inputs")
    judge = ScriptedModel(responder=lambda request: edge.judge_reply(request.messages[-1].text))
    register_scripted("edge-judge", judge)
    run = folder / f"run-{profile}"
    argv = ["import", "docscope-infer", str(files["infer"]), "--benchmark", str(files["benchmark"])]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main([*argv, "--out", str(run), "--profile", profile]) == 0
    prompts = [f"{role}={files[role]}" for role in ("answer", "fact", "region")]
    score = ["score", str(run), "--scorers", "pages,region,fact,answer", "--resamples", "0"]
    score += ["--judge-model", "scripted/edge-judge"]
    for item in prompts:
        score += ["--judge-prompt", item]
    if call_shape != "json":
        for judge_name in ("region", "fact", "answer"):
            score += ["--set", f"scoring.params.{judge_name}.call_shape={call_shape}"]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):
        assert main(score) == 0
    from scanrag.evaluation.docscope.official.summary import run_official_summaries

    summary = next(iter(run_official_summaries(run).values()))
    if profile != "official":
        detail = json.loads((run / "summary.json").read_text())["scoring"]["groups"]
        metrics = next(iter(detail.values()))["metrics"]
        summary = {
            name: {"value": m["value"], "n": m["n"]}
            for name, m in metrics.items()
            if m["headline"] and not name.startswith("completeness")
        }
    digests = sorted(edge.prompt_digest(r.messages[-1].text) for r in judge.requests)
    if profile == "official":
        schemas = {r.json_schema is None for r in judge.requests}
        assert schemas == {call_shape == "official"}, f"request shape is not {call_shape}"
    return summary, edge.our_rows(run), digests, printed.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--released", type=Path, help="a DocScope checkout (relabels goldens)")
    parser.add_argument(
        "--call-shape",
        choices=("json", "official"),
        default="json",
        help="the judges' request shape under the official profile (default json)",
    )
    args = parser.parse_args(argv)
    if args.released is not None:
        run_released(args.released)
    golden = json.loads((GOLDEN / "summarize_eval.json").read_text())
    rows = json.loads((GOLDEN / "rows.json").read_text())
    prompts = json.loads((GOLDEN / "prompts.json").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        summary, mine, digests, printed = ours(Path(tmp), call_shape=args.call_shape)
        paper, _, _, _ = ours(Path(tmp), "paper")
    numbers, diffs = edge.compare(golden, summary)
    print(f"judge call shape: {args.call_shape}")
    print(f"summary numbers equal: {numbers - len(diffs)}/{numbers}")
    for line in diffs:
        print("  " + line)
    for stage in STAGES:
        equal = sum((Counter(map(repr, rows[stage])) & Counter(map(repr, mine[stage]))).values())
        print(f"{stage} rows equal: {equal}/{len(rows[stage])} released, {len(mine[stage])} ours")
    same = sum((Counter(prompts) & Counter(digests)).values())
    print(f"judge prompts equal: {same}/{len(prompts)} released, {len(digests)} ours")
    blocks = [golden[k].get("n", golden[k].get("n_total")) for k in ("infer", *STAGES)]
    print(f"n of infer, pages, bbox, facts, answer (released): {blocks}")
    print("official summary printed by `scanrag score`:", "DocScope official summary" in printed)
    print("paper profile on the same infer.jsonl (import --profile paper, headline and n):")
    for name, metric in paper.items():
        value = "—" if metric["value"] is None else f"{metric['value']:.3f}"
        print(f"  {name}: {value} (n={metric['n']})")
    return 0 if not diffs else 1


if __name__ == "__main__":
    sys.exit(main())
