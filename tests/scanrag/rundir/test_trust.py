"""The run folder's files are checked against the manifest before they are believed (issue
31.2), and a config rewritten on resume never leaves a folder that fails the check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from scanrag.config import config_from_dict
from scanrag.hashing import stable_hash
from scanrag.rundir import RunDir, folder
from scanrag.rundir.trust import RunFileError

CONFIG = {
    "name": "t",
    "datasets": [{"synthetic": {}}],
    "strategies": [{"name": "full_doc"}],
    "runner": {"llm": {"max_retries": 2}},
}


def _run(tmp_path: Path, **sections: object) -> tuple[RunDir, dict]:
    run = RunDir.create(tmp_path, "t")
    config = config_from_dict({**CONFIG, **sections})
    run.write_config(config)
    (run.path / "samples.jsonl").write_text('{"id": "a", "doc": "d.pdf", "question": "q?"}\n')
    (run.path / "datasets.json").write_text("[]")
    manifest = {"config_hash": run.recorded_config_hash(), "files": run.file_digests()}
    run.write_json(RunDir.MANIFEST, manifest)
    return run, manifest


def test_a_sound_folder_opens_and_its_config_hash_is_the_old_one(tmp_path: Path) -> None:
    """Without secrets the hash equals what older versions recorded (the config's dump), so
    their runs open."""
    run, _ = _run(tmp_path)
    RunDir.open(run.path)
    config = config_from_dict(CONFIG)
    assert run.recorded_config_hash() == stable_hash(config.model_dump(mode="json"))


@pytest.mark.parametrize(
    ("name", "edit", "message"),
    [
        (
            "config.resolved.yaml",
            lambda t: t.replace("max_retries: 2", "max_retries: 3"),
            "config_hash",
        ),
        ("config.resolved.yaml", lambda t: t + "\n: [", "is not readable YAML ("),
        ("config.resolved.yaml", lambda t: "- a list\n", "does not hold a YAML mapping"),
        ("samples.jsonl", lambda t: "", "does not match the run's manifest (sha256 "),
        ("datasets.json", lambda t: "[{}]", "does not match the run's manifest (sha256 "),
    ],
)
def test_an_edited_file_is_named(tmp_path: Path, name: str, edit, message: str) -> None:
    run, _ = _run(tmp_path)
    path = run.file(name)
    path.write_text(edit(path.read_text()))
    with pytest.raises(RunFileError) as caught:
        RunDir.open(run.path)
    assert str(path) in str(caught.value) and message in str(caught.value)
    assert "edited or damaged since the run wrote it" in str(caught.value)
    RunDir.open(run.path, verify=False)  # a caller may still look without believing


def test_a_missing_recorded_file_is_named(tmp_path: Path) -> None:
    run, _ = _run(tmp_path)
    run.file("datasets.json").unlink()
    with pytest.raises(RunFileError, match="cannot read .*datasets.json"):
        run.verify()


def test_a_manifest_that_records_nothing_checks_nothing(tmp_path: Path) -> None:
    """An older version's folder, an import, a run killed before its manifest."""
    run, _ = _run(tmp_path)
    run.file("config.resolved.yaml").write_text("name: edited\n")
    run.write_json(RunDir.MANIFEST, {"name": "t"})
    RunDir.open(run.path)
    run.file(RunDir.MANIFEST).unlink()
    RunDir.open(run.path)


def test_an_unreadable_manifest_is_named(tmp_path: Path) -> None:
    run, _ = _run(tmp_path)
    run.file(RunDir.MANIFEST).write_text('{"config_hash": ')
    with pytest.raises(RuntimeError, match="manifest.json is not readable JSON"):
        RunDir.open(run.path)


def test_a_rewritten_config_verifies_at_every_step(tmp_path: Path, monkeypatch) -> None:
    """``write_config`` on a run with a manifest: killed after announcing the new hash or
    after replacing the file, the folder still opens; afterwards the manifest holds the new
    hash alone."""
    run, manifest = _run(tmp_path)
    old = manifest["config_hash"]
    changed = config_from_dict({**CONFIG, "runner": {"llm": {"max_retries": 5}}})
    states: list[tuple[dict, str]] = []
    real = run.write_json

    def watch(name: str, data: object) -> None:
        real(name, data)
        states.append(
            (json.loads(run.file(RunDir.MANIFEST).read_text()), run.file(RunDir.CONFIG).read_text())
        )
        RunDir.open(run.path)  # as a resume started now would

    def replace(path: Path, text: str) -> None:
        real_atomic(path, text)
        opened.append(json.loads(run.file(RunDir.MANIFEST).read_text()))
        RunDir.open(run.path)  # the file replaced, the manifest not updated yet

    opened: list[dict] = []
    real_atomic = folder.write_atomic
    monkeypatch.setattr(run, "write_json", watch)
    monkeypatch.setattr(folder, "write_atomic", replace)
    run.write_config(changed)
    assert [m.get("config_hash_next") for m in opened] == [states[0][0]["config_hash_next"]]
    (first, first_text), (last, last_text) = states
    assert first["config_hash"] == old and first["config_hash_next"] != old
    assert "max_retries: 2" in first_text  # the file was not replaced yet
    assert last["config_hash"] == first["config_hash_next"] and "config_hash_next" not in last
    assert "max_retries: 5" in last_text
    RunDir.open(run.path)
    assert yaml.safe_load(run.file(RunDir.CONFIG).read_text())["runner"]["llm"]["max_retries"] == 5
