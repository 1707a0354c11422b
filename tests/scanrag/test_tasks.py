"""The task table: built-ins through entry points, validation, and a new task type added in
one place (plus its prompt and scorer) reaching samples, configs, reader schemas and prompts."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic import ValidationError

from scanrag.config import config_from_dict
from scanrag.registry import TASKS, UnknownNameError
from scanrag.schemas import Sample, TaskType
from scanrag.tasks import (
    BUILTIN_TASKS,
    TaskSpec,
    default_scorer_names,
    default_scorers,
    task_names,
    task_spec,
    task_spec_or_default,
)

# Instructions of the plugin task below, named by "module:attr" in its entry.
TABLE_CHECK_PROMPT = {
    "citations": "Check every total of the table against its rows.",
    "json": '"answer" says which totals are wrong.',
}
TABLE_CHECK = TaskSpec(
    name="table_check",
    description="a plugin task: are the table's totals right?",
    prompt=f"{__name__}:TABLE_CHECK_PROMPT",
    fields=("answer", "pages"),
    required=("answer",),
    scorers=("answer_rules",),
)


@pytest.fixture
def table_check() -> Iterator[TaskSpec]:
    TASKS.register("table_check")(lambda: TABLE_CHECK)
    yield TABLE_CHECK
    TASKS.unregister("table_check")


def test_builtins_come_from_entry_points_and_match_the_table() -> None:
    assert set(task_names()) >= {t.name for t in BUILTIN_TASKS}
    for spec in BUILTIN_TASKS:
        assert task_spec(spec.name) is spec  # the entry point names the table's object
        assert set(spec.required) <= set(spec.fields)
    assert TaskType is str


def test_unknown_task_types_list_the_known_ones() -> None:
    with pytest.raises(ValidationError, match="task 'poetry' is not one of chain_qa"):
        Sample(id="x", doc_ids=["a.pdf"], question="q?", task="poetry")
    with pytest.raises(UnknownNameError, match="known task types: chain_qa"):
        task_spec("poetry")
    config = {
        "name": "t",
        "datasets": [{"path": "q.jsonl", "tasks": ["qa", "poetry"]}],
        "strategies": [{"name": "full_doc"}],
    }
    with pytest.raises(ValueError, match="task 'poetry' is not one of"):
        config_from_dict(config)


def test_default_scorers_come_from_the_table() -> None:
    assert default_scorers(["error_detection", "nonsense"]) == ["scholscan"]
    assert default_scorer_names(["chain_qa"]) == ["faithfulness", "sinbench"]
    assert "pages" in default_scorer_names(["qa"]) and "scholscan" not in default_scorer_names(
        ["qa"]
    )


def test_a_new_task_type_is_one_table_entry(table_check: TaskSpec) -> None:
    from scanrag.agents.prompts.reader import reader_prompt
    from scanrag.agents.structured import schema_for

    sample = Sample(
        id="t1", doc_ids=["a.pdf"], question="Are the totals right?", task="table_check"
    )
    assert sample.task == "table_check"
    schema = schema_for(task_spec("table_check"))
    assert list(schema["properties"]) == ["answer", "pages"] and schema["required"] == ["answer"]
    citations = reader_prompt("citations", task_spec("table_check"))
    assert citations.name == "reader.citations.table_check"
    assert TABLE_CHECK_PROMPT["citations"] in citations.system
    assert TABLE_CHECK_PROMPT["json"] in reader_prompt("json", task_spec("table_check")).system
    assert default_scorer_names(["table_check"]) == ["answer_rules"]
    assert (
        not task_spec("table_check").reports_issues and task_spec("error_detection").reports_issues
    )


def test_an_item_resolves_its_task_once_and_unknown_tasks_read_as_qa() -> None:
    from unittest import mock

    from scanrag.agents.prompts.reader import reader_prompt
    from scanrag.agents.scope import ItemContext
    from scanrag.llm import ScriptedModel
    from scanrag.protocols import StrategyContext

    # a task type registered where the run was made but not here (its plugin is missing)
    sample = Sample(id="t1", doc_ids=["a.pdf"], question="?").model_copy(
        update={"task": "nonsense"}
    )
    ctx = StrategyContext(llm=ScriptedModel([]), documents={}, models={})
    with mock.patch(
        "scanrag.agents.scope.task_spec_or_default", wraps=task_spec_or_default
    ) as look:
        item = ItemContext.resolve(sample, ctx)
        assert item.task is task_spec("qa") and item.task is item.task
    assert look.call_count == 1
    assert reader_prompt("json", item.task).name == "reader.json.qa"
