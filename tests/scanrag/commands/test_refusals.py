"""``scanrag run`` refuses a run that cannot succeed: exit code 2, no run folder, and every
problem named under its config key with the rule it breaks, all in one message."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from scanrag.cli import main

FAKES = Path(__file__).resolve().parents[1] / "runner"
sys.path.insert(0, str(FAKES))
import runner_fakes as rf  # noqa: E402

Edit = Callable[[dict[str, Any], Path], None]


@pytest.fixture(autouse=True)
def _fake_models_registered() -> None:
    rf.register_models()


def _reader(model: str) -> Edit:
    def edit(config: dict[str, Any], root: Path) -> None:
        config["models"]["agents"]["reader"] = model

    return edit


def _per_provider(config: dict[str, Any], root: Path) -> None:
    config["runner"]["per_provider"] = {"opneai": 2}


def _topk(params: dict[str, Any], label: str = "topk") -> Edit:
    def edit(config: dict[str, Any], root: Path) -> None:
        strategy = {"name": "topk_rag", "label": label, "retriever": "overlap", "params": params}
        config["strategies"].append(strategy)

    return edit


def _rows(root: Path, name: str, text: str, **spec: Any) -> dict[str, Any]:
    path = root / f"{name}.jsonl"
    path.write_text(text, encoding="utf-8")
    return {"name": name, "path": str(path), "pdf_dir": str(root / "pdfs"), **spec}


def _good(root: Path) -> str:
    return (root / "questions.jsonl").read_text(encoding="utf-8")


def _dataset(make: Callable[[Path], dict[str, Any]]) -> Edit:
    def edit(config: dict[str, Any], root: Path) -> None:
        config["datasets"] = [make(root)]

    return edit


def _missing_pdfs(root: Path) -> dict[str, Any]:
    text = _good(root)
    for d in range(3):
        text = text.replace(f'"doc{d}.pdf"', f'"gone{d}.pdf"')
    return _rows(root, "no_pdfs", text)


def _without_pdf_dir(root: Path) -> dict[str, Any]:
    folder = root / "data" / "questions"  # no pdfs/ beside it or one level up
    folder.mkdir(parents=True)
    spec = _rows(folder, "toy", _good(root))
    del spec["pdf_dir"]
    return spec


TOPK_ACCEPTED = (
    "accepted: k, order, output, modality, page_cap, max_images, max_chars_per_page, "
    "max_tokens, context_tokens, block_boxes, temperature"
)

CASES: dict[str, tuple[Edit, list[str]]] = {
    "unknown provider": (
        _reader("nosuchprovider/x"),
        [
            "models.agents.reader: nosuchprovider/x: unknown provider 'nosuchprovider' (the "
            "part before '/'); use one of litellm's providers"
        ],
    ),
    "unknown local model": (
        _reader("local/qwen-7b"),
        [
            "models.agents.reader: local/qwen-7b: unknown local model; known local models: "
            "local/qwen2.5-0.5b, local/smollm2-135m"
        ],
    ),
    "unregistered scripted model": (
        _reader("scripted/nobody"),
        [
            "models.agents.reader: scripted/nobody: no scripted model 'nobody' is registered "
            "(registered: fake-echo, fake-judge)"
        ],
    ),
    "per_provider typo": (
        _per_provider,
        ["runner.per_provider.opneai: unknown provider 'opneai' (did you mean 'openai'?)"],
    ),
    "k is not a number": (
        _topk({"k": "five"}),
        ["strategies.2.params.k: Input should be a valid integer, got 'five'"],
    ),
    "k out of range": (_topk({"k": 0}), ["strategies.2.params.k: must be >= 1, got 0"]),
    "strategy parameter typo": (
        _topk({"kk": 3}),
        [f"strategies.2.params: got an unexpected keyword argument 'kk'; {TOPK_ACCEPTED}"],
    ),
    "empty dataset": (
        _dataset(lambda root: _rows(root, "empty", "")),
        ["datasets.0.path: ", "empty.jsonl holds no rows"],
    ),
    "blank lines": (
        _dataset(lambda root: _rows(root, "blank", "\n  \n\n")),
        ["datasets.0.path: ", "blank.jsonl holds no rows"],
    ),
    "every row invalid": (
        _dataset(lambda root: _rows(root, "bad", json.dumps({"id": "x", "doc": "doc0.pdf"}))),
        ["datasets.0.loader: loader 'generic' dropped every one of the 1 rows"],
    ),
    "ids match nothing": (
        _dataset(lambda root: _rows(root, "toy", _good(root), ids=["nope"])),
        ["datasets.0.ids: 1 of the ids match no sample: 'nope'"],
    ),
    "wrong loader": (
        _dataset(lambda root: _rows(root, "toy", _good(root), loader="mmlongbench")),
        ["datasets.0.loader: loader 'mmlongbench' dropped every one of the 12 rows"],
    ),
    "every PDF missing": (
        _dataset(_missing_pdfs),
        ["datasets.0.pdf_dir: none of the 12 samples can run (missing PDF 'gone"],
    ),
    "pdf_dir omitted": (
        _dataset(_without_pdf_dir),
        [
            "datasets.0.pdf_dir: none of the 12 samples can run (missing PDF 'doc",
            "; pdf_dir is not set, so the PDFs were looked for in ",
            "set pdf_dir to the folder that holds them",
        ],
    ),
}


def _write(root: Path, *edits: Edit) -> Path:
    config = rf.make_config(root)
    for edit in edits:
        edit(config, root)
    path = root / "exp.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _refused(err: str, root: Path, expected: list[str]) -> None:
    assert err.startswith("error: the run cannot start:\n"), err
    for message in expected:
        assert message in err, (message, err)
    assert "Traceback" not in err
    assert not (root / "runs").exists()


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_refusal_exits_2_before_the_run_folder(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit, expected = CASES[case]
    path = _write(tmp_path, edit)
    assert main(["run", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    _refused(err, tmp_path, expected)
    assert len(err.strip().splitlines()) == 2  # the heading and the one problem


def test_a_bad_value_given_with_set_is_refused_like_one_in_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path)
    assert main(["run", str(path), "--set", "strategies.0.params.k=five"]) == 2
    _refused(
        capsys.readouterr().err,
        tmp_path,
        ["strategies.0.params.k: Input should be a valid integer, got 'five'"],
    )


def test_every_problem_of_every_kind_comes_in_one_refusal(tmp_path: Path) -> None:
    """Through the CLI in a fresh process: model, strategy, provider-limit and dataset problems
    together, each under its key, with one exit code."""

    def models(config: dict[str, Any], root: Path) -> None:
        config["models"]["agents"] = {
            "reader": "nosuchprovider/x",
            "planner": "local/qwen-7b",
            "assessor": "scripted/nobody",
        }

    def datasets(config: dict[str, Any], root: Path) -> None:
        good = _good(root)
        config["datasets"] = [
            _rows(root, "empty", ""),
            _rows(root, "blank", "\n  \n\n"),
            _rows(root, "bad", json.dumps({"id": "x", "doc": "doc0.pdf"})),
            _rows(root, "toy", good, ids=["nope"]),
            _rows(root, "wrong", good, loader="mmlongbench"),
            _missing_pdfs(root),
        ]

    strategies = [_topk({"k": "five"}, "a"), _topk({"k": 0}, "b"), _topk({"kk": 3}, "c")]
    path = _write(tmp_path, models, *strategies, _per_provider, datasets)
    cmd = [sys.executable, "-m", "scanrag.cli", "run", str(path)]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(FAKES), env.get("PYTHONPATH")) if p)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    expected = [
        "datasets.0.path: ",
        "datasets.1.path: ",
        "datasets.2.loader: loader 'generic' dropped every one of the 1 rows",
        "datasets.3.ids: 1 of the ids match no sample: 'nope'",
        "datasets.4.loader: loader 'mmlongbench' dropped every one of the 12 rows",
        "datasets.5.pdf_dir: none of the 12 samples can run (missing PDF 'gone",
        "strategies.2.params.k: Input should be a valid integer, got 'five'",
        "strategies.3.params.k: must be >= 1, got 0",
        f"strategies.4.params: got an unexpected keyword argument 'kk'; {TOPK_ACCEPTED}",
        "models.agents.assessor: scripted/nobody: no scripted model 'nobody' is registered",
        "models.agents.planner: local/qwen-7b: unknown local model",
        "models.agents.reader: nosuchprovider/x: unknown provider 'nosuchprovider'",
        "runner.per_provider.opneai: unknown provider 'opneai' (did you mean 'openai'?)",
    ]
    _refused(done.stderr, tmp_path, expected)
    problems = done.stderr.strip().splitlines()[1:]
    assert [line.split(": ")[0].strip() for line in problems] == [
        m.split(": ")[0] for m in expected
    ]
