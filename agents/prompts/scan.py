"""Prompts of the scan strategy: read every window of pages (map), then merge (reduce).

The map step writes cited notes, or candidate errors for error detection, in the reader's
output format; the reduce step is the notes variant of the reader prompt.
"""

from __future__ import annotations

from functools import cache

from scanrag.agents.prompts.base import Prompt, module_hash
from scanrag.agents.prompts.reader import OUTPUTS, ROLE, TASKS, USER, output_rules, task_rules
from scanrag.tasks import TaskSpec

NOTHING = "NOTHING"

_MAP_NOTES = f"""You see only a few pages of a longer document; other readers cover the rest.
Write down every fact on these pages that could help with the question, each as a short
sentence closed by its citation. Do not answer the question yet. If nothing on these pages
helps, write {NOTHING}."""

_MAP_ISSUES = f"""You see only a few pages of a longer document; other readers cover the rest.
Look for errors on these pages that the question asks about and report each candidate in the
format below, even if you are not certain. If these pages show no error, write {NOTHING}."""

_MAP_JSON_TAIL = f"""Leave "answer" empty ("") unless these pages alone settle the question;
if nothing here helps, return empty lists. ({NOTHING} is not needed in JSON.)"""


@cache
def map_prompt(output: str, task: TaskSpec) -> Prompt:
    """The map step's prompt for an output path and a task (an entry of the task table)."""
    intro = _MAP_ISSUES if task.reports_issues else _MAP_NOTES
    parts = [ROLE, intro, output_rules(output, task)]
    if task.reports_issues or output == "json":
        parts.append(task_rules(output, task))
    if output == "json":
        parts.append(_MAP_JSON_TAIL)
    return Prompt(name=f"scan.map.{output}.{task.name}", system="\n\n".join(parts), user=USER)


PROMPT_HASH = module_hash(*(map_prompt(o, t) for o in OUTPUTS for t in TASKS))
