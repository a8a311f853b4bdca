"""The formulas the emulator can work out: arithmetic (+ - * / ^, unary -), `&`, comparisons, numbers, strings, cell
references and ranges (on the same or another sheet), and SUM, AVERAGE, MIN, MAX, COUNT, COUNTA, ROUND, ABS, IF.
Anything else keeps its text and gets no value (FormulaError): the emulator never shows a value Sheets would not."""
from __future__ import annotations

import re
from typing import Any, Callable

from decathlon.emulators.workspace.sheets import a1

_TOKEN = re.compile(r"\s*(?:(?P<num>\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+)|(?P<str>\"(?:[^\"]|\"\")*\")"
                    r"|(?P<ref>(?:(?:'(?:[^']|'')+'|[A-Za-z_][\w.]*)!)?\$?[A-Za-z]{1,3}\$?\d+(?::\$?[A-Za-z]{1,3}\$?\d+)?)"
                    r"|(?P<func>[A-Za-z][A-Za-z0-9.]*)\s*\(|(?P<op><>|<=|>=|[-+*/^&=<>(),]))")

# (sheet title or None, row0, row1, col0, col1) -> the effective values of the rectangle, row by row
Lookup = Callable[[str | None, int, int, int, int], list[list[Any]]]


class FormulaError(ValueError):
    pass


def _numbers(values: list[Any]) -> list[float]:
    return [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]


def _flat(arg: Any) -> list[Any]:
    if isinstance(arg, list):
        return [v for row in arg for v in row]
    return [arg]


def _num(v: Any) -> float:
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    if isinstance(v, (int, float)):
        return float(v)
    if v is None or v == "":
        return 0.0
    try:
        return float(v)
    except (TypeError, ValueError):
        raise FormulaError(f"not a number: {v!r}") from None


FUNCTIONS: dict[str, Callable[[list[Any]], Any]] = {
    "SUM": lambda args: sum(sum(_numbers(_flat(a))) if isinstance(a, list) else _num(a) for a in args),
    "AVERAGE": lambda args: (lambda xs: sum(xs) / len(xs) if xs else _raise("#DIV/0!"))(
        [x for a in args for x in (_numbers(_flat(a)) if isinstance(a, list) else [_num(a)])]),
    "MIN": lambda args: min([x for a in args for x in (_numbers(_flat(a)) if isinstance(a, list) else [_num(a)])] or [0]),
    "MAX": lambda args: max([x for a in args for x in (_numbers(_flat(a)) if isinstance(a, list) else [_num(a)])] or [0]),
    "COUNT": lambda args: float(sum(len(_numbers(_flat(a))) for a in args)),
    "COUNTA": lambda args: float(sum(sum(1 for v in _flat(a) if v not in (None, "")) for a in args)),
    "ABS": lambda args: abs(_num(args[0])),
    "ROUND": lambda args: round(_num(args[0]), int(_num(args[1])) if len(args) > 1 else 0),
    "IF": lambda args: args[1] if _truth(args[0]) else (args[2] if len(args) > 2 else False),
}


def _raise(message: str) -> Any:
    raise FormulaError(message)


def _truth(v: Any) -> bool:
    return bool(v) if not isinstance(v, str) else v.upper() == "TRUE"


class _Parser:
    def __init__(self, text: str, lookup: Lookup) -> None:
        self.toks: list[tuple[str, str]] = []
        pos = 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            m = _TOKEN.match(text, pos)
            if m is None or m.end() == pos:
                raise FormulaError(text[pos:])
            kind = m.lastgroup or ""
            self.toks.append((kind, m.group(kind)))
            pos = m.end()
        self.i, self.lookup = 0, lookup

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, text: str | None = None) -> tuple[str, str]:
        tok = self.peek()
        if tok is None or (text is not None and tok[1] != text):
            raise FormulaError(f"expected {text}")
        self.i += 1
        return tok

    def run(self) -> Any:
        value = self.compare()
        if self.peek() is not None:
            raise FormulaError("trailing input")
        return value

    def compare(self) -> Any:
        left = self.concat()
        tok = self.peek()
        if tok and tok[1] in ("=", "<>", "<", "<=", ">", ">="):
            self.i += 1
            right = self.concat()
            a, b = (left, right) if type(left) is type(right) else (_num(left), _num(right))
            return {"=": a == b, "<>": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[tok[1]]
        return left

    def concat(self) -> Any:
        left = self.additive()
        while self.peek() and self.peek() == ("op", "&"):
            self.i += 1
            left = _text(left) + _text(self.additive())
        return left

    def additive(self) -> Any:
        left = self.term()
        while self.peek() and self.peek()[1] in ("+", "-"):  # type: ignore[index]
            op = self.take()[1]
            right = self.term()
            left = _num(left) + _num(right) if op == "+" else _num(left) - _num(right)
        return left

    def term(self) -> Any:
        left = self.power()
        while self.peek() and self.peek()[1] in ("*", "/"):  # type: ignore[index]
            op = self.take()[1]
            right = _num(self.power())
            if op == "/" and right == 0:
                raise FormulaError("#DIV/0!")
            left = _num(left) * right if op == "*" else _num(left) / right
        return left

    def power(self) -> Any:
        left = self.unary()
        while self.peek() and self.peek() == ("op", "^"):
            self.i += 1
            left = _num(left) ** _num(self.unary())
        return left

    def unary(self) -> Any:
        tok = self.peek()
        if tok and tok[1] in ("-", "+"):
            self.i += 1
            value = _num(self.unary())
            return -value if tok[1] == "-" else value
        return self.atom()

    def atom(self) -> Any:
        kind, text = self.take()
        if kind == "num":
            return float(text)
        if kind == "str":
            return text[1:-1].replace('""', '"')
        if kind == "ref":
            sheet, cells = a1.split_sheet(text.replace("$", ""))
            rect = a1.parse_cells(cells or "")
            assert rect.row0 is not None and rect.row1 is not None and rect.col0 is not None and rect.col1 is not None
            values = self.lookup(sheet, rect.row0, rect.row1, rect.col0, rect.col1)
            return values if ":" in text else values[0][0]
        if kind == "func":
            name = text.upper()
            args: list[Any] = []
            if self.peek() != ("op", ")"):
                args.append(self.compare())
                while self.peek() == ("op", ","):
                    self.i += 1
                    args.append(self.compare())
            self.take(")")
            if name not in FUNCTIONS:
                raise FormulaError(f"unknown function {name}")
            return FUNCTIONS[name](args)
        if text == "(":
            value = self.compare()
            self.take(")")
            return value
        raise FormulaError(f"unexpected {text}")


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return "" if v is None else str(v)


def evaluate(formula: str, lookup: Lookup) -> dict[str, Any]:
    """The effectiveValue of `formula` (`=…`); FormulaError where the emulator cannot work it out."""
    try:
        value = _Parser(formula[1:], lookup).run()
    except (a1.RangeError, ZeroDivisionError, OverflowError, RecursionError, IndexError, TypeError) as exc:
        raise FormulaError(str(exc)) from None
    if isinstance(value, list):
        value = value[0][0] if value and value[0] else None
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, (int, float)):
        return {"numberValue": value}
    if value is None:
        return {"numberValue": 0}
    return {"stringValue": str(value)}
