"""Drive v3's search language (`files.list?q=`), parsed into a predicate over a file's metadata: `name = 'x'`,
`name contains 'x'`, `mimeType != 'x'`, `'<id>' in parents`, `'<email>' in owners|writers|readers`, `trashed = false`,
`starred`, `createdTime|modifiedTime <op> '<RFC 3339>'`, `fullText contains 'x'`, `sharedWithMe`, with `and`, `or`,
`not` and parentheses (`and` binds tighter than `or`); strings in single or double quotes. A query that does
not parse is Drive's 400 "Invalid Value"."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

Predicate = Callable[[dict[str, Any]], bool]
ROLES = {"owners": ("owner",), "writers": ("owner", "organizer", "fileOrganizer", "writer"),
         "readers": ("owner", "organizer", "fileOrganizer", "writer", "commenter", "reader")}
_TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")|(?P<op>!=|<=|>=|=|<|>)|(?P<paren>[()])"
                    r"|(?P<word>[A-Za-z_][\w.]*))")
_WORDS = re.compile(r"[0-9A-Za-z]+")


class QueryError(ValueError):
    """The query does not parse or names what Drive cannot search."""


@dataclass(frozen=True)
class Token:
    kind: str  # str, op, paren, word
    text: str


def tokens(q: str) -> list[Token]:
    out, pos = [], 0
    q = q.rstrip()
    while pos < len(q):
        m = _TOKEN.match(q, pos)
        if m is None or m.end() == pos:
            raise QueryError(f"unexpected {q[pos:pos + 20]!r}")
        kind = m.lastgroup or ""
        text = m.group(kind)
        if kind == "str":
            text = re.sub(r"\\(.)", r"\1", text[1:-1])
        out.append(Token(kind, text))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, toks: list[Token], ctx: "Context") -> None:
        self.toks, self.i, self.ctx = toks, 0, ctx

    def peek(self) -> Token | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> Token:
        tok = self.peek()
        if tok is None:
            raise QueryError("unexpected end of query")
        self.i += 1
        return tok

    def keyword(self, word: str) -> bool:
        tok = self.peek()
        if tok is not None and tok.kind == "word" and tok.text.lower() == word:
            self.i += 1
            return True
        return False

    def parse(self) -> Predicate:
        pred = self.disjunction()
        if self.peek() is not None:
            raise QueryError(f"unexpected {self.peek()}")
        return pred

    def disjunction(self) -> Predicate:
        parts = [self.conjunction()]
        while self.keyword("or"):
            parts.append(self.conjunction())
        return parts[0] if len(parts) == 1 else (lambda f: any(p(f) for p in parts))

    def conjunction(self) -> Predicate:
        parts = [self.negation()]
        while self.keyword("and"):
            parts.append(self.negation())
        return parts[0] if len(parts) == 1 else (lambda f: all(p(f) for p in parts))

    def negation(self) -> Predicate:
        if self.keyword("not"):
            inner = self.negation()
            return lambda f: not inner(f)
        tok = self.peek()
        if tok is not None and tok.kind == "paren" and tok.text == "(":
            self.i += 1
            inner = self.disjunction()
            close = self.take()
            if close.kind != "paren" or close.text != ")":
                raise QueryError("unbalanced parentheses")
            return inner
        return self.term()

    def term(self) -> Predicate:
        first = self.take()
        if first.kind == "str":  # 'value' in collection
            if not self.keyword("in"):
                raise QueryError("a quoted value must be followed by `in`")
            target = self.take()
            if target.kind != "word":
                raise QueryError("`in` takes a field")
            return self.membership(first.text, target.text)
        if first.kind != "word":
            raise QueryError(f"unexpected {first.text!r}")
        field = first.text
        if self.keyword("in"):  # `parents in 'id'`, as gspread writes it
            value = self.take()
            if value.kind != "str":
                raise QueryError("`in` takes a quoted value")
            return self.membership(value.text, field)
        if field in ("sharedWithMe", "starred", "trashed") and self._ends_term():
            return lambda f: bool(self.ctx.value(f, field))
        op = self.take()
        if op.kind == "word" and op.text.lower() == "contains":
            op = Token("op", "contains")
        elif op.kind == "word" and op.text.lower() == "has":
            raise QueryError("`has` is for properties, which the emulator does not search")
        if op.kind != "op":
            raise QueryError(f"expected an operator after {field}")
        value = self.take()
        return self.comparison(field, op.text, value)

    def _ends_term(self) -> bool:
        tok = self.peek()
        return tok is None or (tok.kind == "paren" and tok.text == ")") or (
            tok.kind == "word" and tok.text.lower() in ("and", "or"))

    def membership(self, value: str, field: str) -> Predicate:
        if field == "parents":
            wanted = self.ctx.resolve(value)
            return lambda f: wanted in (f.get("parents") or [])
        if field in ROLES:
            roles = ROLES[field]
            return lambda f: self.ctx.has_role(f, value, roles)
        raise QueryError(f"`in` does not apply to {field}")

    def comparison(self, field: str, op: str, value: Token) -> Predicate:
        if field in ("trashed", "starred", "sharedWithMe"):
            if value.kind != "word" or value.text.lower() not in ("true", "false") or op not in ("=", "!="):
                raise QueryError(f"{field} compares with = or != to true or false")
            want = value.text.lower() == "true"
            return lambda f: (bool(self.ctx.value(f, field)) == want) == (op == "=")
        if value.kind != "str":
            raise QueryError(f"{field} compares with a quoted value")
        text = value.text
        if field in ("name", "mimeType", "fullText", "description"):
            if op == "contains":
                if field == "mimeType":
                    return lambda f: text in str(f.get("mimeType", ""))
                if field == "fullText":
                    low = text.lower()
                    return lambda f: low in (str(f.get("name", "")) + " " + str(f.get("description", ""))).lower()
                return lambda f: _name_contains(str(f.get(field, "")), text)
            if op in ("=", "!="):
                return lambda f: (str(f.get(field, "")) == text) == (op == "=")
            raise QueryError(f"{field} takes =, != or contains")
        if field in ("createdTime", "modifiedTime", "viewedByMeTime"):
            if op == "contains":
                raise QueryError(f"{field} takes a comparison")
            return lambda f: _compare(str(f.get(field, "")), op, text)
        raise QueryError(f"the emulator cannot search {field}")


def _name_contains(name: str, value: str) -> bool:
    """Drive matches `name contains` on prefixes of the name's words (`Hello World` contains `Wor`, `HelloWorld` does
    not contain `World`), case-insensitively; text outside ASCII (no word breaks to find) by substring."""
    low, want = name.lower(), value.lower()
    if not want.isascii():
        return want in low
    if low.startswith(want):
        return True
    return any(low[m.start():].startswith(want) for m in _WORDS.finditer(low))


def _compare(have: str, op: str, want: str) -> bool:
    if not have:
        return False
    # RFC 3339 in UTC compares as text once both carry the same precision; the date part decides most queries.
    a, b = have.rstrip("Z")[:23], want.rstrip("Z")[:23]
    return {"=": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


class Context:
    """What a predicate needs beyond the file: the `root` alias and who holds which role."""

    def __init__(self, root: str, me: str, has_role: Callable[[dict[str, Any], str, tuple[str, ...]], bool],
                 value: Callable[[dict[str, Any], str], Any]) -> None:
        self.root, self.me = root, me
        self.has_role, self.value = has_role, value

    def resolve(self, file_id: str) -> str:
        return self.root if file_id == "root" else file_id


def parse(q: str, ctx: Context) -> Predicate:
    if not q.strip():
        return lambda f: True
    return _Parser(tokens(q), ctx).parse()
