"""The reference's two SQL screens, both textual: the write detector of `read_query` and the database guess
behind `--allowed_databases`.

Write detection parses with sqlparse (pinned at the version the reference resolved to) and flags a query
when, anywhere in its token tree, a token typed exactly Keyword, Keyword.DML or Keyword.DDL is one of the
write words; and, for a statement with a top-level WITH, when the text of any later top-level token merely
*contains* a write word in capitals: `WITH t AS (...) SELECT COUNT(*) AS CREATED_AT FROM t` is refused for
the CREATE in CREATED_AT, as upstream, while the same alias without the WITH passes.

The database guess looks, in the upper-cased query, for `CREATE DATABASE`/`DROP DATABASE` (the word after
DATABASE, `IF` included), a leading `USE` (its second word) or the first `A.B.C` name (A); the allowed list
is then compared exactly, case and all.
"""
from __future__ import annotations

import importlib
import re
from typing import Any

WRITE_WORDS = frozenset({
    "INSERT", "UPDATE", "DELETE", "MERGE", "UPSERT", "REPLACE",  # DML
    "CREATE", "ALTER", "DROP", "TRUNCATE", "RENAME",  # DDL
    "GRANT", "REVOKE",  # DCL
})
_QUALIFIED = re.compile(r"\b([A-Z_][A-Z0-9_]*)\.[A-Z_][A-Z0-9_]*\.[A-Z_][A-Z0-9_]*")

_sqlparse: Any = None


def _parser() -> Any:
    global _sqlparse
    if _sqlparse is None:
        _sqlparse = importlib.import_module("sqlparse")
    return _sqlparse


def _leads_with_cte(statement: Any) -> bool:
    return any(token.is_keyword and token.normalized == "WITH" for token in statement.tokens)


def _cte_mentions_write(statement: Any) -> bool:
    after_with = False
    for token in statement.tokens:
        if token.is_keyword and token.normalized == "WITH":
            after_with = True
        elif after_with and any(word in token.normalized for word in WRITE_WORDS):
            return True
    return False


def _write_words(group: Any, tokens: Any) -> set[str]:
    exact = (tokens.Keyword, tokens.Keyword.DML, tokens.Keyword.DDL)
    found: set[str] = set()
    for token in group.tokens:
        if token.is_whitespace or token.ttype == tokens.Comment:
            continue
        if token.ttype is not None and any(token.ttype == kind for kind in exact):
            word = token.normalized.upper()
            if word in WRITE_WORDS:
                found.add(word)
        if token.is_group:
            found |= _write_words(token, tokens)
    return found


def contains_write(query: str) -> bool:
    sqlparse = _parser()
    for statement in sqlparse.parse(query):
        if _leads_with_cte(statement) and _cte_mentions_write(statement):
            return True
        if _write_words(statement, sqlparse.tokens):
            return True
    return False


def guess_database(query: str) -> str | None:
    upper = query.upper().strip()
    if "CREATE DATABASE" in upper or "DROP DATABASE" in upper:
        words = upper.split()
        if "DATABASE" in words:
            after = words.index("DATABASE") + 1
            if after < len(words):
                return words[after].strip(";")
    if upper.startswith("USE"):
        words = upper.split()
        if len(words) >= 2:
            return words[1].strip(";")
    found = _QUALIFIED.search(upper)
    return found.group(1) if found else None


def check_access(database: str, allowed: list[str] | None) -> None:
    if allowed is not None and database not in allowed:
        raise ValueError(f"Access denied: Database '{database}' is not in the allowed databases list: {allowed}")
