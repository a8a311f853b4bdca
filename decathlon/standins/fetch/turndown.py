"""HTML to Markdown as ``new TurndownService().turndown(html)`` does it (turndown 7.2.0, defaults).

The reference calls turndown with no options on the whole page, so what the model reads
follows turndown's defaults: setext headings for h1/h2 (``===`` / ``---`` as long as the
text), ``#`` headings below, ``*   `` bullets and ``1.  `` numbers with continuation lines
indented by four spaces, indented (not fenced) code blocks, ``_em_``, ``**strong**``,
inline links ``[text](href "title")`` with parentheses in the href backslash-escaped and a
destination containing spaces left as it is, ``  `` + newline for <br>, ``* * *`` for <hr>,
and turndown's escaping of text (``\\``, ``*``, ``_``, ``[``, ``]``, `````, and ``-`` / ``+ `` /
``=`` / ``#`` / ``>`` / ``~~~`` / ``1. `` only at the very start of a text node). Nothing is
removed: <title>, <script> and <style> text is converted like any other text, which is why
recorded runs show page titles and inline JavaScript in the Markdown.

Toolathlon's package-lock pins turndown 7.2.0 (parsing with @mixmark-io/domino 2.2.0); later
releases indent list continuations to the marker's width and wrap link destinations that
contain spaces in ``<>``, which recorded runs do not show.

Whitespace follows turndown's collapse pass: runs of ASCII whitespace become one space,
space is dropped next to block elements, and kept after void elements (<meta>, <link>,
<img>), so a page's <head> leaves a run of single spaces after its title, as recordings show.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..memory.jsvalues import JS_WHITESPACE, number_to_string
from .dom import Element, Node, Text, text_content
from .htmlparse import parse_for_turndown

_BLOCK = frozenset({
    "ADDRESS", "ARTICLE", "ASIDE", "AUDIO", "BLOCKQUOTE", "BODY", "CANVAS", "CENTER", "DD", "DIR", "DIV", "DL",
    "DT", "FIELDSET", "FIGCAPTION", "FIGURE", "FOOTER", "FORM", "FRAMESET", "H1", "H2", "H3", "H4", "H5", "H6",
    "HEADER", "HGROUP", "HR", "HTML", "ISINDEX", "LI", "MAIN", "MENU", "NAV", "NOFRAMES", "NOSCRIPT", "OL",
    "OUTPUT", "P", "PRE", "SECTION", "TABLE", "TBODY", "TD", "TFOOT", "TH", "THEAD", "TR", "UL",
})
_VOID = frozenset({"AREA", "BASE", "BR", "COL", "COMMAND", "EMBED", "HR", "IMG", "INPUT", "KEYGEN", "LINK", "META",
                   "PARAM", "SOURCE", "TRACK", "WBR"})
_MEANINGFUL_WHEN_BLANK = frozenset({"A", "TABLE", "THEAD", "TBODY", "TFOOT", "TH", "TD", "IFRAME", "SCRIPT",
                                    "AUDIO", "VIDEO"})
# getElementsByTagName(<upper-case name>) in an HTML document finds HTML elements by lower-case name.
_VOID_NAMES = frozenset(name.lower() for name in _VOID)
_MEANINGFUL_NAMES = frozenset(name.lower() for name in _MEANINGFUL_WHEN_BLANK)

# JavaScript's \s (WhiteSpace + LineTerminator), used by String.prototype.trim and /\s/.
_JS_SPACE = JS_WHITESPACE
_ASCII_SPACE = " \t\r\n"
_JS_S = "[" + re.escape(_JS_SPACE) + "]"
_LINE_START = re.compile(r"(?:^|(?<=[\n\r\u2028\u2029]))")
_CLEAN_ATTRIBUTE = re.compile(r"(?:\n+" + _JS_S + "*)+")
_COLLAPSE = re.compile(r"[ \r\n\t]+")
_CODE_EXTRA_SPACE = re.compile(r"^`|^ [^\n\r\u2028\u2029]*?[^ ][^\n\r\u2028\u2029]* $|`$")
_BACKTICKS = re.compile(r"`+")
_POST_LEADING = re.compile(r"^[\t\r\n]+")
_POST_TRAILING = re.compile(r"[\t\r\n" + re.escape(_JS_SPACE) + r"]+$")

_ESCAPES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\\"), r"\\\\"),
    (re.compile(r"\*"), r"\\*"),
    (re.compile(r"^-"), r"\\-"),
    (re.compile(r"^\+ "), r"\\+ "),
    (re.compile(r"^(=+)"), r"\\\1"),
    (re.compile(r"^(#{1,6}) "), r"\\\1 "),
    (re.compile(r"`"), r"\\`"),
    (re.compile(r"^~~~"), r"\\~~~"),
    (re.compile(r"\["), r"\\["),
    (re.compile(r"\]"), r"\\]"),
    (re.compile(r"^>"), r"\\>"),
    (re.compile(r"_"), r"\\_"),
    (re.compile(r"^([0-9]+)\. "), r"\1\\. "),
]


def js_trim(text: str) -> str:
    return text.strip(_JS_SPACE)


def _utf16_length(text: str) -> int:
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


def escape(text: str) -> str:
    for pattern, replacement in _ESCAPES:
        text = pattern.sub(replacement, text)
    return text


def _node_name(node: Node) -> str:
    if isinstance(node, Element):
        return node.node_name
    return "#text" if isinstance(node, Text) else "#comment"


def _is_block(node: Node) -> bool:
    return isinstance(node, Element) and node.node_name in _BLOCK


def _is_void(node: Node) -> bool:
    return isinstance(node, Element) and node.node_name in _VOID


def _is_pre(node: Node) -> bool:
    return isinstance(node, Element) and node.node_name == "PRE"


def _first_child(node: Node) -> Node | None:
    # A template's children live in its content fragment: to the DOM it has none.
    return node.first if isinstance(node, Element) and not node.is_template else None


# --------------------------------------------------------------------------- collapse-whitespace


def _remove(node: Node) -> Node | None:
    following = node.next or node.parent
    node.detach()
    return following


def _next(previous: Node | None, current: Node) -> Node | None:
    if (previous is not None and previous.parent is current) or _is_pre(current):
        return current.next or current.parent
    return _first_child(current) or current.next or current.parent


def collapse_whitespace(element: Element) -> None:
    """turndown's collapse-whitespace pass, step for step (it edits and removes nodes as it walks)."""
    if _first_child(element) is None or _is_pre(element):
        return
    prev_text: Text | None = None
    keep_leading_ws = False
    previous: Node | None = None
    node = _next(previous, element)
    while node is not element and node is not None:
        if isinstance(node, Text):
            text = _COLLAPSE.sub(" ", node.data)
            if (prev_text is None or prev_text.data.endswith(" ")) and not keep_leading_ws and text.startswith(" "):
                text = text[1:]
            if not text:
                node = _remove(node)
                continue
            node.data = text
            prev_text = node
        elif isinstance(node, Element):
            if _is_block(node) or node.node_name == "BR":
                if prev_text is not None:
                    prev_text.data = prev_text.data.removesuffix(" ")
                prev_text = None
                keep_leading_ws = False
            elif _is_void(node) or _is_pre(node):
                prev_text = None
                keep_leading_ws = True
            elif prev_text is not None:
                keep_leading_ws = False
        else:
            node = _remove(node)
            continue
        following = _next(previous, node)
        previous = node
        node = following
    if prev_text is not None:
        prev_text.data = prev_text.data.removesuffix(" ")
        if not prev_text.data:
            prev_text.detach()


# --------------------------------------------------------------------------- text-content facts


class _Facts:
    """What turndown reads from an element's textContent and descendants, computed once per element.

    turndown asks these of every element (is it blank? what whitespace flanks it?), each time
    scanning the subtree; computed bottom-up after the whitespace pass (nothing changes the tree
    afterwards), they cost one walk in all, so deeply nested pages stay linear.
    """

    __slots__ = ("nonspace", "leading", "trailing", "first_char", "last_char", "has_void", "has_meaningful")

    def __init__(self) -> None:
        self.nonspace = False  # textContent has a non-whitespace character
        self.leading = ""  # JS-whitespace run textContent starts with (all of it when not nonspace)
        self.trailing = ""  # ... and ends with
        self.first_char = ""
        self.last_char = ""
        self.has_void = False  # a descendant is an HTML void element (getElementsByTagName)
        self.has_meaningful = False  # ... or one that is meaningful when blank


def _text_facts(data: str) -> _Facts:
    facts = _Facts()
    stripped = data.strip(_JS_SPACE)
    facts.nonspace = bool(stripped)
    if facts.nonspace:
        facts.leading = data[: len(data) - len(data.lstrip(_JS_SPACE))]
        facts.trailing = data[len(data.rstrip(_JS_SPACE)):]
    else:
        facts.leading = facts.trailing = data
    facts.first_char = data[:1]
    facts.last_char = data[-1:]
    return facts


def _compute_facts(root: Element) -> dict[Element, _Facts]:
    """Facts for root and every element below it, by an iterative post-order walk."""
    facts: dict[Element, _Facts] = {}
    pending: list[tuple[Element, bool]] = [(root, False)]
    while pending:
        element, children_done = pending.pop()
        if not children_done:
            pending.append((element, True))
            if not element.is_template:
                pending.extend((child, False) for child in element.children() if isinstance(child, Element))
            continue
        result = _Facts()
        parts = [] if element.is_template else list(element.children())
        child_facts = []
        for child in parts:
            if isinstance(child, Text):
                child_facts.append(_text_facts(child.data))
            elif isinstance(child, Element):
                child_facts.append(facts[child])
                html = child.namespace == "html"
                result.has_void |= facts[child].has_void or (html and child.name in _VOID_NAMES)
                result.has_meaningful |= facts[child].has_meaningful or (html and child.name in _MEANINGFUL_NAMES)
        leading: list[str] = []
        for item in child_facts:
            leading.append(item.leading)
            if item.nonspace:
                result.nonspace = True
                break
        result.leading = "".join(leading)
        if result.nonspace:
            trailing: list[str] = []
            for item in reversed(child_facts):
                trailing.append(item.trailing)
                if item.nonspace:
                    break
            result.trailing = "".join(reversed(trailing))
        else:
            result.trailing = result.leading
        result.first_char = next((item.first_char for item in child_facts if item.first_char), "")
        result.last_char = next((item.last_char for item in reversed(child_facts) if item.last_char), "")
        facts[element] = result
    return facts


# --------------------------------------------------------------------------- the converter


class _Converter:
    def __init__(self) -> None:
        self.facts: dict[Element, _Facts] = {}

    def convert(self, root: Element) -> str:
        collapse_whitespace(root)
        self.facts = _compute_facts(root)
        output = self.process(root, False)
        return _POST_TRAILING.sub("", _POST_LEADING.sub("", output))

    def process(self, parent: Element, parent_is_code: bool) -> str:
        output = _Output()
        for node in list(parent.children()) if not parent.is_template else []:
            if isinstance(node, Text):
                output.join(node.data if parent_is_code else escape(node.data))
            elif isinstance(node, Element):
                is_code = node.node_name == "CODE" or parent_is_code
                output.join(self.replacement_for_node(node, is_code))
            else:
                output.join("")
        return output.value()

    def replacement_for_node(self, node: Element, is_code: bool) -> str:
        rule = _rule_for(node, self.facts)
        content = self.process(node, is_code)
        leading, trailing = _flanking_whitespace(node, self.facts)
        if leading or trailing:
            content = js_trim(content)
        return leading + rule(content, node) + trailing


class _Output:
    """turndown's reduce-with-join, without re-copying the whole output for every child."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def _trim_trailing_newlines(self) -> int:
        removed = 0
        while self.parts:
            last = self.parts[-1]
            kept = last.rstrip("\n")
            removed += len(last) - len(kept)
            if kept:
                self.parts[-1] = kept
                break
            self.parts.pop()
        return removed

    def join(self, replacement: str) -> None:
        trailing = self._trim_trailing_newlines()
        stripped = replacement.lstrip("\n")
        newlines = max(trailing, len(replacement) - len(stripped))
        self.parts.append("\n\n"[:newlines])
        self.parts.append(stripped)

    def value(self) -> str:
        return "".join(self.parts)


def _flanking_whitespace(node: Element, facts: dict[Element, _Facts]) -> tuple[str, str]:
    """turndown's flankingWhitespace: the whitespace to move outside an inline element's markup."""
    if _is_block(node):
        return "", ""
    own = facts[node]
    # For whitespace-only text the whole string is "leading" and nothing is "trailing".
    leading, trailing = own.leading, own.trailing if own.nonspace else ""
    leading_ascii = leading[: len(leading) - len(leading.lstrip(_ASCII_SPACE))]
    trailing_ascii = trailing[len(trailing.rstrip(_ASCII_SPACE)):]
    if leading_ascii and _flanked(node, facts, left=True):
        leading = leading[len(leading_ascii):]
    if trailing_ascii and _flanked(node, facts, left=False):
        trailing = trailing[: len(trailing) - len(trailing_ascii)]
    return leading, trailing


def _flanked(node: Element, facts: dict[Element, _Facts], *, left: bool) -> bool:
    sibling = node.prev if left else node.next
    if isinstance(sibling, Text):
        return sibling.data.endswith(" ") if left else sibling.data.startswith(" ")
    if isinstance(sibling, Element) and not _is_block(sibling):
        sibling_facts = facts[sibling]
        return (sibling_facts.last_char if left else sibling_facts.first_char) == " "
    return False


def _is_blank(node: Element, facts: dict[Element, _Facts]) -> bool:
    own = facts[node]
    return (
        node.node_name not in _VOID
        and node.node_name not in _MEANINGFUL_WHEN_BLANK
        and not own.nonspace
        and not own.has_void
        and not own.has_meaningful
    )


# --------------------------------------------------------------------------- rules

Rule = Callable[[str, Element], str]


def _clean_attribute(value: str | None) -> str:
    return _CLEAN_ATTRIBUTE.sub("\n", value) if value else ""


def _paragraph(content: str, node: Element) -> str:
    return "\n\n" + content + "\n\n"


def _line_break(content: str, node: Element) -> str:
    return "  \n"


def _heading(content: str, node: Element) -> str:
    level = int(node.node_name[1])
    if level < 3:
        underline = ("=" if level == 1 else "-") * _utf16_length(content)
        return "\n\n" + content + "\n" + underline + "\n\n"
    return "\n\n" + "#" * level + " " + content + "\n\n"


def _blockquote(content: str, node: Element) -> str:
    content = re.sub(r"^\n+|\n+$", "", content)
    content = _LINE_START.sub("> ", content)
    return "\n\n" + content + "\n\n"


def _list(content: str, node: Element) -> str:
    parent = node.parent
    if parent is not None and parent.node_name == "LI" and _last_element_child(parent) is node:
        return "\n" + content
    return "\n\n" + content + "\n\n"


def _last_element_child(element: Element) -> Element | None:
    children = element.element_children()
    return children[-1] if children else None


def _js_number(text: str) -> float:
    """Number(string) for an attribute value: whitespace-trimmed decimal, hex, or NaN."""
    stripped = text.strip(JS_WHITESPACE)
    if not stripped:
        return 0.0
    try:
        if re.fullmatch(r"0[xX][0-9a-fA-F]+", stripped):
            return float(int(stripped, 16))
        if re.fullmatch(r"0[oO][0-7]+", stripped):
            return float(int(stripped[2:], 8))
        if re.fullmatch(r"0[bB][01]+", stripped):
            return float(int(stripped[2:], 2))
        if re.fullmatch(r"[+-]?(Infinity|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)", stripped):
            return float(stripped.replace("Infinity", "inf"))
    except (ValueError, OverflowError):
        pass
    return float("nan")


def _list_item(content: str, node: Element) -> str:
    prefix = "*   "
    parent = node.parent
    if parent is not None and parent.node_name == "OL":
        start = parent.get_attribute("start")
        siblings = parent.element_children()
        index = siblings.index(node)
        if start:
            prefix = number_to_string(_js_number(start) + index) + ".  "
        else:
            prefix = str(index + 1) + ".  "
    content = re.sub(r"^\n+", "", content)
    content = re.sub(r"\n+$", "\n", content)
    content = content.replace("\n", "\n    ")  # 7.2.0 indents by four whatever the marker's width
    return prefix + content + ("\n" if node.next is not None and not content.endswith("\n") else "")


def _indented_code_block(content: str, node: Element) -> str:
    assert node.first is not None
    return "\n\n    " + text_content(node.first).replace("\n", "\n    ") + "\n\n"


def _horizontal_rule(content: str, node: Element) -> str:
    return "\n\n* * *\n\n"


def _inline_link(content: str, node: Element) -> str:
    href = re.sub(r"([()])", r"\\\1", node.get_attribute("href") or "")
    title = _clean_attribute(node.get_attribute("title"))
    if title:
        title = ' "' + title.replace('"', '\\"') + '"'
    return "[" + content + "](" + href + title + ")"


def _emphasis(content: str, node: Element) -> str:
    return "_" + content + "_" if js_trim(content) else ""


def _strong(content: str, node: Element) -> str:
    return "**" + content + "**" if js_trim(content) else ""


def _code(content: str, node: Element) -> str:
    if not content:
        return ""
    content = re.sub(r"\r?\n|\r", " ", content)
    extra_space = " " if _CODE_EXTRA_SPACE.search(content) else ""
    delimiter = "`"
    runs = _BACKTICKS.findall(content)
    while delimiter in runs:
        delimiter += "`"
    return delimiter + extra_space + content + extra_space + delimiter


def _image(content: str, node: Element) -> str:
    alt = _clean_attribute(node.get_attribute("alt"))
    src = node.get_attribute("src") or ""
    title = _clean_attribute(node.get_attribute("title"))
    title_part = ' "' + title + '"' if title else ""
    return "![" + alt + "](" + src + title_part + ")" if src else ""


def _blank(content: str, node: Element) -> str:
    return "\n\n" if _is_block(node) else ""


def _default(content: str, node: Element) -> str:
    return "\n\n" + content + "\n\n" if _is_block(node) else content


def _is_indented_code_block(node: Element) -> bool:
    return node.node_name == "PRE" and node.first is not None and _node_name(node.first) == "CODE"


def _is_inline_link(node: Element) -> bool:
    return node.node_name == "A" and bool(node.get_attribute("href"))


def _is_inline_code(node: Element) -> bool:
    has_siblings = node.prev is not None or node.next is not None
    is_code_block = node.parent is not None and node.parent.node_name == "PRE" and not has_siblings
    return node.node_name == "CODE" and not is_code_block


# turndown's CommonMark rules in their order; filters by lower-cased nodeName or by predicate.
_RULES: list[tuple[frozenset[str] | Callable[[Element], bool], Rule]] = [
    (frozenset({"p"}), _paragraph),
    (frozenset({"br"}), _line_break),
    (frozenset({"h1", "h2", "h3", "h4", "h5", "h6"}), _heading),
    (frozenset({"blockquote"}), _blockquote),
    (frozenset({"ul", "ol"}), _list),
    (frozenset({"li"}), _list_item),
    (_is_indented_code_block, _indented_code_block),
    (frozenset({"hr"}), _horizontal_rule),
    (_is_inline_link, _inline_link),
    (frozenset({"em", "i"}), _emphasis),
    (frozenset({"strong", "b"}), _strong),
    (_is_inline_code, _code),
    (frozenset({"img"}), _image),
]


def _rule_for(node: Element, facts: dict[Element, _Facts]) -> Rule:
    if _is_blank(node, facts):
        return _blank
    lowered = node.node_name.lower()
    for selector, rule in _RULES:
        if isinstance(selector, frozenset):
            if lowered in selector:
                return rule
        elif selector(node):
            return rule
    return _default


def html_to_markdown(html: str) -> str:
    """``new TurndownService().turndown(html)`` for a whole page's text."""
    if html == "":
        return ""
    root = parse_for_turndown(html)
    return _Converter().convert(root)

