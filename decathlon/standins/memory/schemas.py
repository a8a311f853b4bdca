"""Tool names and input schemas of ``@modelcontextprotocol/server-memory`` 2025.4.25, the version
Toolathlon's lockfile pins: the same names, argument shapes and required fields, so recorded calls
replay unchanged. The descriptions are our own wording of what each tool and field does. The
reference only advertises these schemas; it never checks arguments against them (see operations.py
for what bad arguments lead to).
"""

from __future__ import annotations

from typing import Any

_STRING_ARRAY: dict[str, Any] = {"type": "array", "items": {"type": "string"}}


def _object(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required is not None:
        schema["required"] = required
    return schema


def _relation() -> dict[str, Any]:
    return _object(
        {
            "from": {"type": "string", "description": "Entity the relation goes from"},
            "to": {"type": "string", "description": "Entity the relation goes to"},
            "relationType": {"type": "string", "description": "Kind of relation, in active voice (works_at, knows)"},
        },
        ["from", "to", "relationType"],
    )


TOOL_SPECS: dict[str, tuple[str, dict[str, Any]]] = {
    "create_entities": (
        "Add entities (name, type, observations) to the knowledge graph; names already present are skipped",
        _object(
            {
                "entities": {
                    "type": "array",
                    "items": _object(
                        {
                            "name": {"type": "string", "description": "Unique name of the entity"},
                            "entityType": {"type": "string", "description": "What kind of thing the entity is"},
                            "observations": {
                                **_STRING_ARRAY,
                                "description": "Facts recorded about the entity, one string each",
                            },
                        },
                        ["name", "entityType", "observations"],
                    ),
                },
            },
            ["entities"],
        ),
    ),
    "create_relations": (
        "Add relations between entities of the knowledge graph (phrase each relation in active voice); existing ones are skipped",
        _object({"relations": {"type": "array", "items": _relation()}}, ["relations"]),
    ),
    "add_observations": (
        "Append facts to entities that already exist in the knowledge graph",
        _object(
            {
                "observations": {
                    "type": "array",
                    "items": _object(
                        {
                            "entityName": {
                                "type": "string",
                                "description": "Entity that receives the facts",
                            },
                            "contents": {**_STRING_ARRAY, "description": "Facts to append, one string each"},
                        },
                        ["entityName", "contents"],
                    ),
                },
            },
            ["observations"],
        ),
    ),
    "delete_entities": (
        "Remove entities, and every relation that touches them, from the knowledge graph",
        _object(
            {"entityNames": {**_STRING_ARRAY, "description": "Names of the entities to remove"}},
            ["entityNames"],
        ),
    ),
    "delete_observations": (
        "Remove given facts from entities of the knowledge graph",
        _object(
            {
                "deletions": {
                    "type": "array",
                    "items": _object(
                        {
                            "entityName": {
                                "type": "string",
                                "description": "Entity that holds the facts",
                            },
                            "observations": {**_STRING_ARRAY, "description": "Facts to remove, verbatim"},
                        },
                        ["entityName", "observations"],
                    ),
                },
            },
            ["deletions"],
        ),
    ),
    "delete_relations": (
        "Remove relations from the knowledge graph",
        _object(
            {
                "relations": {
                    "type": "array",
                    "items": _relation(),
                    "description": "Relations to remove",
                },
            },
            ["relations"],
        ),
    ),
    "read_graph": (
        "Return the whole knowledge graph: every entity and relation",
        _object({}),
    ),
    "search_nodes": (
        "Find entities whose name, type or facts contain the query text",
        _object(
            {
                "query": {
                    "type": "string",
                    "description": "Text to look for in entity names, types and facts",
                },
            },
            ["query"],
        ),
    ),
    "open_nodes": (
        "Return the named entities and the relations between them",
        _object(
            {"names": {**_STRING_ARRAY, "description": "Names of the entities to return"}},
            ["names"],
        ),
    ),
}
