"""What a statement asks of the emulator before fakesnow runs it: the text fakesnow should see, and whether the
emulator answers it itself (database DDL fakesnow lacks, constraint DDL Snowflake accepts and ignores).

Most statements pass through untouched; only those whose leading keyword can need a rewrite are parsed here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

import sqlglot  # type: ignore[import-not-found,import-untyped,unused-ignore]
from sqlglot import exp  # type: ignore[import-not-found,import-untyped,unused-ignore]
from sqlglot.dialects.snowflake import Snowflake  # type: ignore[import-not-found,import-untyped,unused-ignore]
from sqlglot.errors import SqlglotError  # type: ignore[import-not-found,import-untyped,unused-ignore]
from sqlglot.tokens import TokenType  # type: ignore[import-not-found,import-untyped,unused-ignore]

from . import lockdown
from .naming import alias_projections

# Leading comments, blanks and opening parens before the statement's keyword.
_LEAD = re.compile(r"(?:\s+|--[^\n]*(?:\n|$)|//[^\n]*(?:\n|$)|/\*.*?\*/|\()*([A-Za-z]+)", re.S)
_DIALECT = Snowflake()
_CONSTRAINT_WORDS = re.compile(r"\b(?:primary|unique|foreign|references)\b", re.I)


class Action(Enum):
    PASS = "pass"                        # fakesnow runs `sql`
    CREATE_DATABASE = "create_database"  # fakesnow runs `sql`; the emulator adds PUBLIC and makes it current
    USE_DATABASE = "use_database"        # fakesnow runs `sql`; the emulator then makes PUBLIC current
    DROP_DATABASE = "drop_database"      # the emulator runs it
    NO_OP = "no_op"                      # accepted and ignored, as Snowflake does constraint-only ALTERs
    COLUMN_COMMENTS = "column_comments"  # the emulator records them (fakesnow drops ALTER … COMMENT, fails COMMENT ON)
    REJECT = "reject"                    # several statements in one request: Snowflake refuses them
    REFUSE = "refuse"                    # calls a function Snowflake does not have (DuckDB's): `error` says which


@dataclass(frozen=True)
class Plan:
    sql: str
    action: Action = Action.PASS
    database: str | None = None  # the database a database statement names, as Snowflake resolves it
    if_exists: bool = False      # DROP … IF EXISTS / CREATE … IF NOT EXISTS
    replace: bool = False        # CREATE OR REPLACE
    statements: int = 1          # statements in the text
    # COLUMN_COMMENTS: ((database, schema, table) as written (None: the session's), column, comment), resolved
    # as Snowflake resolves names (unquoted: upper case)
    comments: tuple[tuple[tuple[str | None, str | None, str], str, str], ...] = ()
    error: str | None = None     # REFUSE: Snowflake's message


def leading_keyword(sql: str) -> str:
    m = _LEAD.match(sql)
    return m.group(1).upper() if m else ""


def identifier_name(ident: exp.Expr | None) -> str | None:
    """Snowflake's resolution of a name: unquoted → upper case, quoted → as written."""
    if not isinstance(ident, exp.Identifier):
        return None
    return ident.this if ident.quoted else str(ident.this).upper()


def _parse(sql: str) -> exp.Expr | None:
    try:
        return sqlglot.parse_one(sql, read="snowflake")
    except SqlglotError:
        return None  # fakesnow parses it again and answers with Snowflake's syntax error


def _database_name(tree: exp.Expr) -> str | None:
    target = tree.this if isinstance(tree, (exp.Create, exp.Use)) else (tree.args.get("tables") or [None])[0]
    return identifier_name(target.this) if isinstance(target, exp.Table) else None


def _is_key_constraint(node: exp.Expr) -> bool:
    if isinstance(node, (exp.PrimaryKey, exp.ForeignKey, exp.UniqueColumnConstraint, exp.PrimaryKeyColumnConstraint,
                         exp.Reference)):
        return True
    if isinstance(node, exp.ColumnConstraint):
        return _is_key_constraint(node.args.get("kind") or exp.Null())
    if isinstance(node, exp.Constraint):
        return bool(node.expressions) and all(_is_key_constraint(e) for e in node.expressions)
    return False


def strip_key_constraints(tree: exp.Expr) -> bool:
    """Drop PRIMARY KEY / UNIQUE / FOREIGN KEY from a CREATE TABLE or ALTER TABLE ADD COLUMN, in place.

    Snowflake records these but enforces none of them (only NOT NULL), while DuckDB enforces all of them: a
    duplicate key the real service accepts would fail here. Returns whether anything was dropped."""
    doomed = [node for node in tree.walk() if _is_key_constraint(node)
              and isinstance(node.parent, (exp.Schema, exp.ColumnDef, exp.AddConstraint))]
    for node in doomed:
        node.pop()
    return bool(doomed)


def _constraint_only_alter(tree: exp.Expr) -> bool:
    actions = tree.args.get("actions") or []
    if not isinstance(tree, exp.Alter) or not actions:
        return False

    def about_keys(action: exp.Expr) -> bool:
        if isinstance(action, exp.AddConstraint):
            return all(_is_key_constraint(e) for e in action.expressions)
        if isinstance(action, exp.Drop):
            return str(action.args.get("kind") or "").upper() in {"CONSTRAINT", "PRIMARY KEY", "UNIQUE", "FOREIGN KEY"}
        if isinstance(action, exp.Command):
            return bool(re.match(r"\s*(?:PRIMARY\s+KEY|UNIQUE|FOREIGN\s+KEY|CONSTRAINT)\b", str(action.expression), re.I))
        return False

    return all(about_keys(a) for a in actions)


def statement_count(sql: str) -> int:
    """How many statements `sql` holds (Snowflake runs one per request unless the client asks for more)."""
    if ";" not in sql.rstrip().rstrip(";"):
        return 1
    try:
        tokens = _DIALECT.tokenize(sql)
    except SqlglotError:
        return 1
    count, pending = 0, False
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            count += pending
            pending = False
        else:
            pending = True
    return count + pending


_CALL = re.compile(r"([A-Za-z_][\w$]*)\s*\(")
_DUCKDB_TYPED = {"ReadCSV": "READ_CSV", "ReadParquet": "READ_PARQUET", "ToFile": "TO_FILE", "Secret": "SECRET"}


def _renamed_call(sql: str) -> str | None:
    """The first call, as the query spells it (not in a string, a comment or a quoted name), of a function the parser
    would rename into one Snowflake has."""
    tokens = sqlglot.tokenize(sql, read="snowflake")
    for name, after in zip(tokens, tokens[1:]):
        if name.token_type == TokenType.VAR and after.token_type == TokenType.L_PAREN \
                and name.text.lower() in lockdown.RENAMED_BY_THE_PARSER:
            return name.text.upper()
    return None


def foreign_function(sql: str) -> str | None:
    """Snowflake's refusal of a call to a DuckDB function it does not have (read_text, read_csv, glob, getenv,
    duckdb_settings…): fakesnow would pass it to DuckDB unchanged. None when every call is Snowflake's."""
    if not any(lockdown.duckdb_only(m.group(1), table=True) for m in _CALL.finditer(sql)):
        return None  # the usual case: no name of DuckDB's own is called, nothing to parse
    tree = _parse(sql)
    if tree is None:
        return None  # fakesnow answers the syntax error
    renamed = _renamed_call(sql)
    if renamed:
        return f"SQL compilation error:\nUnknown function {renamed}"
    for node in tree.find_all(exp.Func):
        name = _DUCKDB_TYPED.get(type(node).__name__) or (node.name if isinstance(node, exp.Anonymous) else None)
        if not name:
            continue
        table = isinstance(node.parent, exp.Table) and node.parent.this is node
        if type(node).__name__ in _DUCKDB_TYPED or lockdown.duckdb_only(name, table):
            what = "user-defined table function" if table else "function"
            return f"SQL compilation error:\nUnknown {what} {name.upper()}"
    return None


def plan(sql: str) -> Plan:
    if (count := statement_count(sql)) > 1:
        return Plan(sql, Action.REJECT, statements=count)
    refusal = foreign_function(sql)
    if refusal:
        return Plan(sql, Action.REFUSE, error=refusal)
    keyword = leading_keyword(sql)
    if keyword in {"SELECT", "WITH"}:
        tree = _parse(sql)
        return Plan(alias_projections(sql, tree) if tree is not None else sql)
    if keyword == "DROP" and re.search(r"\bDATABASE\b", sql, re.I):
        tree = _parse(sql)
        if isinstance(tree, exp.Drop) and str(tree.args.get("kind")).upper() == "DATABASE":
            return Plan(sql, Action.DROP_DATABASE, _database_name(tree), if_exists=bool(tree.args.get("exists")))
        return Plan(sql)
    if keyword == "USE":
        tree = _parse(sql)
        kind = tree.args.get("kind") if isinstance(tree, exp.Use) else None
        if isinstance(tree, exp.Use) and (kind is None or kind.name.upper() == "DATABASE"):
            name = _database_name(tree)
            # `USE x` is `USE DATABASE x` in Snowflake; fakesnow only knows the long form.
            return Plan(f'USE DATABASE "{name}"' if name else sql, Action.USE_DATABASE, name)
        return Plan(sql)
    if keyword in {"ALTER", "COMMENT"} and re.search(r"\bcomment\b", sql, re.I):
        comments = _column_comments(_parse(sql))
        if comments:
            return Plan(sql, Action.COLUMN_COMMENTS, comments=comments)
    if keyword in {"CREATE", "ALTER"}:
        return _plan_ddl(sql)
    return Plan(sql)


def _table_parts(table: exp.Expr) -> tuple[str | None, str | None, str] | None:
    name = identifier_name(table.args.get("this"))
    if name is None:
        return None
    return identifier_name(table.args.get("catalog")), identifier_name(table.args.get("db")), name


def _column_comments(tree: exp.Expr | None) -> tuple[tuple[tuple[str | None, str | None, str], str, str], ...]:
    """`ALTER TABLE t ALTER|MODIFY COLUMN c COMMENT 'x'` (every action a comment) and `COMMENT ON COLUMN t.c IS 'x'`."""
    if isinstance(tree, exp.Comment) and str(tree.args.get("kind")).upper() == "COLUMN":
        column, text = tree.this, tree.expression
        if isinstance(column, exp.Column) and isinstance(text, exp.Literal) and column.args.get("table") is not None:
            table = exp.Table(this=column.args.get("table"), db=column.args.get("db"), catalog=column.args.get("catalog"))
            parts, name = _table_parts(table), identifier_name(column.this)
            if parts is not None and name is not None:
                return ((parts, name, text.this),)
        return ()
    if not isinstance(tree, exp.Alter) or not isinstance(tree.this, exp.Table):
        return ()
    actions = tree.args.get("actions") or []
    parts = _table_parts(tree.this)
    out = []
    for action in actions:
        comment = action.args.get("comment") if isinstance(action, exp.AlterColumn) else None
        name = identifier_name(action.this) if isinstance(action, exp.AlterColumn) else None
        others = [k for k, v in action.args.items() if v is not None and k not in ("this", "comment")]
        if parts is None or name is None or not isinstance(comment, exp.Literal) or others:
            return ()  # another change among them: fakesnow runs the statement as it is
        out.append((parts, name, comment.this))
    return tuple(out)


def _plan_ddl(sql: str) -> Plan:
    has_keys = bool(_CONSTRAINT_WORDS.search(sql))
    if not has_keys and not re.search(r"\bdatabase\b|\bselect\b", sql, re.I):
        return Plan(sql)
    tree = _parse(sql)
    if tree is None:
        return Plan(sql)
    if isinstance(tree, exp.Create) and str(tree.args.get("kind")).upper() == "DATABASE":
        return Plan(sql, Action.CREATE_DATABASE, _database_name(tree), if_exists=bool(tree.args.get("exists")),
                    replace=bool(tree.args.get("replace")))
    if has_keys and _constraint_only_alter(tree):
        return Plan(sql, Action.NO_OP)
    text = tree.sql(dialect="snowflake") if has_keys and strip_key_constraints(tree) else sql
    if isinstance(tree, exp.Create) and isinstance(tree.expression, exp.Query):
        reparsed = _parse(text) if text is not sql else tree
        if reparsed is not None:
            text = alias_projections(text, reparsed)
    return Plan(text)
