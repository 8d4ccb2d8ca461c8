"""The protocol's JSON Schema and TypeScript declarations, generated from `wire.py`'s models.

`baton serve --schema` and `--typescript` print them; the copies committed under `schema/` are
compared with a fresh generation by a test (and in CI), so they never drift from the code.
The TypeScript is read off the JSON Schema, so both say the same thing.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from baton_tui.serve import wire

SCHEMA_ID = "https://baton.dev/protocol/1/schema.json"


def _models() -> list[type[BaseModel]]:
    seen: dict[str, type[BaseModel]] = {}
    for method in wire.METHODS.values():
        seen.setdefault(method.params.__name__, method.params)
        seen.setdefault(method.result.__name__, method.result)
    for note in wire.NOTIFICATIONS.values():
        seen.setdefault(note.__name__, note)
    return list(seen.values())


def schema() -> dict[str, Any]:
    """The whole protocol as one JSON Schema document: `$defs` holds every shape, `methods`
    and `notifications` name the shapes each one carries."""
    _, top = models_json_schema([(model, "validation") for model in _models()],
                                ref_template="#/$defs/{model}")
    ref = "#/$defs/{}".format
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "Baton app-server protocol",
        "description": "JSON-RPC 2.0, one object per line. Generated from baton_tui/serve/wire.py.",
        "protocol": wire.PROTOCOL,
        "methods": {name: {"params": {"$ref": ref(m.params.__name__)},
                           "result": {"$ref": ref(m.result.__name__)},
                           "interactive": m.interactive, "description": m.doc}
                    for name, m in wire.METHODS.items()},
        "notifications": {name: {"params": {"$ref": ref(model.__name__)}}
                          for name, model in wire.NOTIFICATIONS.items()},
        "errors": {str(code): name for code, name in wire.ERROR_NAMES.items()},
        "$defs": dict(sorted(top.get("$defs", {}).items())),
    }


def schema_text() -> str:
    return json.dumps(schema(), indent=2, sort_keys=False) + "\n"


# TypeScript -----------------------------------------------------------------------------------
def _ts(node: Any) -> str:
    """One JSON Schema node as a TypeScript type."""
    if node is True or node == {}:
        return "unknown"
    if "$ref" in node:
        return str(node["$ref"]).rsplit("/", 1)[-1]
    if "const" in node:
        return json.dumps(node["const"])
    if "enum" in node:
        return " | ".join(json.dumps(value) for value in node["enum"])
    for key in ("anyOf", "oneOf"):
        if key in node:
            return " | ".join(dict.fromkeys(_ts(part) for part in node[key]))
    kind = node.get("type")
    if isinstance(kind, list):
        return " | ".join(_ts({**node, "type": one}) for one in kind)
    if kind == "array":
        item = _ts(node.get("items", {}))
        return f"({item})[]" if "|" in item else f"{item}[]"
    if kind == "object":
        if "properties" in node:
            return _object(node, "")
        extra = node.get("additionalProperties", True)
        return f"Record<string, {_ts(extra)}>"
    return {"string": "string", "integer": "number", "number": "number", "boolean": "boolean",
            "null": "null"}.get(str(kind), "unknown")


def _doc(node: Any, indent: str) -> str:
    text = node.get("description") if isinstance(node, dict) else None
    if not text:
        return ""
    lines = str(text).splitlines()
    return indent + "/** " + f"\n{indent} * ".join(lines) + " */\n"


def _object(node: dict[str, Any], indent: str) -> str:
    required = set(node.get("required", []))
    inner = indent + "  "
    body = "".join(
        f"{_doc(prop, inner)}{inner}{name}{'' if name in required else '?'}: {_ts(prop)};\n"
        for name, prop in node.get("properties", {}).items())
    if node.get("additionalProperties") is True:
        body += f"{inner}[key: string]: unknown;\n"
    return "{\n" + body + indent + "}"


def typescript() -> str:
    """TypeScript declarations for every shape, the method and notification maps."""
    doc = schema()
    out = ["// Generated from baton_tui/serve/wire.py by `baton serve --typescript`. Do not edit.",
           f"// Baton app-server protocol {wire.PROTOCOL}: JSON-RPC 2.0, one object per line.", "",
           f"export type ProtocolVersion = {wire.PROTOCOL};", ""]
    for name, node in doc["$defs"].items():
        if node.get("description"):
            out.append(_doc(node, "").rstrip("\n"))
        if node.get("type") == "object" and "properties" in node:
            out.append(f"export interface {name} {_object(node, '')}")
        else:
            out.append(f"export type {name} = {_ts(node)};")
        out.append("")
    out.append("/** Every request: its params and result. */")
    out.append("export interface Methods {")
    for name, method in doc["methods"].items():
        only = " (interactive connections only)" if method["interactive"] else ""
        out.append(f"  /** {method['description']}{only} */")
        out.append(f'  "{name}": {{ params: {_ts(method["params"])}; result: {_ts(method["result"])} }};')
    out.append("}")
    out.append("")
    out.append("/** Every notification the server sends: its params. */")
    out.append("export interface Notifications {")
    for name, note in doc["notifications"].items():
        out.append(f'  "{name}": {_ts(note["params"])};')
    out.append("}")
    out.append("")
    out.append("export type MethodName = keyof Methods;")
    out.append("export type NotificationName = keyof Notifications;")
    out.append("export type ErrorCode = " + " | ".join(str(c) for c in wire.ERROR_NAMES) + ";")
    out.append("")
    return "\n".join(line for line in out if line is not None) + "\n"
