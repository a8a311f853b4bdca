"""The PHP and WordPress value rules the REST controllers lean on, for JSON-shaped Python values.

WooCommerce casts freely: `(int)` of a batch delete entry `{"id": 5}` is 1 (a non-empty array),
`absint("12abc")` is 12, `wc_format_decimal("1,193.99")` is "1193.99". The callers' mistakes only
behave like upstream's if these casts do, so they are reproduced here rather than approximated
with Python's stricter conversions.
"""
from __future__ import annotations

import html
import math
import re
import unicodedata
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from functools import lru_cache
from typing import Any
from urllib.parse import quote

_LEADING_NUMBER = re.compile(r"^[ \t\n\r\v\f]*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)")
_NUMERIC = re.compile(r"^[ \t\n\r\v\f]*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?[ \t\n\r\v\f]*$")
_TAGS = re.compile(r"<[^>]*>")
_SCRIPT_STYLE = re.compile(r"<(script|style)\b[^>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_EVENT_ATTRS = re.compile(r"\s+on[a-z]+\s*=\s*(\"[^\"]*\"|'[^']*'|[^\s>]+)", re.IGNORECASE)
_OCTETS = re.compile(r"%[a-fA-F0-9]{2}")
_BLOCK = ("table|thead|tfoot|caption|col|colgroup|tbody|tr|td|th|div|dl|dd|dt|ul|ol|li|pre|form|map|area|"
          "blockquote|address|math|style|p|h[1-6]|hr|fieldset|legend|section|article|aside|hgroup|header|"
          "footer|nav|figure|figcaption|details|menu|summary")
_STARTS_BLOCK = re.compile(rf"^\s*</?(?:{_BLOCK})[\s/>]", re.IGNORECASE)


def is_numeric(value: Any) -> bool:
    """PHP's is_numeric: numbers, and strings that read entirely as one (whitespace allowed around)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    return isinstance(value, str) and bool(_NUMERIC.match(value))


def php_float(value: Any) -> float:
    """PHP's (float) / floatval."""
    if value is None or value is False:
        return 0.0
    if value is True:
        return 1.0
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        match = _LEADING_NUMBER.match(value)
        return float(match.group(1)) if match else 0.0
    if isinstance(value, (list, dict)):
        return 1.0 if value else 0.0
    return 0.0


def php_int(value: Any) -> int:
    """PHP's (int) / intval: leading digits of strings, 1 for a non-empty array, truncation of floats."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return 0
        return int(value)
    if isinstance(value, str):
        match = _LEADING_NUMBER.match(value)
        if not match:
            return 0
        number = float(match.group(1))
        if math.isinf(number):
            return 0
        return int(number)
    if isinstance(value, (list, dict)):
        return 1 if value else 0
    return 0


def absint(value: Any) -> int:
    return abs(php_int(value))


def php_empty(value: Any) -> bool:
    """PHP's empty(): null, false, 0, 0.0, "", "0" and empty arrays."""
    if value is None or value is False:
        return True
    if isinstance(value, (int, float)):
        return value == 0
    if isinstance(value, str):
        return value in ("", "0")
    if isinstance(value, (list, dict)):
        return not value
    return False


def php_bool(value: Any) -> bool:
    return not php_empty(value)


def rest_sanitize_boolean(value: Any) -> bool:
    if isinstance(value, str) and value.lower() in ("false", "0"):
        return False
    return php_bool(value)


def wc_string_to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.lower() in ("yes", "true") or value == "1"
    return value == 1


def wc_bool_to_string(value: Any) -> str:
    return "yes" if wc_string_to_bool(value) or value is True else "no"


def php_string(value: Any) -> str:
    """PHP's (string) of a scalar; arrays become "Array" as PHP prints them."""
    if value is None or value is False:
        return ""
    if value is True:
        return "1"
    if isinstance(value, float):
        if value == int(value) and abs(value) < 1e15:
            return str(int(value))
        return repr(value)
    if isinstance(value, (list, dict)):
        return "Array"
    return str(value)


def wp_parse_list(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        return list(value.values())
    return [part for part in re.split(r"[\s,]+", php_string(value)) if part]


def wp_parse_id_list(value: Any) -> list[int]:
    seen: list[int] = []
    for item in wp_parse_list(value):
        number = absint(item)
        if number not in seen:
            seen.append(number)
    return seen


def strip_all_tags(text: str) -> str:
    return _TAGS.sub("", _SCRIPT_STYLE.sub("", text))


def sanitize_text_field(value: Any) -> str:
    """`sanitize_text_field` / `wc_clean` on a scalar: no tags, no line breaks, no octets, trimmed."""
    text = php_string(value)
    if "<" in text:
        text = strip_all_tags(re.sub(r"<(?=[^a-zA-Z/!?])", "&lt;", text))
    text = re.sub(r"[\r\n\t ]+", " ", text)
    text = _OCTETS.sub("", text)
    return text.strip()


def wc_clean(value: Any) -> Any:
    if isinstance(value, list):
        return [wc_clean(item) for item in value]
    if isinstance(value, dict):
        return {key: wc_clean(item) for key, item in value.items()}
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return sanitize_text_field(value)


def kses_post(value: Any) -> str:
    """`wp_filter_post_kses` / `wp_kses_post`, reduced to what matters here: scripts and handlers go."""
    text = php_string(value)
    text = _SCRIPT_STYLE.sub("", text)
    return _EVENT_ATTRS.sub("", text)


def remove_accents(text: str) -> str:
    if text.isascii():
        return text
    replaced = text.replace("ß", "ss").replace("æ", "ae").replace("Æ", "AE").replace("ø", "o").replace("Ø", "O")
    decomposed = unicodedata.normalize("NFD", replaced)
    out = []
    for char in decomposed:
        if unicodedata.combining(char) and ord(char) < 0x370:
            continue  # Latin diacritics only; other scripts keep their marks
        out.append(char)
    return unicodedata.normalize("NFC", "".join(out))


def sanitize_title(title: Any, fallback: str = "") -> str:
    """`sanitize_title` in its 'save' context: the slug WordPress derives from a name."""
    text = remove_accents(php_string(title))
    text = strip_all_tags(text)
    text = re.sub(r"%([a-fA-F0-9]{2})", r"---\1---", text).replace("%", "")
    text = re.sub(r"---([a-fA-F0-9]{2})---", r"%\1", text)
    text = text.lower()
    if not text.isascii():
        text = "".join(char if char.isascii() else quote(char, safe="").lower() for char in text)
    for entity in ("%c2%a0", "%e2%80%93", "%e2%80%94", "&nbsp;", "&#160;", "&ndash;", "&#8211;", "&mdash;", "&#8212;", "/"):
        text = text.replace(entity, "-")
    text = text.replace("%c3%97", "x")
    text = re.sub(r"&.+?;", "", text)
    text = text.replace(".", "-")
    text = re.sub(r"[^%a-z0-9 _-]", "", text)
    text = re.sub(r"\s+", "-", text)
    text = re.sub(r"-+", "-", text).strip("-")
    return text or fallback


def sanitize_key(value: Any) -> str:
    return re.sub(r"[^a-z0-9_\-]", "", php_string(value).lower())


def wc_format_decimal(value: Any, dp: int | None = None, trim_zeros: bool = False) -> str:
    """`wc_format_decimal`: a price string with only digits, one dot and a sign left."""
    if value is None:
        value = ""
    if isinstance(value, float):
        text = f"{value:.6f}"
        trim_zeros = dp is None or trim_zeros
    else:
        text = sanitize_text_field(value) if not isinstance(value, (int,)) or isinstance(value, bool) else str(value)
        text = re.sub(r"\.(?![^.]+$)|[^0-9.\-]", "", text)
    if dp is not None:
        text = number_format(php_float(text), dp, ".", "")
    if trim_zeros and "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def number_format(number: float, decimals: int = 0, point: str = ".", thousands: str = ",") -> str:
    """PHP's number_format: rounds half away from zero."""
    text = repr(float(number))
    if "e" not in text and "n" not in text and len(text.partition(".")[2]) <= decimals:
        exact = f"{float(number):,.{decimals}f}"  # no rounding happens: the value already has few enough digits
        if exact.startswith("-") and set(exact[1:]) <= set("0.,"):
            exact = exact[1:]
        return exact.replace(",", "\0").replace(".", point).replace("\0", thousands)
    try:
        quantized = Decimal(repr(float(number))).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    except InvalidOperation:
        return "0"
    sign = "-" if quantized < 0 else ""
    digits = f"{abs(quantized):f}"
    whole, _, fraction = digits.partition(".")
    groups: list[str] = []
    while len(whole) > 3:
        groups.insert(0, whole[-3:])
        whole = whole[:-3]
    groups.insert(0, whole)
    body = thousands.join(groups)
    if decimals > 0:
        body += point + fraction.ljust(decimals, "0")
    if sign and set(body) <= set("0.,"):
        sign = ""
    return sign + body


def wc_stock_amount(value: Any) -> int:
    return php_int(php_float(value)) if isinstance(value, str) else php_int(value)


# Pure text filters run on every product of every listing: memoised, as listings repeat the same texts.
@lru_cache(maxsize=4096)
def wpautop(text: str) -> str:
    """`wpautop` for the texts products carry: paragraphs in <p>, single line breaks as <br />."""
    if not text.strip():
        return ""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    chunks = [chunk.strip("\n") for chunk in re.split(r"\n\s*\n", text + "\n")]
    out = []
    for chunk in chunks:
        if not chunk.strip():
            continue
        if _STARTS_BLOCK.match(chunk):
            out.append(chunk.strip() + "\n")
        else:
            out.append("<p>" + chunk.strip().replace("\n", "<br />\n") + "</p>\n")
    return "".join(out)


_TEXTURIZE_SKIP = re.compile(r"^<(pre|code|kbd|style|script|tt)\b", re.IGNORECASE)
_TEXTURE = [
    (re.compile(r"---"), "&#8212;"), (re.compile(r" -- "), " &#8212; "), (re.compile(r"--"), "&#8211;"),
    (re.compile(r"(?<=\s)-(?=\s)"), "&#8211;"), (re.compile(r"\.\.\."), "&#8230;"), (re.compile(r"``"), "&#8220;"),
    (re.compile(r"''"), "&#8221;"), (re.compile(r" \(tm\)", re.IGNORECASE), " &#8482;"),
    (re.compile(r"(?<=\d)x(?=\d)"), "&#215;"),
    (re.compile(r"(?<=\d)'"), "&#8242;"), (re.compile(r"(?<=\d)\""), "&#8243;"),
    (re.compile(r"(?<=\w)'(?=\w)"), "&#8217;"),
    (re.compile(r"(^|(?<=[\s(\[{<]))'"), "&#8216;"), (re.compile(r"'"), "&#8217;"),
    (re.compile(r"(^|(?<=[\s(\[{<]))\""), "&#8220;"), (re.compile(r"\""), "&#8221;"),
]


@lru_cache(maxsize=4096)
def wptexturize(text: str) -> str:
    """`wptexturize` for the common cases: dashes, ellipses, quotes, primes and x between digits, outside tags."""
    if not text:
        return text
    parts = re.split(r"(<[^>]*>)", text)
    out, skipping = [], 0
    for part in parts:
        if part.startswith("<"):
            if _TEXTURIZE_SKIP.match(part):
                skipping += 1
            elif part.startswith("</") and skipping and _TEXTURIZE_SKIP.match("<" + part[2:]):
                skipping -= 1
            out.append(part)
            continue
        if not skipping:
            for pattern, replacement in _TEXTURE:
                part = pattern.sub(replacement, part)
        out.append(part)
    return "".join(out)


def esc_html(text: str) -> str:
    return html.escape(text, quote=True)


def php_round(number: float, decimals: int = 0) -> float:
    try:
        return float(Decimal(repr(float(number))).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP))
    except InvalidOperation:
        return 0.0
