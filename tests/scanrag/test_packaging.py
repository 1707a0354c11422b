"""Installed, ScanRAG is the one ``scanrag`` namespace: the card's top-level folders (agents/,
graphs/, ...) become ``scanrag.agents``, ``scanrag.graphs``, ... (pyproject.toml's
``[tool.setuptools.package-dir]``), and a wheel's top level holds ``scanrag`` alone."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SETUPTOOLS = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
    "setuptools"
]


def _folder(package: str) -> Path:
    """Where a package's files are in the checkout, by the package-dir mapping."""
    parts = package.split(".")
    for cut in range(len(parts), 0, -1):
        mapped = SETUPTOOLS["package-dir"].get(".".join(parts[:cut]))
        if mapped is not None:
            return REPO / mapped / Path(*parts[cut:])
    return REPO / Path(*parts)


DATA_ONLY = {"scanrag.configs": "configs"}  # packages of data files alone (no module)


def test_every_package_folder_is_listed_and_every_listed_package_exists() -> None:
    roots = ["scanrag", *(p for p in SETUPTOOLS["package-dir"] if p not in DATA_ONLY)]
    on_disk = {
        ".".join((root, *init.parent.relative_to(_folder(root)).parts))
        for root in roots
        for init in _folder(root).rglob("__init__.py")
    }
    assert set(SETUPTOOLS["packages"]) == on_disk | set(DATA_ONLY)
    for package, folder in DATA_ONLY.items():
        assert SETUPTOOLS["package-dir"][package] == folder
        assert not list((REPO / folder).rglob("*.py")) and list((REPO / folder).iterdir())


def test_every_mapped_folder_is_a_top_level_folder_of_the_card() -> None:
    mapping = SETUPTOOLS["package-dir"]
    assert all(name == f"scanrag.{folder}" for name, folder in mapping.items())
    assert set(mapping.values()) == {
        "agents", "graphs", "indexes", "retrievers", "evaluation", "loaders", "synth",
        "configs",
    }  # fmt: skip


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from a copy of the checkout's own files (a stale ``build/`` of the
    checkout must not leak modules that are gone into it)."""
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("wheel")
    tracked = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        check=True, capture_output=True, cwd=REPO,
    ).stdout.decode().split("\0")  # fmt: skip
    for name in filter(None, tracked):
        if (REPO / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, source / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(out), str(source)],
        check=True, capture_output=True, cwd=out,
    )  # fmt: skip
    (built,) = out.glob("scanrag-*.whl")
    return built


def test_the_wheel_holds_scanrag_alone_at_its_top_level(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names} == {
        "scanrag",
        wheel.name.split("-py3")[0] + ".dist-info",
    }
    for module in ("agents/reader.py", "graphs/topk_rag.py", "evaluation/docscope/pages.py"):
        assert f"scanrag/{module}" in names
    assert "scanrag/configs/quickstart.yaml" in names  # what `scanrag demo` runs
    sources = {p.relative_to(REPO) for p in REPO.glob("*/**/*.py")}
    wanted = {p for p in sources if p.parts[0] in {"scanrag", *SETUPTOOLS["package-dir"].values()}}
    installed = {n.removeprefix("scanrag/") for n in names if n.endswith(".py")}
    assert {str(p).removeprefix("scanrag/") for p in wanted} == installed


def test_entry_points_name_only_the_scanrag_namespace(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        (entry,) = [n for n in archive.namelist() if n.endswith("entry_points.txt")]
        lines = archive.read(entry).decode().splitlines()
    targets = [line.split("=", 1)[1].strip() for line in lines if "=" in line]
    assert targets and all(t.startswith("scanrag.") for t in targets), targets


def test_a_fresh_venv_with_only_scanrag_has_no_generic_top_level_names(
    wheel: Path, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--no-index", "-q", str(wheel)],
        check=True, capture_output=True,
    )  # fmt: skip
    code = (
        "import importlib.util as u\n"
        "for name in ('agents', 'graphs', 'indexes', 'retrievers', 'evaluation', 'loaders',"
        " 'synth'):\n"
        "    assert u.find_spec(name) is None, name\n"
        "    print(name, 'absent')\n"
        "from scanrag.commands.demo import default_config\n"
        "print(default_config())\n"
        "root = u.find_spec('scanrag').submodule_search_locations[0]\n"
        "print(root)\n"
    )
    done = subprocess.run(
        [str(python), "-I", "-c", code], capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    root = Path(done.stdout.splitlines()[-1])
    assert root.is_relative_to(venv)
    assert Path(done.stdout.splitlines()[-2]) == root / "configs" / "quickstart.yaml"
    assert (root / "agents" / "__init__.py").is_file()
    assert (root / "evaluation" / "docscope" / "pages.py").is_file()
    shutil.rmtree(venv)
