"""Same items, same model: in process (``local/smollm2-135m``) vs llama.cpp's OpenAI server.

    .venv/bin/python benchmarks/server_parity.py [--config configs/quickstart.yaml]
        [--model smollm2-135m] [--repeat-penalty 1.0] [--output-mode json_object] [--limit N]
        [--set KEY.PATH=VALUE ...]

Starts ``python -m llama_cpp.server`` (llama-cpp-python's ``[server]`` extra) on 127.0.0.1
with the embedded GGUF weights, runs the config twice without scoring — reader in process,
then reader on the server through a model entry (``api_base``, ``extra_body.repeat_penalty``,
``output_mode``) — and compares the items one by one (raw reply, answer, pages, number of
model calls). Prints ``identical=n/N`` last.
The server's own default ``repeat_penalty`` is 1.1 and the in-process default 1.0: pass
``--repeat-penalty 1.1`` to see what that difference alone does.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def llama_server(
    model: str = "smollm2-135m",
    threads: int | None = None,
    startup_s: float = 180.0,
    n_ctx: int | None = None,
    attempts: int = 1,
    warm_up_s: float | None = None,
) -> Iterator[str]:
    """llama-cpp-python's OpenAI server for embedded model ``model`` on a free loopback port;
    yields its ``api_base`` and stops it on exit. Its model is named ``model`` on the wire;
    ``n_ctx`` sets its context window (default: the model's own). A start that fails (the
    server exits, or does not answer within ``startup_s``) is tried again on a new port, up to
    ``attempts`` times; with ``warm_up_s`` a first call (one token) is made and waited for
    that long, so the caller's first call finds the server warm."""
    failures: list[str] = []
    for _ in range(attempts):
        with _started(model, threads, startup_s, n_ctx) as (api_base, problem):
            if problem is None and warm_up_s is not None:
                problem = warm_up(api_base, model, warm_up_s)
            if problem is None:
                yield api_base
                return
            failures.append(problem)
    raise RuntimeError(f"llama_cpp.server did not start in {attempts} attempt(s): {failures}")


@contextlib.contextmanager
def _started(
    model: str, threads: int | None, startup_s: float, n_ctx: int | None
) -> Iterator[tuple[str, str | None]]:
    """One server process: ``(api_base, None)`` once it answers, ``(api_base, why not)``
    when it does not; stopped on exit either way."""
    from scanrag.llm.local import _threads
    from scanrag.llm.local_models import get_local_spec

    spec = get_local_spec(model)
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(spec.locate()),
        "--model_alias",
        model,
        "--chat_format",
        spec.chat_format,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(n_ctx or spec.n_ctx),
        "--n_threads",
        str(threads or _threads()),
        "--verbose",
        "False",
    ]
    env = {**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}
    api_base = f"http://127.0.0.1:{port}/v1"
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            try:
                _wait_ready(api_base, process, log, startup_s)
            except RuntimeError as exc:
                yield api_base, str(exc)
            else:
                yield api_base, None
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=15)


def warm_up(api_base: str, model: str, timeout_s: float) -> str | None:
    """One call of one token to the server, waited for ``timeout_s``; why it failed, or
    ``None``."""
    body = {"model": model, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1}
    request = urllib.request.Request(
        f"{api_base}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as reply:
            reply.read()
    except OSError as exc:
        return f"the first call failed after up to {timeout_s:g} s: {exc}"
    return None


def _wait_ready(api_base: str, process: subprocess.Popen[bytes], log: Any, limit: float) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log.seek(0)
            tail = log.read().decode(errors="replace")[-2000:]
            raise RuntimeError(f"llama_cpp.server exited with {process.returncode}:\n{tail}")
        try:
            with urllib.request.urlopen(f"{api_base}/models", timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"llama_cpp.server did not answer on {api_base} within {limit:g} s")


def server_entry(
    api_base: str, model: str, repeat_penalty: float | None, output_mode: str
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "model": f"openai/{model}",
        "name": "reader-server",
        "api_base": api_base,
        "output_mode": output_mode,
    }
    if repeat_penalty is not None:
        entry["extra_body"] = {"repeat_penalty": repeat_penalty}
    return entry


def run_replies(
    config_path: Path, reader: Any, workdir: Path, limit: int | None, extra: list[str] | None = None
) -> dict:
    """(run_key, sample_id) → (status, raw reply, answer, pages, model calls) of a run of
    ``config_path`` with ``reader``."""
    from scanrag.rundir import JsonlLog
    from scanrag.runner import start_run

    overrides = [
        f"models.agents.reader={json.dumps(reader)}",
        f"runner.runs_dir={workdir / 'runs'}",
        "runner.llm.cache=false",
        "runner.progress=false",
        "scoring.enabled=false",
        *(extra or []),
    ]
    result = start_run(config_path, overrides=overrides, limit=limit, log=None)
    rows = JsonlLog(result.run_dir / "trajectories.jsonl").rows()
    return {
        (r["run_key"], r["sample_id"]): (
            r["status"],
            r.get("raw_output"),
            r.get("answer"),
            r.get("pages"),
            sum(int(u.get("calls", 0)) for u in (r.get("usage") or {}).values()),
        )
        for r in rows
    }


def compare(local: dict, server: dict) -> tuple[int, int, list[str]]:
    keys = sorted(set(local) | set(server))
    same = [k for k in keys if k in local and k in server and local[k][1:] == server[k][1:]]
    lines = []
    for key in keys:
        mark = "=" if key in same else "≠"
        here = local.get(key, ("missing", None, None, None, 0))
        there = server.get(key, ("missing", None, None, None, 0))
        lines.append(
            f"{mark} {key[0]} {key[1]}: in-process {here[0]}, server {there[0]}, "
            f"answer {str(here[2])[:60]!r}"
        )
        if key not in same:
            lines.append(f"    in-process: {str(here[1])[:160]!r}")
            lines.append(f"    server:     {str(there[1])[:160]!r}")
    return len(same), len(keys), lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, default=REPO / "configs" / "quickstart.yaml")
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--repeat-penalty", type=float, default=1.0)
    parser.add_argument("--output-mode", default="json_object")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="K=V")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        started = time.perf_counter()
        local = run_replies(
            args.config, f"local/{args.model}", work / "local", args.limit, args.overrides
        )
        local_s = time.perf_counter() - started
        with llama_server(args.model) as api_base:
            entry = server_entry(api_base, args.model, args.repeat_penalty, args.output_mode)
            started = time.perf_counter()
            server = run_replies(args.config, entry, work / "server", args.limit, args.overrides)
            server_s = time.perf_counter() - started
    same, total, lines = compare(local, server)
    print("\n".join(lines))
    print(f"in-process run {local_s:.1f}s, server run {server_s:.1f}s")
    print(
        f"model={args.model} repeat_penalty={args.repeat_penalty} "
        f"output_mode={args.output_mode} identical={same}/{total}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
