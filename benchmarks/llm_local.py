"""Speed of the embedded local models (llama-cpp, CPU) through ``LocalRuntime``.

For each model: load time, prompt processing (tokens/s on a ~600-token prompt, 1 output token),
free-text generation and JSON-schema constrained generation (output tokens/s, wall time
including the short prompt). The machine's load average is printed too: on a shared machine
the figures drop sharply when other processes compete for the cores.

Usage: ``python benchmarks/llm_local.py [--models smollm2-135m qwen2.5-0.5b] [--tokens 64]``.
"""

from __future__ import annotations

import argparse
import os
import time

from scanrag.llm.local import RUNTIME, _threads

PASSAGE = (
    "The annual report lists production by site. The northern plant produced 120 tonnes in "
    "2021 and 134 tonnes in 2022; the southern plant produced 88 tonnes in 2021. "
)
SCHEMA = {
    "type": "object",
    "properties": {
        "answer": {"type": "string", "maxLength": 80},
        "pages": {"type": "array", "items": {"type": "integer"}, "maxItems": 4},
    },
    "required": ["answer", "pages"],
}


def _msgs(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def bench(name: str, tokens: int, repeats: int) -> None:
    t0 = time.perf_counter()
    RUNTIME.load(name)
    print(f"{name}: load {time.perf_counter() - t0:.2f}s (threads={_threads()})")
    RUNTIME.generate(name, _msgs("Hello"), max_tokens=4)  # warm-up

    long_prompt = _msgs(PASSAGE * 20 + "\nSummarise in one word.")
    t0 = time.perf_counter()
    out = RUNTIME.generate(name, long_prompt, max_tokens=1)
    dt = time.perf_counter() - t0
    print(
        f"{name}: prompt {out.prompt_tokens} tok in {dt:.2f}s = {out.prompt_tokens / dt:.1f} tok/s"
    )

    question = PASSAGE + "\nPage 4. How much did the northern plant produce in 2021? Explain."
    for label, fmt in (
        ("text", None),
        ("json", {"type": "json_schema", "json_schema": {"schema": SCHEMA}}),
    ):
        rates = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            out = RUNTIME.generate(name, _msgs(question), max_tokens=tokens, response_format=fmt)
            dt = time.perf_counter() - t0
            rates.append(out.completion_tokens / dt)
        best = max(rates)
        median = sorted(rates)[len(rates) // 2]
        print(
            f"{name}: {label} {out.completion_tokens} tok, "
            f"median {median:.1f} tok/s, best {best:.1f} tok/s"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["smollm2-135m", "qwen2.5-0.5b"])
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for name in args.models:
        bench(name, args.tokens, args.repeats)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
