"""Result column names as Snowflake gives them: an unaliased expression is named by its own text, upper-cased
outside double quotes (`select count(*)` → `COUNT(*)`, `current_timestamp()` → `CURRENT_TIMESTAMP()`), where
DuckDB would say `count_star()` or `CURRENT_TIMESTAMP`. Task code reads these names (`row['CURRENT_TIMESTAMP()']`
with a DictCursor), so the statement gets explicit quoted aliases before fakesnow sees it.

The aliases are spliced into the original text at the projections' token spans, so nothing else in the statement
is regenerated.
"""
from __future__ import annotations

import re
from typing import Any

from sqlglot import exp  # type: ignore[import-not-found,import-untyped,unused-ignore]
from sqlglot.errors import SqlglotError  # type: ignore[import-not-found,import-untyped,unused-ignore]
from sqlglot.dialects.snowflake import Snowflake  # type: ignore[import-not-found,import-untyped,unused-ignore]
from sqlglot.tokens import TokenType  # type: ignore[import-not-found,import-untyped,unused-ignore]

_DIALECT = Snowflake()
# A one-word expression (CURRENT_DATE, TRUE) already gets that name, and DuckDB would read an alias spelled the
# same as a reference to that alias.
_BARE_WORD = re.compile(r"[A-Z_][A-Z0-9_$]*\Z")

# Tokens that end a SELECT list at paren depth 0.
_LIST_END = frozenset({
    TokenType.FROM, TokenType.WHERE, TokenType.GROUP_BY, TokenType.ORDER_BY, TokenType.HAVING, TokenType.QUALIFY,
    TokenType.LIMIT, TokenType.UNION, TokenType.EXCEPT, TokenType.INTERSECT, TokenType.INTO, TokenType.WINDOW,
    TokenType.SEMICOLON, TokenType.FETCH, TokenType.OFFSET,
})
_OPEN = frozenset({TokenType.L_PAREN, TokenType.L_BRACKET, TokenType.L_BRACE})
_CLOSE = frozenset({TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.R_BRACE})


def snowflake_name(text: str) -> str:
    """`a.x + "b"` → `A.X + "b"`: Snowflake upper-cases the expression's text except its quoted identifiers."""
    out: list[str] = []
    quoted = False
    for part in text.split('"'):
        out.append(part if quoted else part.upper())
        quoted = not quoted
    return '"'.join(out)


def _projection_spans(sql: str) -> list[tuple[int, int]] | None:
    """(start, end-inclusive) of each item of the first SELECT list at paren depth 0, or None."""
    try:
        tokens = _DIALECT.tokenize(sql)
    except SqlglotError:  # an untokenizable statement keeps its text; fakesnow reports the error)
        return None
    depth = 0
    i = 0
    while i < len(tokens):
        kind = tokens[i].token_type
        if kind in _OPEN:
            depth += 1
        elif kind in _CLOSE:
            depth -= 1
        elif kind == TokenType.SELECT and depth == 0:
            break
        i += 1
    else:
        return None
    i += 1
    if i < len(tokens) and tokens[i].token_type in (TokenType.DISTINCT, TokenType.ALL):
        i += 1
    if i + 1 < len(tokens) and tokens[i].token_type == TokenType.TOP:
        i += 2
    spans: list[tuple[int, int]] = []
    start = i
    depth = 0
    while i < len(tokens):
        kind = tokens[i].token_type
        if kind in _OPEN:
            depth += 1
        elif kind in _CLOSE:
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and (kind in _LIST_END or kind == TokenType.COMMA):
            if kind != TokenType.COMMA:
                break
            if i == start:
                return None
            spans.append((tokens[start].start, tokens[i - 1].end))
            start = i + 1
        i += 1
    if i == start:
        return None
    spans.append((tokens[start].start, tokens[i - 1].end))
    return spans


def _first_select(tree: exp.Expr) -> exp.Select | None:
    node: Any = tree
    if isinstance(node, exp.Create):
        node = node.expression
    while isinstance(node, exp.SetOperation):
        node = node.this
    while isinstance(node, exp.Subquery):
        node = node.this
    return node if isinstance(node, exp.Select) else None


def _needs_alias(projection: exp.Expr) -> bool:
    # Columns and stars are already named as Snowflake names them; aliases are the caller's own.
    return not isinstance(projection, (exp.Alias, exp.Column, exp.Star))


def alias_projections(sql: str, tree: exp.Expr) -> str:
    """`sql` with `AS "<Snowflake's name>"` after each unaliased expression of its result's SELECT list."""
    select = _first_select(tree)
    if select is None or not any(_needs_alias(p) for p in select.expressions):
        return sql
    spans = _projection_spans(sql)
    if spans is None or len(spans) != len(select.expressions):
        return sql
    pieces: list[str] = []
    last = 0
    for (start, end), projection in zip(spans, select.expressions):
        name = snowflake_name(sql[start:end + 1])
        if not _needs_alias(projection) or (_BARE_WORD.match(name) and not isinstance(projection, (exp.Boolean, exp.Null))):
            continue
        name = name.replace('"', '""')
        pieces.append(sql[last:end + 1])
        pieces.append(f' AS "{name}"')
        last = end + 1
    pieces.append(sql[last:])
    return "".join(pieces)
