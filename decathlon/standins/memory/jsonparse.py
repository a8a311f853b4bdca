"""``JSON.parse`` with V8's (Node 22) SyntaxError messages.

A malformed memory file line makes every tool fail with the message V8 gave for that line,
for example ``Expected property name or '}' in JSON at position 1 (line 1 column 2)`` for a
pretty-printed JSON file (a recorded run shows exactly this). Valid input goes through
``json.loads``; anything it rejects (or nests too deeply for it) is re-parsed by a scanner that
follows V8's parser step by step, so the error names the same token at the same position.
Positions count UTF-16 code units, as JavaScript strings do.

V8's own message tests are matched exactly (see tests/test_memory_server.py). One case is
assumed: a missing ':' after a second or later key is reported as "Expected ':' after property
name", as V8's recursive-descent parser does; V8's older iterative parser named the unexpected
token there instead, and which of the two Node 22 ships was not established.
"""

from __future__ import annotations

import json
from array import array
from typing import Any, NoReturn

from .jsvalues import JsError, pair_surrogates

_EOS = -1
_SPECIAL_SOURCES = ("[object Object]", "undefined", "Infinity", "NaN")
_CONTEXT = 10  # characters of context either side of an unexpected token
_WHITESPACE = frozenset(map(ord, " \t\r\n"))
_DIGITS = frozenset(map(ord, "0123456789"))
_HEX = {ord(c): int(c, 16) for c in "0123456789abcdefABCDEF"}
_NUMBER_PART = _DIGITS | frozenset(map(ord, ".eE-+"))
_SIMPLE_ESCAPES = {ord('"'): '"', ord("\\"): "\\", ord("/"): "/", ord("b"): "\b", ord("f"): "\f",
                   ord("n"): "\n", ord("r"): "\r", ord("t"): "\t"}

# V8's token classes; a token is named by the character that starts it.
_STRING, _NUMBER, _LBRACE, _RBRACE, _LBRACK, _RBRACK, _LITERAL, _COLON, _COMMA, _ILLEGAL, _END = range(11)
_TOKENS = {ord('"'): _STRING, ord("-"): _NUMBER, ord("{"): _LBRACE, ord("}"): _RBRACE, ord("["): _LBRACK,
           ord("]"): _RBRACK, ord("t"): _LITERAL, ord("f"): _LITERAL, ord("n"): _LITERAL, ord(":"): _COLON,
           ord(","): _COMMA} | {digit: _NUMBER for digit in _DIGITS}
_LITERALS = {ord("t"): ("true", True), ord("f"): ("false", False), ord("n"): ("null", None)}

_EXPECTED_PROPERTY_NAME_OR_RBRACE = "Expected property name or '}'"
_EXPECTED_DOUBLE_QUOTED_PROPERTY_NAME = "Expected double-quoted property name"
_EXPECTED_COLON = "Expected ':' after property name"
_EXPECTED_COMMA_OR_RBRACE = "Expected ',' or '}' after property value"
_EXPECTED_COMMA_OR_RBRACK = "Expected ',' or ']' after array element"
_NON_WHITESPACE_AFTER = "Unexpected non-whitespace character after JSON"


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(name)  # NaN / Infinity are not JSON to V8


def parse(text: str) -> Any:
    """Parse one JSON text the way ``JSON.parse`` does (numbers become doubles), or raise ``JsError``."""
    try:
        return json.loads(text, parse_int=float, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return _Parser(text).parse()


def _units_to_str(units: array) -> str:
    return units.tobytes().decode("utf-16-le", "surrogatepass")


class _Parser:
    def __init__(self, text: str) -> None:
        self.source = text
        self.units = array("H", text.encode("utf-16-le", "surrogatepass"))
        self.end = len(self.units)
        self.pos = 0

    # --- cursor -----------------------------------------------------------------------------

    def current(self) -> int:
        return self.units[self.pos] if self.pos < self.end else _EOS

    def advance_current(self) -> int:
        self.pos += 1
        return self.current()

    def skip_whitespace(self) -> int:
        while self.pos < self.end and self.units[self.pos] in _WHITESPACE:
            self.pos += 1
        return self.token(self.current())

    @staticmethod
    def token(unit: int) -> int:
        if unit == _EOS:
            return _END
        return _TOKENS.get(unit, _ILLEGAL) if unit <= 0xFF else _ILLEGAL

    def check(self, wanted: int) -> bool:
        """Skip whitespace; consume the next character if it starts the wanted token."""
        if self.skip_whitespace() != wanted:
            return False
        self.pos += 1
        return True

    def skip_digits(self) -> None:
        while self.pos < self.end and self.units[self.pos] in _DIGITS:
            self.pos += 1

    # --- errors -----------------------------------------------------------------------------

    def _location(self) -> str:
        line, line_start, cursor = 1, 0, 0
        while cursor < self.pos:
            unit = self.units[cursor]
            if unit == 0x0D and cursor < self.pos - 1 and self.units[cursor + 1] == 0x0A:
                cursor += 1  # \r\n is one line break
                unit = 0x0A
            if unit in (0x0A, 0x0D):
                line += 1
                line_start = cursor + 1
            cursor += 1
        return f"at position {self.pos} (line {line} column {1 + cursor - line_start})"

    def fail(self, message: str) -> NoReturn:
        # Every positioned message reads "<what> in JSON at position ..." except this one.
        where = "" if message == _NON_WHITESPACE_AFTER else " in JSON"
        raise JsError(f"{message}{where} {self._location()}")

    def unexpected(self, token: int) -> NoReturn:
        if token == _END:
            raise JsError("Unexpected end of JSON input")
        if token == _NUMBER:
            self.fail("Unexpected number")
        if token == _STRING:
            self.fail("Unexpected string")
        if self.source in _SPECIAL_SOURCES:
            raise JsError(f'"{self.source}" is not valid JSON')
        char = _units_to_str(self.units[self.pos : self.pos + 1])
        if self.end < 2 * _CONTEXT + 1:
            raise JsError(f"Unexpected token '{char}', \"{self.source}\" is not valid JSON")
        if self.pos < _CONTEXT:
            context = _units_to_str(self.units[: self.pos + _CONTEXT])
            raise JsError(f"Unexpected token '{char}', \"{context}\"... is not valid JSON")
        if self.pos < self.end - _CONTEXT:
            context = _units_to_str(self.units[self.pos - _CONTEXT : self.pos + _CONTEXT])
            raise JsError(f"Unexpected token '{char}', ...\"{context}\"... is not valid JSON")
        context = _units_to_str(self.units[self.pos - _CONTEXT :])
        raise JsError(f"Unexpected token '{char}', ...\"{context}\" is not valid JSON")

    def unexpected_character(self) -> NoReturn:
        self.unexpected(self.token(self.current()))

    # --- values -----------------------------------------------------------------------------

    def parse(self) -> Any:
        # Containers are kept on an explicit stack: V8 parses arbitrarily deep input too.
        stack: list[list[Any] | tuple[dict[str, Any], str]] = []
        while True:
            value, opened = self.begin_value()
            if opened is not None:
                stack.append(opened)
                continue
            while stack:
                top = stack[-1]
                if isinstance(top, list):
                    top.append(value)
                    if self.check(_COMMA):
                        break
                    if self.current() != ord("]"):
                        self.fail(_EXPECTED_COMMA_OR_RBRACK)
                    self.pos += 1
                    value = stack.pop()
                    continue
                obj, key = top
                obj[key] = value
                if self.check(_COMMA):
                    if self.skip_whitespace() != _STRING:
                        self.fail(_EXPECTED_DOUBLE_QUOTED_PROPERTY_NAME)
                    self.pos += 1
                    stack[-1] = (obj, self.property_key())
                    break
                if self.current() != ord("}"):
                    self.fail(_EXPECTED_COMMA_OR_RBRACE)
                self.pos += 1
                value = stack.pop()[0]
            else:
                if self.skip_whitespace() != _END:
                    self.fail(_NON_WHITESPACE_AFTER)
                return value

    def begin_value(self) -> tuple[Any, list[Any] | tuple[dict[str, Any], str] | None]:
        """A complete scalar or empty container, or the container just opened (its first member comes next)."""
        token = self.skip_whitespace()
        if token == _STRING:
            self.pos += 1
            return self.string(), None
        if token == _NUMBER:
            return self.number(), None
        if token == _LITERAL:
            return self.literal(), None
        if token == _LBRACE:
            self.pos += 1
            if self.check(_RBRACE):
                return {}, None
            if self.skip_whitespace() != _STRING:
                self.fail(_EXPECTED_PROPERTY_NAME_OR_RBRACE)
            self.pos += 1
            return None, ({}, self.property_key())
        if token == _LBRACK:
            self.pos += 1
            if self.check(_RBRACK):
                return [], None
            return None, []
        self.unexpected_character()

    def property_key(self) -> str:
        key = self.string()
        if not self.check(_COLON):
            self.fail(_EXPECTED_COLON)
        return key

    def string(self) -> str:
        """The rest of a string whose opening quote was consumed."""
        pieces: list[str] = []
        run_start = self.pos
        while True:
            unit = self.current()
            if unit == _EOS:
                self.fail("Unterminated string")
            if unit > 0xFF or (unit >= 0x20 and unit != 0x22 and unit != 0x5C):
                self.pos += 1
                continue
            pieces.append(_units_to_str(self.units[run_start : self.pos]))
            if unit == 0x22:
                self.pos += 1
                return pair_surrogates("".join(pieces))
            if unit < 0x20:
                self.fail("Bad control character in string literal")
            escape = self.advance_current()
            if escape == _EOS or escape > 0xFF:
                self.unexpected_character()
            if escape == ord("u"):
                code = 0
                for _ in range(4):
                    digit = _HEX.get(self.advance_current())
                    if digit is None:
                        self.fail("Bad Unicode escape")
                    code = code * 16 + digit
                # Kept as a UTF-16 unit; the join above pairs surrogates the way a JS string holds them.
                pieces.append(chr(code))
            elif escape in _SIMPLE_ESCAPES:
                pieces.append(_SIMPLE_ESCAPES[escape])
            else:
                self.fail("Bad escaped character")
            self.pos += 1
            run_start = self.pos

    def number(self) -> float:
        start = self.pos
        unit = self.current()
        negative = unit == ord("-")
        if negative:
            unit = self.advance_current()
        if unit == ord("0"):
            unit = self.advance_current()
            if unit in _DIGITS:
                self.unexpected(_NUMBER)  # leading zero
            if unit not in _NUMBER_PART and not negative:
                return 0.0
        else:
            digits_start = self.pos
            self.skip_digits()
            if self.pos == digits_start:
                self.fail("No number after minus sign")
        if self.current() == ord("."):
            if self.advance_current() not in _DIGITS:
                self.fail("Unterminated fractional number")
            self.skip_digits()
        if self.current() in (ord("e"), ord("E")):
            unit = self.advance_current()
            if unit in (ord("+"), ord("-")):
                unit = self.advance_current()
            if unit not in _DIGITS:
                self.fail("Exponent part is missing a number")
            self.skip_digits()
        return float(_units_to_str(self.units[start : self.pos]))

    def literal(self) -> Any:
        word, value = _LITERALS[self.current()]
        remaining = self.end - self.pos
        if remaining >= len(word) and _units_to_str(self.units[self.pos : self.pos + len(word)]) == word:
            self.pos += len(word)
            return value
        self.pos += 1
        for expected in word[1 : min(len(word), remaining)]:
            if self.current() != ord(expected):
                self.unexpected_character()
            self.pos += 1
        self.unexpected(_END)
