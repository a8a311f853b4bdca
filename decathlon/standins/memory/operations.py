"""The nine tools, step for step as the reference's knowledge-graph manager performs them.

Each takes the call's arguments object and returns the result text. The order of reads,
checks and short-circuits follows the reference, because with unvalidated input that order
decides which error (if any) the client gets: a missing ``entityNames`` fails only once there
is an entity to test against it, ``add_observations`` fails on the first unknown entity before
anything is saved, and so on. Every change is a load-modify-save of the whole file.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .jsvalues import (
    UNDEFINED,
    JsError,
    get,
    includes,
    require_method,
    same_value_key,
    strict_equals,
    to_lower_case,
    to_string,
)
from .storage import Graph, MemoryFile
from .stringify import stringify

Arguments = dict[str, Any]
INDENT = "  "


def _find_entity(graph: Graph, name_of: Callable[[], Any]) -> Any:
    # graph.entities.find(e => e.name === <expr>): <expr> is evaluated once per entity tried.
    for entity in graph.entities:
        if strict_equals(get(entity, "name"), name_of()):
            return entity
    return UNDEFINED


def create_entities(store: MemoryFile, args: Arguments) -> str:
    graph = store.load()
    entities = get(args, "entities")
    require_method(entities, "filter", "entities")
    new_entities = [
        entity
        for entity in entities
        if not any(strict_equals(get(existing, "name"), get(entity, "name")) for existing in graph.entities)
    ]
    graph.entities.extend(new_entities)
    store.save(graph)
    return stringify(new_entities, INDENT)


def _same_relation(left: Any, right: Any) -> bool:
    return (
        strict_equals(get(left, "from"), get(right, "from"))
        and strict_equals(get(left, "to"), get(right, "to"))
        and strict_equals(get(left, "relationType"), get(right, "relationType"))
    )


def create_relations(store: MemoryFile, args: Arguments) -> str:
    graph = store.load()
    relations = get(args, "relations")
    require_method(relations, "filter", "relations")
    new_relations = [
        relation
        for relation in relations
        if not any(_same_relation(existing, relation) for existing in graph.relations)
    ]
    graph.relations.extend(new_relations)
    store.save(graph)
    return stringify(new_relations, INDENT)


def add_observations(store: MemoryFile, args: Arguments) -> str:
    graph = store.load()
    observations = get(args, "observations")
    require_method(observations, "map", "observations")
    results: list[dict[str, Any]] = []
    for request in observations:
        entity = _find_entity(graph, lambda: get(request, "entityName"))
        if entity is UNDEFINED:
            raise JsError(f"Entity with name {to_string(get(request, 'entityName'))} not found")
        contents = get(request, "contents")
        require_method(contents, "filter", "o.contents")
        added = [
            content
            for content in contents
            if not includes(get(entity, "observations"), content, "entity.observations")
        ]
        existing = get(entity, "observations")
        require_method(existing, "push", "entity.observations")
        existing.extend(added)  # later requests for the same entity see these
        results.append({"entityName": get(request, "entityName"), "addedObservations": added})
    store.save(graph)  # reached only when every request succeeded
    return stringify(results, INDENT)


def delete_entities(store: MemoryFile, args: Arguments) -> str:
    graph = store.load()
    names = get(args, "entityNames")
    graph.entities = [entity for entity in graph.entities if not includes(names, get(entity, "name"), "entityNames")]
    graph.relations = [
        relation
        for relation in graph.relations
        if not includes(names, get(relation, "from"), "entityNames")
        and not includes(names, get(relation, "to"), "entityNames")
    ]
    store.save(graph)
    return "Entities deleted successfully"


def delete_observations(store: MemoryFile, args: Arguments) -> str:
    graph = store.load()
    deletions = get(args, "deletions")
    require_method(deletions, "forEach", "deletions")
    for deletion in deletions:
        entity = _find_entity(graph, lambda: get(deletion, "entityName"))
        if entity is UNDEFINED:
            continue
        current = get(entity, "observations")
        require_method(current, "filter", "entity.observations")
        entity["observations"] = [
            observation
            for observation in current
            if not includes(get(deletion, "observations"), observation, "d.observations")
        ]
    store.save(graph)
    return "Observations deleted successfully"


def delete_relations(store: MemoryFile, args: Arguments) -> str:
    graph = store.load()
    relations = get(args, "relations")

    def listed(relation: Any) -> bool:
        require_method(relations, "some", "relations")
        return any(_same_relation(relation, doomed) for doomed in relations)

    graph.relations = [relation for relation in graph.relations if not listed(relation)]
    store.save(graph)
    return "Relations deleted successfully"


def read_graph(store: MemoryFile, args: Arguments) -> str:
    return stringify(store.load().as_object(), INDENT)


def _subgraph(graph: Graph, entities: list[Any]) -> str:
    # Relations are kept only when both ends are among the selected entities' names.
    names = {same_value_key(get(entity, "name")) for entity in entities}
    relations = [
        relation
        for relation in graph.relations
        if same_value_key(get(relation, "from")) in names and same_value_key(get(relation, "to")) in names
    ]
    return stringify(Graph(entities, relations).as_object(), INDENT)


def _contains_query(text: Any, expression: str, query: Any) -> bool:
    # <expression>.toLowerCase().includes(query.toLowerCase()): the receiver is lowered first.
    haystack = to_lower_case(text, expression)
    return to_lower_case(query, "query") in haystack


def _matches(entity: Any, query: Any) -> bool:
    if _contains_query(get(entity, "name"), "e.name", query):
        return True
    if _contains_query(get(entity, "entityType"), "e.entityType", query):
        return True
    observations = get(entity, "observations")
    require_method(observations, "some", "e.observations")
    return any(_contains_query(item, "o", query) for item in observations)


def search_nodes(store: MemoryFile, args: Arguments) -> str:
    graph = store.load()
    query = get(args, "query")
    return _subgraph(graph, [entity for entity in graph.entities if _matches(entity, query)])


def open_nodes(store: MemoryFile, args: Arguments) -> str:
    graph = store.load()
    names = get(args, "names")
    return _subgraph(graph, [entity for entity in graph.entities if includes(names, get(entity, "name"), "names")])


OPERATIONS: dict[str, Callable[[MemoryFile, Arguments], str]] = {
    "create_entities": create_entities,
    "create_relations": create_relations,
    "add_observations": add_observations,
    "delete_entities": delete_entities,
    "delete_observations": delete_observations,
    "delete_relations": delete_relations,
    "read_graph": read_graph,
    "search_nodes": search_nodes,
    "open_nodes": open_nodes,
}
