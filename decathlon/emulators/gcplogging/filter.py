"""The Logging query language (the `filter` of ListLogEntries and of sinks): a lexer, a recursive-descent parser
and an evaluator over a log entry in its REST JSON shape (camelCase keys, as `MessageToDict` writes it).

Kept free of grpc and google imports; its one dependency is google-re2 (the module `re2`), the regular
expression engine Cloud Logging itself uses.

What it follows from Google's description of the language:
- `a OR b AND c` is `(a OR b) AND c`: OR binds tighter than AND; juxtaposition is an implicit AND; NOT (or a
  leading `-`) binds tightest. AND/OR/NOT are operators only in upper case.
- A comparison is `FIELD OP VALUE` with OP in `= != < <= > >= : =~ !~`; `FIELD:*` tests presence. The right side
  may be a parenthesised boolean expression of values (`resource.type = ("a" OR "b")`).
- A value alone (a word or a quoted string) is a global restriction: it matches when any field of the entry
  has it as a substring. So `NOT jsonPayload.logging\\.googleapis\\.com/diagnostic` is a text search, not a
  presence test (the task evaluators drop the client's diagnostic entry themselves).
- Everything but regular expressions is case-insensitive; `!=` needs the field present.
- `=~` / `!~` take RE2 syntax and match in linear time (no backreferences, no lookaround): a pattern RE2
  refuses, or one whose program is too big, is INVALID_ARGUMENT like any unparseable filter.
- `severity` compares by rank (DEFAULT < DEBUG < … < EMERGENCY, names or numbers); `timestamp` and
  `receiveTimestamp` compare as instants (RFC 3339 values); `logName` compares with its log id URL-encoded.
- Functions: `log_id("x")`, `SEARCH("text")` / `SEARCH(field, "text")`, `sample(insertId, fraction)`.
An unparseable filter raises FilterError with Google's wording ("Unparseable filter: syntax error at line L,
column C, token 'T'"). Matching takes a Deadline: past it, or once cancelled, evaluation raises FilterTimeout.
"""
from __future__ import annotations

import hashlib
import math
import re
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from typing import Any, Iterator
from urllib.parse import quote, unquote

import re2  # type: ignore[import-not-found,import-untyped,unused-ignore]

SEVERITIES: dict[str, int] = {"DEFAULT": 0, "DEBUG": 100, "INFO": 200, "NOTICE": 300, "WARNING": 400, "ERROR": 500,
                              "CRITICAL": 600, "ALERT": 700, "EMERGENCY": 800}
OPERATORS = ("=", "!=", "<", "<=", ">", ">=", ":", "=~", "!~")
MAX_LENGTH = 20_000  # Google's limit on a query's length
# Memory: RE2 refuses a pattern whose compiled program (and its DFA cache) would need more than this.
MAX_REGEX_MEMORY = 1 << 20
# Compile time and memory of one filter: its regular expressions' programs together, in RE2 instructions
# (`.{1000}` is about 8,000). 20,000 characters of small patterns stay far below it.
MAX_PROGRAM_SIZE = 100_000
_INSTANT_FIELDS = {"timestamp", "receiveTimestamp"}
# snake_case spellings of LogEntry's fields, which the API accepts as well as camelCase
_TOP_LEVEL = {"log_name": "logName", "json_payload": "jsonPayload", "text_payload": "textPayload",
              "proto_payload": "protoPayload", "insert_id": "insertId", "receive_timestamp": "receiveTimestamp",
              "http_request": "httpRequest", "source_location": "sourceLocation", "span_id": "spanId",
              "trace_sampled": "traceSampled", "split": "split"}


class FilterError(ValueError):
    """A filter the API refuses (INVALID_ARGUMENT); str() is the message Google gives."""


class FilterTimeout(Exception):
    """Matching ran past its Deadline (DEADLINE_EXCEEDED)."""


@dataclass
class Deadline:
    """When matching must stop: an instant of time.monotonic(), or at once when cancelled (its caller is gone).
    Checked at every comparison, so a worker thread stops soon after, whatever the filter or the entries."""
    at: float = math.inf
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True

    def check(self) -> None:
        if self.cancelled or time.monotonic() >= self.at:
            raise FilterTimeout()


# ---------------------------------------------------------------------------------------------------- lexing

@dataclass(frozen=True)
class Token:
    kind: str  # "word", "op", "(", ")", ",", "AND", "OR", "NOT", "eof"
    text: str  # as written (for errors)
    line: int
    column: int
    parts: tuple[tuple[str, bool], ...] = ()  # a word: (text with escapes resolved, quoted?) pieces
    escaped_dots: frozenset[int] = frozenset()  # offsets, in the joined unquoted text, of `\.` (not separators)


def _syntax_error(token: Token) -> FilterError:
    shown = token.text if token.kind != "eof" else ""
    return FilterError(f"Unparseable filter: syntax error at line {token.line}, column {token.column}, token '{shown}'")


_QUOTED_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "\\": "\\", '"': '"', "'": "'"}


class _Lexer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.line = 1
        self.line_start = 0

    def _here(self) -> tuple[int, int]:
        return self.line, self.i - self.line_start + 1

    def _advance(self, n: int = 1) -> None:
        for _ in range(n):
            if self.text[self.i] == "\n":
                self.line += 1
                self.line_start = self.i + 1
            self.i += 1

    def tokens(self) -> Iterator[Token]:
        previous = ""
        while True:
            self._skip_space_and_comments()
            line, col = self._here()
            if self.i >= len(self.text):
                yield Token("eof", "", line, col)
                return
            c = self.text[self.i]
            two = self.text[self.i:self.i + 2]
            if c in "(),":
                self._advance()
                tok = Token(c, c, line, col)
            elif two in (">=", "<=", "!=", "=~", "!~"):
                self._advance(2)
                tok = Token("op", two, line, col)
            elif c in "=<>:":
                self._advance()
                tok = Token("op", c, line, col)
            elif c == "-" and previous != "op" and self.i + 1 < len(self.text) and not self.text[self.i + 1].isspace():
                # a leading minus negates the term it starts (in a value position it is part of the value)
                self._advance()
                tok = Token("NOT", "-", line, col)
            else:
                tok = self._word(line, col)
            previous = tok.kind
            yield tok

    def _skip_space_and_comments(self) -> None:
        while self.i < len(self.text):
            if self.text[self.i].isspace():
                self._advance()
            elif self.text.startswith("--", self.i):
                while self.i < len(self.text) and self.text[self.i] != "\n":
                    self._advance()
            else:
                return

    def _ends_word(self) -> bool:
        c = self.text[self.i]
        if c.isspace() or c in "()=<>:,":
            return True
        return c == "!" and self.text[self.i + 1:self.i + 2] in ("=", "~")

    def _word(self, line: int, col: int) -> Token:
        start = self.i
        parts: list[tuple[str, bool]] = []
        unquoted: list[str] = []
        escaped_dots: set[int] = set()
        offset = 0  # position in the unquoted text joined across parts, for escaped_dots
        while self.i < len(self.text) and not self._ends_word():
            c = self.text[self.i]
            if c == '"':
                if unquoted:
                    parts.append(("".join(unquoted), False))
                    unquoted = []
                parts.append((self._quoted(line, col), True))
                continue
            if c == "\\":
                if self.i + 1 >= len(self.text):
                    raise _syntax_error(Token("word", "\\", *self._here()))
                self._advance()
                c = self.text[self.i]
                if c == ".":
                    escaped_dots.add(offset)
            unquoted.append(c)
            offset += 1
            self._advance()
        if unquoted:
            parts.append(("".join(unquoted), False))
        raw = self.text[start:self.i]
        if raw in ("AND", "OR", "NOT"):
            return Token(raw, raw, line, col)
        return Token("word", raw, line, col, tuple(parts), frozenset(escaped_dots))

    def _quoted(self, line: int, col: int) -> str:
        self._advance()  # the opening quote
        out: list[str] = []
        while True:
            if self.i >= len(self.text):
                raise FilterError(f"Unparseable filter: unterminated string starting at line {line}, column {col}")
            c = self.text[self.i]
            if c == '"':
                self._advance()
                return "".join(out)
            if c == "\\" and self.i + 1 < len(self.text):
                nxt = self.text[self.i + 1]
                if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", self.text[self.i + 2:self.i + 6]):
                    out.append(chr(int(self.text[self.i + 2:self.i + 6], 16)))
                    self._advance(6)
                    continue
                out.append(_QUOTED_ESCAPES.get(nxt, nxt))
                self._advance(2)
                continue
            out.append(c)
            self._advance()


# ---------------------------------------------------------------------------------------------------- the tree

@dataclass(frozen=True)
class Value:
    text: str
    quoted: bool


@dataclass(frozen=True)
class ValueOp:
    """A boolean expression of values on a comparison's right side."""
    op: str  # "AND", "OR", "NOT"
    items: tuple[Any, ...]  # Value | ValueOp


@dataclass(frozen=True)
class Compare:
    path: tuple[str, ...]
    op: str
    value: Any  # Value | ValueOp


@dataclass(frozen=True)
class Global:
    value: Value


@dataclass(frozen=True)
class Call:
    name: str
    args: tuple[Any, ...]  # tuple[str, ...] paths or Value


@dataclass(frozen=True)
class BoolOp:
    op: str  # "AND", "OR", "NOT"
    items: tuple[Any, ...]


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = list(_Lexer(text).tokens())
        self.pos = 0
        self.comparisons: list[tuple[Compare, Token]] = []

    def peek(self, ahead: int = 0) -> Token:
        return self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]

    def take(self) -> Token:
        tok = self.peek()
        self.pos += 1
        return tok

    def expect(self, kind: str) -> Token:
        tok = self.take()
        if tok.kind != kind:
            raise _syntax_error(tok)
        return tok

    def parse(self) -> Any:
        if self.peek().kind == "eof":
            return None
        tree = self.conjunction()
        if self.peek().kind != "eof":
            raise _syntax_error(self.peek())
        # values are checked once the whole text has parsed, so a syntax error later on is the one reported
        program_size = sum(_prepare(node, op_tok) for node, op_tok in self.comparisons)
        if program_size > MAX_PROGRAM_SIZE:
            raise FilterError(f"Unparseable filter: its regular expressions are too large ({program_size} RE2 "
                              f"instructions; the limit is {MAX_PROGRAM_SIZE})")
        return tree

    def _starts_term(self) -> bool:
        return self.peek().kind in ("word", "(", "NOT")

    def conjunction(self) -> Any:
        items = [self.disjunction()]
        while True:
            if self.peek().kind == "AND":
                self.take()
                items.append(self.disjunction())
            elif self._starts_term():  # juxtaposition is an implicit AND
                items.append(self.disjunction())
            else:
                break
        return items[0] if len(items) == 1 else BoolOp("AND", tuple(items))

    def disjunction(self) -> Any:
        items = [self.unary()]
        while self.peek().kind == "OR":
            self.take()
            items.append(self.unary())
        return items[0] if len(items) == 1 else BoolOp("OR", tuple(items))

    def unary(self) -> Any:
        if self.peek().kind == "NOT":
            self.take()
            return BoolOp("NOT", (self.unary(),))
        return self.primary()

    def primary(self) -> Any:
        tok = self.peek()
        if tok.kind == "(":
            self.take()
            inner = self.conjunction()
            self.expect(")")
            return inner
        if tok.kind != "word":
            raise _syntax_error(tok)
        self.take()
        nxt = self.peek()
        if nxt.kind == "(" and nxt.line == tok.line and nxt.column == tok.column + len(tok.text) \
                and len(tok.parts) == 1 and not tok.parts[0][1]:
            return self.call(tok)
        if nxt.kind == "op":
            self.take()
            path = _path(tok)
            if nxt.text == ":" and self.peek().kind == "word" and self.peek().text == "*":
                self.take()
                return Compare(path, ":*", Value("*", False))
            return self._checked(Compare(path, nxt.text, self.rhs()), nxt)
        return Global(_value(tok))

    def rhs(self) -> Any:
        if self.peek().kind == "(":
            self.take()
            inner = self.value_conjunction()
            self.expect(")")
            return inner
        tok = self.take()
        if tok.kind != "word":
            raise _syntax_error(tok)
        return _value(tok)

    def value_conjunction(self) -> Any:
        items = [self.value_disjunction()]
        while self.peek().kind in ("AND", "word", "(", "NOT"):
            if self.peek().kind == "AND":
                self.take()
            items.append(self.value_disjunction())
        return items[0] if len(items) == 1 else ValueOp("AND", tuple(items))

    def value_disjunction(self) -> Any:
        items = [self.value_unary()]
        while self.peek().kind == "OR":
            self.take()
            items.append(self.value_unary())
        return items[0] if len(items) == 1 else ValueOp("OR", tuple(items))

    def value_unary(self) -> Any:
        tok = self.peek()
        if tok.kind == "NOT":
            self.take()
            return ValueOp("NOT", (self.value_unary(),))
        if tok.kind == "(":
            self.take()
            inner = self.value_conjunction()
            self.expect(")")
            return inner
        if tok.kind != "word":
            raise _syntax_error(tok)
        self.take()
        return _value(tok)

    def call(self, name_tok: Token) -> Call:
        name = name_tok.parts[0][0]
        self.expect("(")
        args: list[Any] = []
        while self.peek().kind != ")":
            tok = self.take()
            if tok.kind != "word":
                raise _syntax_error(tok)
            args.append(_value(tok) if tok.parts and tok.parts[0][1] else _path(tok))
            if self.peek().kind == ",":
                self.take()
            elif self.peek().kind != ")":
                raise _syntax_error(self.peek())
        self.expect(")")
        return _checked_call(Call(name, tuple(args)), name_tok)

    def _checked(self, node: Compare, op_tok: Token) -> Compare:
        self.comparisons.append((node, op_tok))
        return node


def _value(tok: Token) -> Value:
    quoted = len(tok.parts) == 1 and tok.parts[0][1]
    return Value("".join(p for p, _ in tok.parts), quoted)


def _path(tok: Token) -> tuple[str, ...]:
    segments: list[str] = []
    current: list[str] = []
    offset = 0
    for text, quoted in tok.parts:
        if quoted:
            current.append(text)
            continue
        for ch in text:
            if ch == "." and offset not in tok.escaped_dots:
                segments.append("".join(current))
                current = []
            else:
                current.append(ch)
            offset += 1
    segments.append("".join(current))
    if any(s == "" for s in segments):
        raise _syntax_error(tok)
    first = _TOP_LEVEL.get(segments[0], segments[0])
    return (first, *segments[1:])


def _checked_call(call: Call, tok: Token) -> Call:
    name = call.name.lower()
    if name == "log_id" and len(call.args) == 1 and isinstance(call.args[0], Value):
        return Call("log_id", call.args)
    if name == "search" and 1 <= len(call.args) <= 2 and isinstance(call.args[-1], Value):
        return Call("search", call.args)
    if name == "sample" and len(call.args) == 2:
        try:
            fraction = float(_arg_text(call.args[1]))
        except ValueError:
            raise FilterError(f"Unparseable filter: invalid sample fraction at line {tok.line}, column {tok.column}") \
                from None
        if not 0 <= fraction <= 1:
            raise FilterError("Unparseable filter: the sample fraction must be between 0 and 1")
        return Call("sample", (call.args[0], fraction))
    raise FilterError(f"Unparseable filter: unsupported function '{call.name}' with {len(call.args)} argument(s) "
                      f"at line {tok.line}, column {tok.column}")


def _arg_text(arg: Any) -> str:
    return arg.text if isinstance(arg, Value) else ".".join(arg)


def _values(node: Any) -> Iterator[Value]:
    if isinstance(node, Value):
        yield node
    else:
        for item in node.items:
            yield from _values(item)


def _prepare(node: Compare, op_tok: Token) -> int:
    """Checks a comparison's values once, at parse time, so bad ones are INVALID_ARGUMENT before any matching.
    Returns the size of the regular expressions' programs, which the filter as a whole is limited in."""
    field = node.path[0]
    program_size = 0
    for v in _values(node.value):
        if field == "severity" and len(node.path) == 1 and node.op not in ("=~", "!~", ":"):
            if _severity_rank(v.text) is None:
                raise FilterError(f"Unparseable filter: invalid severity value '{v.text}' at line {op_tok.line}, "
                                  f"column {op_tok.column}")
        elif field in _INSTANT_FIELDS and len(node.path) == 1 and node.op not in ("=~", "!~", ":"):
            if parse_instant(v.text) is None:
                raise FilterError(f"Unparseable filter: invalid timestamp value '{v.text}' at line {op_tok.line}, "
                                  f"column {op_tok.column}")
        elif node.op in ("=~", "!~"):
            program_size += _checked_regex(v.text, op_tok).programsize
    return program_size


def _checked_regex(pattern: str, op_tok: Token) -> Any:
    try:
        return _regex(pattern)
    except re2.error as exc:
        # RE2's own reason ("invalid escape sequence: \1", "pattern too large - compile failed"), as bytes
        reason = exc.args[0].decode(errors="replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
    except UnicodeEncodeError:  # a lone surrogate written as `\uD800`: RE2 takes UTF-8 only
        reason = "invalid UTF-8"
    # the pattern as written, but encodable: a status message that is not UTF-8 cannot be sent
    shown = pattern.encode("utf-8", "backslashreplace").decode("utf-8")
    raise FilterError(f"Unparseable filter: invalid regular expression '{shown}' at line {op_tok.line}, "
                      f"column {op_tok.column}: {reason}")


# ---------------------------------------------------------------------------------------------------- values

def _severity_rank(text: str) -> int | None:
    upper = text.strip().upper()
    if upper in SEVERITIES:
        return SEVERITIES[upper]
    try:
        return int(upper)
    except ValueError:
        return None


_INSTANT = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*"
                      r"(Z|z|[+-]\d{2}:?\d{2})?")


@lru_cache(maxsize=4096)
def parse_instant(text: str) -> datetime | None:
    """RFC 3339 (and the shorter forms the API accepts: a date, no seconds, no zone = UTC); None if not one."""
    m = _INSTANT.fullmatch(text.strip())
    if not m:
        return None
    year, month, day, hour, minute, second, frac, zone = m.groups()
    try:
        value = datetime(int(year), int(month), int(day), int(hour or 0), int(minute or 0), int(second or 0),
                         int((frac or "0")[:6].ljust(6, "0")), tzinfo=timezone.utc)
    except ValueError:
        return None
    if zone and zone not in ("Z", "z"):
        sign = 1 if zone[0] == "+" else -1
        digits = zone[1:].replace(":", "")
        value -= sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    return value


def _re2_options() -> Any:
    options = re2.Options()
    options.max_mem = MAX_REGEX_MEMORY
    options.log_errors = False  # a bad pattern is the caller's INVALID_ARGUMENT, not a line on our stderr
    return options


_RE2_OPTIONS = _re2_options()


# as large as re2's own cache, which holds the same objects: no more memory than it already takes
@lru_cache(maxsize=128)
def _regex(pattern: str) -> Any:
    """The pattern compiled by RE2, as Cloud Logging does: matching is linear in the text, never backtracking."""
    return re2.compile(pattern, _RE2_OPTIONS)


def normalize_log_name(name: str) -> str:
    """`projects/p/logs/a/b` and `projects/p/logs/a%2Fb` are one log; the API writes the id URL-encoded."""
    head, sep, log_id = name.partition("/logs/")
    if not sep:
        return name
    return f"{head}/logs/{quote(unquote(log_id), safe='')}"


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _has(actual: Any, wanted: str) -> bool:
    needle = wanted.lower()
    return any(leaf is not None and needle in _text(leaf).lower() for leaf in _leaves(actual))


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _order(a: Any, b: Any) -> int:
    return (a > b) - (a < b)


def _compare_scalar(actual: Any, op: str, value: Value) -> bool:
    if op == ":":
        return _has(actual, value.text)
    if op in ("=~", "!~"):
        if isinstance(actual, (dict, list)):
            found = any(leaf is not None and _regex(value.text).search(_text(leaf)) for leaf in _leaves(actual))
        else:
            found = actual is not None and _regex(value.text).search(_text(actual)) is not None
        return found if op == "=~" else not found
    if isinstance(actual, list):
        hits = [_compare_scalar(item, op, value) for item in actual]
        return all(hits) if op == "!=" else any(hits)
    if isinstance(actual, dict):
        return op == "!="
    if not value.quoted and value.text == "NULL_VALUE":
        equal = actual is None
        return equal if op == "=" else (not equal if op == "!=" else False)
    if actual is None:
        return op == "!="
    if isinstance(actual, (int, float)) and not isinstance(actual, bool):
        wanted = _number(value.text)
        if wanted is None:
            return op == "!="
        cmp = _order(float(actual), wanted)
    else:
        cmp = _order(_text(actual).lower(), value.text.lower())
    return {"=": cmp == 0, "!=": cmp != 0, "<": cmp < 0, "<=": cmp <= 0, ">": cmp > 0, ">=": cmp >= 0}[op]


_MISSING = object()


def _resolve(doc: Any, path: tuple[str, ...]) -> Any:
    current = doc
    for segment in path:
        if isinstance(current, list):
            found = [r for r in (_resolve(item, (segment,)) for item in current) if r is not _MISSING]
            if not found:
                return _MISSING
            current = [x for r in found for x in (r if isinstance(r, list) else [r])]
            continue
        if not isinstance(current, dict) or segment not in current:
            return _MISSING
        current = current[segment]
    return current


def _special(entry: dict[str, Any], field: str, op: str, value: Value) -> bool | None:
    """severity, timestamps and logName, which compare by meaning rather than as text; None for other fields."""
    if field == "severity" and op not in ("=~", "!~", ":"):
        rank = SEVERITIES.get(str(entry.get("severity") or "DEFAULT").upper(), 0)
        wanted = _severity_rank(value.text)
        cmp = _order(rank, wanted if wanted is not None else 0)
    elif field in _INSTANT_FIELDS and op not in ("=~", "!~", ":"):
        raw = entry.get(field)
        actual = parse_instant(raw) if isinstance(raw, str) else None
        wanted_at = parse_instant(value.text)
        if actual is None or wanted_at is None:
            return op == "!=" and actual is not None
        cmp = _order(actual, wanted_at)
    elif field == "logName" and op in ("=", "!="):
        cmp = _order(normalize_log_name(str(entry.get("logName", ""))).lower(), normalize_log_name(value.text).lower())
    else:
        return None
    return {"=": cmp == 0, "!=": cmp != 0, "<": cmp < 0, "<=": cmp <= 0, ">": cmp > 0, ">=": cmp >= 0}[op]


def _compare(entry: dict[str, Any], node: Compare, value: Any, deadline: Deadline) -> bool:
    deadline.check()
    if isinstance(value, ValueOp):
        if value.op == "NOT":
            return not _compare(entry, node, value.items[0], deadline)
        results = (_compare(entry, node, item, deadline) for item in value.items)
        return all(results) if value.op == "AND" else any(results)
    if node.op == ":*":
        return _resolve(entry, node.path) is not _MISSING
    if len(node.path) == 1:
        special = _special(entry, node.path[0], node.op, value)
        if special is not None:
            return special
    actual = _resolve(entry, node.path)
    if actual is _MISSING:
        return False
    return _compare_scalar(actual, node.op, value)


def _evaluate(entry: dict[str, Any], node: Any, deadline: Deadline) -> bool:
    deadline.check()
    if isinstance(node, BoolOp):
        if node.op == "NOT":
            return not _evaluate(entry, node.items[0], deadline)
        results = (_evaluate(entry, item, deadline) for item in node.items)
        return all(results) if node.op == "AND" else any(results)
    if isinstance(node, Compare):
        return _compare(entry, node, node.value, deadline)
    if isinstance(node, Global):
        return _has(entry, node.value.text)
    if isinstance(node, Call):
        return _call(entry, node)
    raise TypeError(f"not a filter node: {node!r}")


def _call(entry: dict[str, Any], node: Call) -> bool:
    if node.name == "log_id":
        suffix = "/logs/" + quote(unquote(node.args[0].text), safe="")
        return normalize_log_name(str(entry.get("logName", ""))).lower().endswith(suffix.lower())
    if node.name == "search":
        target = entry if len(node.args) == 1 else _resolve(entry, node.args[0])
        return target is not _MISSING and _has(target, node.args[-1].text)
    # sample(field, fraction): a stable pseudo-random choice by the field's value
    field = node.args[0] if isinstance(node.args[0], tuple) else (node.args[0].text,)
    key = _text(_resolve(entry, field))
    draw = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") / 2 ** 64
    return draw < node.args[1]


# ---------------------------------------------------------------------------------------------------- API

@dataclass(frozen=True)
class Filter:
    text: str
    tree: Any  # None: matches everything

    def matches(self, entry: dict[str, Any], deadline: Deadline | None = None) -> bool:
        """Raises FilterTimeout once `deadline` has passed (or is cancelled)."""
        deadline = deadline or Deadline()
        deadline.check()  # an empty filter too: a listing of every entry is bounded as well
        return True if self.tree is None else _evaluate(entry, self.tree, deadline)


def parse(text: str | None) -> Filter:
    """The filter `text` compiled; raises FilterError (INVALID_ARGUMENT) when the API would refuse it."""
    text = text or ""
    if len(text) > MAX_LENGTH:
        raise FilterError(f"Filter is too long: {len(text)} characters, the limit is {MAX_LENGTH}")
    try:
        return Filter(text, _Parser(text).parse())
    except RecursionError:
        raise FilterError("Unparseable filter: the filter is nested too deeply") from None

