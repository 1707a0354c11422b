"""``benchmarks/structure.py``: the import graph has no cycle and no back arrow, and the two
traced walks (benchmarks/structure_walk.py defines stops, files and returns) stay within their
ceilings. They are structural counts of a scripted run, not timings: the same code gives the
same figures on any machine.

The ceilings are the figures this checkout reaches; the issue's targets (read path <= 40 stops
in <= 12 files, config walk <= 30 stops in <= 15 files) are printed by the script beside them.
A change that lengthens a walk fails here: shorten it, or raise the ceiling on purpose.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
READ_CEILING = (100, 25, 74)  # stops, files, returns
CONFIG_CEILING = (28, 10, 17)  # names resolved once, by preflight (was 55, 16, 39)


@pytest.fixture(scope="module")
def structure() -> ModuleType:
    from tests.conftest import load_bench_script

    return load_bench_script("structure")


@pytest.fixture(scope="module")
def walks(structure: ModuleType) -> ModuleType:
    from tests.conftest import load_bench_script

    return load_bench_script("structure_walk")


def test_no_cycle_and_no_back_arrow(structure: ModuleType) -> None:
    graph = structure.import_graph(REPO)
    assert structure.cycles(graph) == []
    assert structure.back_arrows(graph) == []


def _walk_within(structure: ModuleType, walk_of: Any, ceiling: tuple[int, int, int]) -> Any:
    """The walk ``walk_of`` traces through this checkout, checked against ``ceiling``
    (stops, files, returns)."""
    walk = walk_of(list(structure.source_folders(REPO).values()), REPO)
    figures = (len(walk.stops), len(walk.files), walk.returns)
    assert all(f <= c for f, c in zip(figures, ceiling, strict=True)), (figures, ceiling)
    return walk


def test_the_read_path_stays_within_its_ceiling(structure: ModuleType, walks: ModuleType) -> None:
    walk = _walk_within(structure, walks.read_walk, READ_CEILING)
    names = {function for _, function in walk.stops}
    # the stages the walk must pass: planning, rendering, the model, parsing, the trajectory
    assert {
        "plan_read",
        "build_input",
        "ScriptedModel.chat",
        "parse_reply",
        "apply_output",
    } <= names


def test_the_config_walk_stays_within_its_ceiling(structure: ModuleType, walks: ModuleType) -> None:
    walk = _walk_within(structure, walks.config_walk, CONFIG_CEILING)
    assert walk.stops[0] == ("scanrag/runner/__init__.py", "start_run")
    assert ("scanrag/registry.py", "Registry.create") in walk.stops
    # every name is resolved by preflight (and the strategies built beside it): the stages of
    # the run (index, score, summary) build from what preflight bound, asking no registry
    assert not [stop for stop in walk.stops if stop[0] == "scanrag/runner/engine.py"]


def test_returns_count_re_entries_of_files(walks: ModuleType) -> None:
    walk = walks.WalkFigures(
        stops=[("a.py", "f"), ("b.py", "g"), ("a.py", "h")], visits=["a.py", "b.py", "a.py"]
    )
    assert (walk.files, walk.returns, walk.entries()) == (
        ["a.py", "b.py"],
        1,
        {"a.py": 2, "b.py": 1},
    )
