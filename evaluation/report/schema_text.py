"""Pydantic JSON schemas as the Markdown tables of ``docs/outputs.md``: one table per model
(field, type, meaning with the default), the models it refers to after it, and plain key
tables (:mod:`scanrag.evaluation.report.outputs_doc` assembles the document)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel


def _ref(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _type(schema: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in schema:
        target = defs.get(_ref(schema["$ref"]), {})
        if "enum" in target:  # enums inline: their values are the type
            return " \\| ".join(json.dumps(v) for v in target["enum"])
        name = _ref(schema["$ref"])
        return f"[{name}](#{name.lower()})"
    if "anyOf" in schema:
        return " \\| ".join(_type(s, defs) for s in schema["anyOf"])
    if "allOf" in schema and len(schema["allOf"]) == 1:
        return _type(schema["allOf"][0], defs)
    if "enum" in schema:
        return " \\| ".join(json.dumps(v) for v in schema["enum"])
    if "const" in schema:
        return json.dumps(schema["const"])
    kind = schema.get("type")
    if kind == "array":
        if "prefixItems" in schema:
            return "[" + ", ".join(_type(s, defs) for s in schema["prefixItems"]) + "]"
        return f"list[{_type(schema.get('items') or {}, defs)}]"
    if kind == "object":
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and extra:
            return f"dict[str, {_type(extra, defs)}]"
        return "object"
    names = {
        "string": "str",
        "integer": "int",
        "number": "float",
        "boolean": "bool",
        "null": "null",
    }
    if isinstance(kind, list):
        return " \\| ".join(names.get(k, str(k)) for k in kind)
    return names.get(str(kind), "any") if kind else "any"


def cell(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())


def _model_table(name: str, schema: dict[str, Any], defs: dict[str, Any]) -> list[str]:
    intro = (schema.get("description") or "").split("\n\n")[0]
    lines = [f"### {name}", ""]
    if intro:
        lines += [cell(intro), ""]
    lines += ["| field | type | meaning |", "|---|---|---|"]
    required = set(schema.get("required") or [])
    for field, prop in (schema.get("properties") or {}).items():
        meaning = prop.get("description") or ""
        if prop.get("readOnly"):
            meaning = "(computed) " + meaning
        if field not in required and "default" in prop and not prop.get("readOnly"):
            default = json.dumps(prop["default"], ensure_ascii=False)
            meaning = (meaning + f" Default: `{default}`.").strip()
        lines.append(f"| `{field}` | {_type(prop, defs)} | {cell(meaning)} |")
    return [*lines, ""]


def model_sections(models: Iterable[type[BaseModel]], seen: set[str]) -> list[str]:
    """One table per model and per model it nests (each once, enums inline)."""
    lines: list[str] = []
    for model in models:
        schema = model.model_json_schema(mode="serialization")
        defs = schema.get("$defs", {})
        for name, sub in [(model.__name__, schema), *sorted(defs.items())]:
            if name in seen or "properties" not in sub:
                continue
            seen.add(name)
            lines += _model_table(name, sub, defs)
    return lines


def keys_table(title: str, keys: dict[str, str]) -> list[str]:
    lines = [f"### {title}", "", "| key | meaning |", "|---|---|"]
    lines += [f"| `{k}` | {cell(v)} |" for k, v in keys.items()]
    return [*lines, ""]
