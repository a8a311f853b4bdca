"""HTML parsing in the shape of the WHATWG algorithm, as the reference's two parsers apply it.

The reference parses every page twice over, with different libraries: ``fetch_txt`` through
JSDOM (parse5, spec-exact) and ``fetch_markdown`` through turndown, which in Node uses domino.
What decides the text the model reads is where text ends up (head or body, inside or outside
a raw-text element, which block it sits in), so this follows the spec's tokenizer states and
the tree-construction rules that move content: implied head/body, raw text (script, style,
title, textarea, noscript with scripting enabled as both parsers have it), implied end tags,
scopes, the active formatting elements with the adoption agency algorithm, simplified table
handling with foster parenting of stray text and elements, select, and foreign (svg/math)
content. Not modelled: template insertion modes (template content is parsed as ordinary
children and then ignored), frameset, implied tbody/tr, form-pointer subtleties.

One domino quirk is reproduced on purpose because recorded runs show it: domino only
remembers the name of the last start tag that was *not* self-closing as the "appropriate end
tag", so ``<meta ...><script src=x /></script>`` leaves its tokenizer in script data until
the end of the input, and the rest of the page (the turndown wrapper's ``</x-turndown>``
included) becomes script text. Recorded ``fetch_markdown`` output of arXiv pages shows
exactly that.
"""

from __future__ import annotations

import re
from html import unescape
from html.entities import html5 as _NAMED_REFERENCES

from .dom import HTML, MATHML, SVG, Comment, Element, Text

_WS = "\t\n\f\r "
_TAG_NAME = re.compile(r"[^\t\n\f />]*")
_ATTR_NAME = re.compile(r"[^\t\n\f />][^\t\n\f />=]*")
_UNQUOTED_VALUE = re.compile(r"[^\t\n\f >]*")
_SPACES = re.compile(r"[\t\n\f ]*")


def _at(pattern: re.Pattern[str], src: str, pos: int) -> re.Match[str]:
    """`pattern.match` where it cannot fail: the patterns above match the empty string, but for _ATTR_NAME,
    which is tried only at a character it takes."""
    match = pattern.match(src, pos)
    assert match is not None
    return match
_ASCII_UPPER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_ATTR_REFERENCE = re.compile(r"&(#[xX][0-9a-fA-F]+;?|#[0-9]+;?|[A-Za-z][A-Za-z0-9]*;?)")
_SCRIPT_DOUBLE_ESCAPE_START = re.compile(r"<script[\t\n\f />]", re.I | re.A)
_SCRIPT_DOUBLE_ESCAPE_END = re.compile(r"</script[\t\n\f />]", re.I | re.A)

_HEAD_VOID = frozenset({"base", "basefont", "bgsound", "link", "meta"})
_HEAD_ELEMENTS = frozenset({"base", "basefont", "bgsound", "link", "meta", "noframes", "script", "style",
                            "template", "title"})
_CLOSES_P = frozenset({"address", "article", "aside", "blockquote", "center", "details", "dialog", "dir", "div",
                       "dl", "fieldset", "figcaption", "figure", "footer", "header", "hgroup", "main", "menu",
                       "nav", "ol", "p", "search", "section", "summary", "ul"})
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_BLOCK_END = (_CLOSES_P - {"p"}) | frozenset({"button", "listing", "pre"})
_FORMATTING = frozenset({"a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike", "strong",
                         "tt", "u"})
_IMPLIED_END = frozenset({"dd", "dt", "li", "optgroup", "option", "p", "rb", "rp", "rt", "rtc"})
_SCOPE = frozenset({"applet", "caption", "html", "table", "td", "th", "marquee", "object", "template"})
_FOREIGN_SCOPE = frozenset({(MATHML, "mi"), (MATHML, "mo"), (MATHML, "mn"), (MATHML, "ms"), (MATHML, "mtext"),
                            (MATHML, "annotation-xml"), (SVG, "foreignobject"), (SVG, "desc"), (SVG, "title")})
_SPECIAL = frozenset({
    "address", "applet", "area", "article", "aside", "base", "basefont", "bgsound", "blockquote", "body", "br",
    "button", "caption", "center", "col", "colgroup", "dd", "details", "dir", "div", "dl", "dt", "embed",
    "fieldset", "figcaption", "figure", "footer", "form", "frame", "frameset", "h1", "h2", "h3", "h4", "h5",
    "h6", "head", "header", "hgroup", "hr", "html", "iframe", "img", "input", "keygen", "li", "link",
    "listing", "main", "marquee", "menu", "meta", "nav", "noembed", "noframes", "noscript", "object", "ol", "p",
    "param", "plaintext", "pre", "script", "search", "section", "select", "source", "style", "summary",
    "table", "tbody", "td", "template", "textarea", "tfoot", "th", "thead", "title", "tr", "track", "ul",
    "wbr", "xmp",
})
_TABLE_CONTEXT = frozenset({"table", "tbody", "tfoot", "thead", "tr"})
_TABLE_SECTIONS = frozenset({"tbody", "tfoot", "thead"})
_TABLE_PARTS = frozenset({"caption", "col", "colgroup", "tbody", "td", "tfoot", "th", "thead", "tr"})
# Start tags that leave svg/math content and are handled as HTML again.
_BREAKOUT = frozenset({
    "b", "big", "blockquote", "body", "br", "center", "code", "dd", "div", "dl", "dt", "em", "embed", "h1",
    "h2", "h3", "h4", "h5", "h6", "head", "hr", "i", "img", "li", "listing", "menu", "meta", "nobr", "ol",
    "p", "pre", "ruby", "s", "small", "span", "strong", "strike", "sub", "sup", "table", "tt", "u", "ul",
    "var",
})

_MARKER = None  # a scope marker in the list of active formatting elements

# Raw-text tokenizer states.
_RAWTEXT, _RCDATA, _SCRIPT, _PLAINTEXT = "rawtext", "rcdata", "script", "plaintext"


class _OpenElements(list[Element]):
    """The stack of open elements, counting HTML element names so a scope check can say "none
    open" at once instead of walking the whole stack (a page nesting thousands of <div>s would
    otherwise make every <p> quadratic)."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: dict[str, int] = {}

    def _add(self, element: Element) -> None:
        if element.namespace == HTML:
            self.counts[element.name] = self.counts.get(element.name, 0) + 1

    def _drop(self, element: Element) -> None:
        if element.namespace == HTML:
            self.counts[element.name] -= 1

    def any_open(self, names: tuple[str, ...] | frozenset[str]) -> bool:
        return any(self.counts.get(name) for name in names)

    def append(self, element: Element) -> None:
        super().append(element)
        self._add(element)

    def insert(self, index: int, element: Element) -> None:  # type: ignore[override]
        super().insert(index, element)
        self._add(element)

    def pop(self, index: int = -1) -> Element:  # type: ignore[override]
        element = super().pop(index)
        self._drop(element)
        return element

    def remove(self, element: Element) -> None:
        super().remove(element)
        self._drop(element)

    def __delitem__(self, index: int | slice) -> None:  # type: ignore[override]
        removed = self[index] if isinstance(index, slice) else [self[index]]
        super().__delitem__(index)
        for element in removed:
            self._drop(element)

    def __setitem__(self, index: int, element: Element) -> None:  # type: ignore[override]
        self._drop(self[index])
        super().__setitem__(index, element)
        self._add(element)


def _lower(name: str) -> str:
    return name.translate(_ASCII_UPPER)


def _decode_attribute(value: str) -> str:
    """Character references in an attribute value; a legacy reference without ';' stays literal
    when an alphanumeric or '=' follows it, as the spec says for attributes."""
    if "&" not in value:
        return value

    def replace(match: re.Match[str]) -> str:
        ref = match.group(1)
        if ref.startswith("#"):
            return unescape("&" + ref)
        if ref.endswith(";") and ref in _NAMED_REFERENCES:
            return _NAMED_REFERENCES[ref]
        # Longest legacy (semicolon-less) prefix, but only if nothing alphanumeric or '=' follows it.
        for end in range(len(ref.rstrip(";")), 1, -1):
            if ref[:end] in _NAMED_REFERENCES:
                following = ref[end:end + 1] or value[match.end():match.end() + 1]
                if following and (following.isalnum() or following == "="):
                    return match.group(0)
                return _NAMED_REFERENCES[ref[:end]] + ref[end:]
        return match.group(0)

    return _ATTR_REFERENCE.sub(replace, value)


def _decode_text(text: str) -> str:
    return unescape(text) if "&" in text else text


class _Parser:
    def __init__(self, source: str, *, domino: bool) -> None:
        self.src = source
        self.domino = domino
        self.document = Element("#document", namespace="")
        self.html: Element | None = None
        self.head: Element | None = None
        self.body: Element | None = None
        self.stack = _OpenElements()
        self.afe: list[Element | None] = []  # active formatting elements (None is a marker)
        self.mode = "before_html"
        self.quirks = True  # until a doctype comes first
        self.seen_token = False
        self.last_start_tag = ""
        self.raw: tuple[str, str] | None = None  # (tokenizer state, appropriate end tag name)
        self.skip_newline = False
        self.foster_parenting = False  # set while a non-table token is handled inside a table
        self.first_element_with_id: dict[str, Element] = {}

    # ------------------------------------------------------------------ tokenizer

    def run(self) -> None:
        src = self.src
        n = len(src)
        pos = 0
        while pos < n:
            if self.raw is not None:
                pos = self._raw_text(pos)
                continue
            lt = src.find("<", pos)
            if lt == -1:
                self._text(src[pos:])
                break
            if lt > pos:
                self._text(src[pos:lt])
            pos = self._markup(lt)
        self._eof()

    def _text(self, raw: str, *, decode: bool = True) -> None:
        text = _decode_text(raw) if decode else raw
        if self.skip_newline:
            self.skip_newline = False
            if text.startswith("\n"):
                text = text[1:]
        if text:
            self.on_text(text)

    def _markup(self, lt: int) -> int:
        src = self.src
        following = src[lt + 1:lt + 2]
        if following == "!":
            if src.startswith("<!--", lt):
                return self._comment(lt + 4)
            if _lower(src[lt + 2:lt + 9]) == "doctype":
                end = src.find(">", lt)
                self.on_doctype()
                return len(src) if end == -1 else end + 1
            if src.startswith("<![CDATA[", lt) and self._in_foreign():
                end = src.find("]]>", lt + 9)
                stop = len(src) if end == -1 else end
                if stop > lt + 9:
                    self.on_text(src[lt + 9:stop])
                return len(src) if end == -1 else end + 3
            return self._bogus_comment(lt + 2)
        if following == "/":
            after = src[lt + 2:lt + 3]
            if after.isascii() and after.isalpha():
                return self._tag(lt + 2, end_tag=True)
            if after == ">":
                return lt + 3
            if not after:
                self._text("</", decode=False)
                return lt + 2
            return self._bogus_comment(lt + 2)
        if following.isascii() and following.isalpha():
            return self._tag(lt + 1, end_tag=False)
        if following == "?":
            return self._bogus_comment(lt + 1)
        self._text("<", decode=False)
        return lt + 1

    def _comment(self, start: int) -> int:
        src = self.src
        if src.startswith(">", start):
            self.on_comment("")
            return start + 1
        if src.startswith("->", start):
            self.on_comment("")
            return start + 2
        ends = [i for i in (src.find("-->", start), src.find("--!>", start)) if i != -1]
        if not ends:
            self.on_comment(src[start:])
            return len(src)
        end = min(ends)
        self.on_comment(src[start:end])
        return end + (3 if src.startswith("-->", end) else 4)

    def _bogus_comment(self, start: int) -> int:
        end = self.src.find(">", start)
        if end == -1:
            self.on_comment(self.src[start:])
            return len(self.src)
        self.on_comment(self.src[start:end])
        return end + 1

    def _tag(self, start: int, *, end_tag: bool, closes_raw: bool = False) -> int:
        src = self.src
        n = len(src)
        match = _at(_TAG_NAME, src, start)
        name = _lower(match.group()).replace("\x00", "\ufffd")
        i = match.end()
        attrs: dict[str, str] = {}
        self_closing = False
        while True:
            i = _at(_SPACES, src, i).end()
            if i >= n:
                return n  # EOF inside a tag: the tag is dropped
            char = src[i]
            if char == ">":
                i += 1
                break
            if char == "/":
                if src.startswith(">", i + 1):
                    self_closing = True
                    i += 2
                    break
                i += 1
                continue
            match = _at(_ATTR_NAME, src, i)
            attr = _lower(match.group())
            i = _at(_SPACES, src, match.end()).end()
            value = ""
            if src.startswith("=", i):
                i = _at(_SPACES, src, i + 1).end()
                if i >= n:
                    return n
                quote = src[i]
                if quote in "\"'":
                    close = src.find(quote, i + 1)
                    if close == -1:
                        return n
                    value = src[i + 1:close]
                    i = close + 1
                elif quote != ">":
                    match = _at(_UNQUOTED_VALUE, src, i)
                    value = match.group()
                    i = match.end()
                value = _decode_attribute(value)
            if attr not in attrs:
                attrs[attr] = value
        if closes_raw:
            self.stack.pop()  # the "text" insertion mode: any end tag pops the raw-text element
        elif end_tag:
            self.on_end(name)
        else:
            # domino forgets self-closing start tags when it later looks for the end of raw text.
            if not (self.domino and self_closing):
                self.last_start_tag = name
            self.on_start(name, attrs, self_closing)
        return i

    def _raw_text(self, pos: int) -> int:
        src = self.src
        assert self.raw is not None  # run() comes here only in raw text
        state, end_name = self.raw
        self.raw = None
        if state == _PLAINTEXT:
            self._raw_insert(src[pos:].replace("\x00", "\ufffd"))
            return len(src)
        end_re = re.compile("</" + re.escape(end_name) + "[\t\n\f />]", re.I | re.A)
        end = self._script_end(pos, end_re) if state == _SCRIPT else end_re.search(src, pos)
        stop = len(src) if end is None else end.start()
        text = src[pos:stop].replace("\x00", "\ufffd")
        self._raw_insert(_decode_text(text) if state == _RCDATA else text)
        if end is None:
            return len(src)
        return self._tag(stop + 2, end_tag=True, closes_raw=True)

    def _raw_insert(self, text: str) -> None:
        """Text of a raw-text element goes straight into it, whatever the insertion mode."""
        if self.skip_newline:
            self.skip_newline = False
            if text.startswith("\n"):
                text = text[1:]
        if text:
            self._insert_text(text, foster=False)

    def _script_end(self, pos: int, end_re: re.Pattern[str]) -> re.Match[str] | None:
        """The end tag closing script data, following the spec's escaped and double-escaped states."""
        src = self.src
        state = "data"
        i = pos
        while True:
            if state == "data":
                end = end_re.search(src, i)
                escape = src.find("<!--", i)
                if escape == -1 or (end is not None and end.start() < escape):
                    return end
                state, i = "escaped", escape + 2  # "<!-->" ends the escape at once
            elif state == "escaped":
                candidates = []
                close = src.find("-->", i)
                if close != -1:
                    candidates.append((close, "close"))
                end = end_re.search(src, i)
                if end is not None:
                    candidates.append((end.start(), "end"))
                double = _SCRIPT_DOUBLE_ESCAPE_START.search(src, i)
                if double is not None:
                    candidates.append((double.start(), "double"))
                if not candidates:
                    return None
                where, kind = min(candidates)
                if kind == "end":
                    return end
                if kind == "close":
                    state, i = "data", where + 3
                else:
                    state, i = "double", where + 7
            else:
                close = src.find("-->", i)
                leave = _SCRIPT_DOUBLE_ESCAPE_END.search(src, i)
                if close == -1 and leave is None:
                    return None
                if leave is None or (close != -1 and close < leave.start()):
                    state, i = "data", close + 3
                else:
                    state, i = "escaped", leave.start() + 8

    # ------------------------------------------------------------------ tree helpers

    @property
    def current(self) -> Element:
        return self.stack[-1] if self.stack else self.document

    def _in_foreign(self) -> bool:
        return bool(self.stack) and self.current.namespace not in (HTML, "")

    def _foster_location(self) -> tuple[Element, Element | None]:
        """Foster parenting: just before the innermost open table, in that table's parent."""
        for index in range(len(self.stack) - 1, -1, -1):
            element = self.stack[index]
            if element.is_html("table"):
                if element.parent is not None:
                    return element.parent, element
                return self.stack[index - 1], None
        return self.current, None

    def _insert_node(self, node: Element | Comment) -> None:
        if self.foster_parenting and self.current.is_html(*_TABLE_CONTEXT):
            parent, before = self._foster_location()
            parent.insert_before(node, before)
        else:
            self.current.append(node)

    def _insert_text(self, text: str, *, foster: bool) -> None:
        parent, before = self.current, None
        if foster and self.current.is_html(*_TABLE_CONTEXT):
            parent, before = self._foster_location()
        neighbour = before.prev if before is not None else parent.last
        if isinstance(neighbour, Text):
            neighbour.data += text
        else:
            parent.insert_before(Text(text), before)

    def _create(self, name: str, attrs: dict[str, str], namespace: str = HTML) -> Element:
        element = Element(name, attrs, namespace)
        element_id = attrs.get("id")
        if element_id is not None and element_id not in self.first_element_with_id:
            self.first_element_with_id[element_id] = element
        return element

    def _insert_element(self, name: str, attrs: dict[str, str], namespace: str = HTML, *,
                        push: bool = True) -> Element:
        element = self._create(name, attrs, namespace)
        self._insert_node(element)
        if push:
            self.stack.append(element)
        return element

    def _pop_until(self, *names: str) -> None:
        while self.stack:
            element = self.stack.pop()
            if element.is_html(*names):
                return

    def _pop_until_element(self, target: Element) -> None:
        while self.stack:
            if self.stack.pop() is target:
                return

    def _in_scope(self, names: frozenset[str] | tuple[str, ...], extra: frozenset[str] = frozenset()) -> bool:
        if not self.stack.any_open(names):
            return False
        for element in reversed(self.stack):
            if element.is_html(*names):
                return True
            if element.is_html(*_SCOPE) or element.is_html(*extra) or (element.namespace, element.name) in _FOREIGN_SCOPE:
                return False
        return False

    def _in_button_scope(self, name: str) -> bool:
        return self._in_scope((name,), frozenset({"button"}))

    def _in_table_scope(self, *names: str) -> bool:
        if not self.stack.any_open(names):
            return False
        for element in reversed(self.stack):
            if element.is_html(*names):
                return True
            if element.is_html("html", "table", "template"):
                return False
        return False

    def _element_in_scope(self, target: Element) -> bool:
        for element in reversed(self.stack):
            if element is target:
                return True
            if element.is_html(*_SCOPE) or (element.namespace, element.name) in _FOREIGN_SCOPE:
                return False
        return False

    def _generate_implied_end_tags(self, keep: str = "") -> None:
        while self.stack and self.current.namespace == HTML and self.current.name in _IMPLIED_END \
                and self.current.name != keep:
            self.stack.pop()

    def _close_p(self) -> None:
        if self._in_button_scope("p"):
            self._generate_implied_end_tags("p")
            self._pop_until("p")

    @staticmethod
    def _is_special(element: Element) -> bool:
        if element.namespace == HTML:
            return element.name in _SPECIAL
        return (element.namespace, element.name) in _FOREIGN_SCOPE

    # ------------------------------------------------------------------ active formatting elements

    def _push_formatting(self, element: Element) -> None:
        # Noah's Ark: at most three equal entries after the last marker.
        same = []
        for index in range(len(self.afe) - 1, -1, -1):
            entry = self.afe[index]
            if entry is _MARKER:
                break
            if entry.name == element.name and entry.namespace == element.namespace and entry.attrs == element.attrs:
                same.append(index)
        if len(same) >= 3:
            del self.afe[same[-1]]
        self.afe.append(element)

    def _reconstruct_formatting(self) -> None:
        if not self.afe:
            return
        entry = self.afe[-1]
        if entry is _MARKER or entry in self.stack:
            return
        index = len(self.afe) - 1
        while index > 0:
            previous = self.afe[index - 1]
            if previous is _MARKER or previous in self.stack:
                break
            index -= 1
        for position in range(index, len(self.afe)):
            old = self.afe[position]
            assert old is not None  # no marker from index on: the walk back stopped at the first one
            clone = self._insert_element(old.name, old.attrs, old.namespace)
            self.afe[position] = clone

    def _clear_formatting_to_marker(self) -> None:
        while self.afe:
            if self.afe.pop() is _MARKER:
                return

    def _adoption_agency(self, subject: str) -> None:
        current = self.current
        if current.is_html(subject) and current not in self.afe:
            self.stack.pop()
            return
        for _ in range(8):
            formatting: Element | None = None
            for index in range(len(self.afe) - 1, -1, -1):
                entry = self.afe[index]
                if entry is _MARKER:
                    break
                if entry.is_html(subject):
                    formatting = entry
                    break
            if formatting is None:
                self._any_other_end_tag(subject)
                return
            if formatting not in self.stack:
                self.afe.remove(formatting)
                return
            if not self._element_in_scope(formatting):
                return
            formatting_index = self.stack.index(formatting)
            furthest: Element | None = None
            for element in self.stack[formatting_index + 1:]:
                if self._is_special(element):
                    furthest = element
                    break
            if furthest is None:
                self._pop_until_element(formatting)
                self.afe.remove(formatting)
                return
            common_ancestor = self.stack[formatting_index - 1]
            bookmark = self.afe.index(formatting)
            node = last_node = furthest
            node_index = self.stack.index(furthest)
            inner = 0
            while True:
                inner += 1
                node_index -= 1
                node = self.stack[node_index]
                if node is formatting:
                    break
                if inner > 3 and node in self.afe:
                    position = self.afe.index(node)
                    if position < bookmark:
                        bookmark -= 1
                    del self.afe[position]
                if node not in self.afe:
                    del self.stack[node_index]
                    continue
                clone = self._create(node.name, node.attrs, node.namespace)
                self.afe[self.afe.index(node)] = clone
                self.stack[node_index] = clone
                node = clone
                if last_node is furthest:
                    bookmark = self.afe.index(clone) + 1
                node.append(last_node)
                last_node = node
            if common_ancestor.is_html(*_TABLE_CONTEXT):
                parent, before = self._foster_location()
                parent.insert_before(last_node, before)
            else:
                common_ancestor.append(last_node)
            clone = self._create(formatting.name, formatting.attrs, formatting.namespace)
            for child in list(furthest.children()):
                clone.append(child)
            furthest.append(clone)
            position = self.afe.index(formatting)
            if position < bookmark:
                bookmark -= 1
            del self.afe[position]
            self.afe.insert(min(bookmark, len(self.afe)), clone)
            self.stack.remove(formatting)
            self.stack.insert(self.stack.index(furthest) + 1, clone)

    # ------------------------------------------------------------------ tokens

    def on_doctype(self) -> None:
        if self.mode == "before_html" and not self.seen_token:
            self.quirks = False
        self.seen_token = True

    def on_comment(self, data: str) -> None:
        self.skip_newline = False  # only a newline right after <pre>/<listing>/<textarea> is dropped
        self.seen_token = True
        if not self.stack:
            return  # a comment outside <html> never reaches any text
        self._insert_node(Comment(data))

    def on_text(self, text: str) -> None:
        self.seen_token = True
        if self.mode in ("before_html", "before_head", "in_head", "after_head"):
            stripped = text.lstrip(_WS)
            leading = text[: len(text) - len(stripped)]
            if self.mode in ("in_head", "after_head") and leading:
                self._insert_text(leading, foster=False)
            if not stripped:
                return
            self._leave_head_modes()
            text = stripped
        if self._in_foreign():
            self._insert_text(text.replace("\x00", "\ufffd"), foster=False)
            return
        text = text.replace("\x00", "")
        if not text:
            return
        if not text.strip(_WS):
            self._insert_text(text, foster=False)  # whitespace stays inside a table
            return
        self.foster_parenting = True
        try:
            self._reconstruct_formatting()
            self._insert_text(text, foster=True)
        finally:
            self.foster_parenting = False

    def _leave_head_modes(self) -> None:
        """Text or an element that belongs in the body: imply whatever is missing up to <body>."""
        if self.mode == "before_html":
            self._start_html({})
        if self.mode == "before_head":
            self._start_head({})
        if self.mode == "in_head":
            self._pop_until("head")
            self.mode = "after_head"
        if self.mode == "after_head":
            self.body = self._insert_element("body", {})
            self.mode = "in_body"

    def _start_html(self, attrs: dict[str, str]) -> None:
        self.html = self._create("html", attrs)
        self.document.append(self.html)
        self.stack.append(self.html)
        self.mode = "before_head"

    def _start_head(self, attrs: dict[str, str]) -> None:
        self.head = self._insert_element("head", attrs)
        self.mode = "in_head"

    def on_start(self, name: str, attrs: dict[str, str], self_closing: bool) -> None:
        self.skip_newline = False  # only a newline right after <pre>/<listing>/<textarea> is dropped
        self.seen_token = True
        mode = self.mode
        if mode == "before_html":
            if name == "html":
                self._start_html(attrs)
                return
            self._start_html({})
            mode = self.mode
        if mode == "before_head":
            if name == "html":
                return
            self._start_head(attrs if name == "head" else {})
            if name == "head":
                return
            mode = self.mode
        if mode == "in_head":
            if self._head_start_tag(name, attrs):
                return
            self._pop_until("head")
            self.mode = mode = "after_head"
        if mode == "after_head":
            if name == "body" or name == "frameset":
                self.body = self._insert_element(name, attrs)
                self.mode = "in_body"
                return
            if name in _HEAD_ELEMENTS and self.head is not None:
                self.stack.append(self.head)
                self._head_start_tag(name, attrs)
                self.stack.remove(self.head)
                return
            if name in ("head", "html"):
                return
            self.body = self._insert_element("body", {})
            self.mode = "in_body"
        self._body_start_tag(name, attrs, self_closing)

    def _head_start_tag(self, name: str, attrs: dict[str, str]) -> bool:
        """The start tags "in head" handles; False for anything that ends the head."""
        if name in _HEAD_VOID:
            self._insert_element(name, attrs, push=False)
        elif name == "title":
            self._start_raw(name, attrs, _RCDATA)
        elif name in ("noscript", "noframes", "style"):
            self._start_raw(name, attrs, _RAWTEXT)  # noscript too: both parsers run with scripting on
        elif name == "script":
            self._start_raw(name, attrs, _SCRIPT)
        elif name == "template":
            self._insert_element(name, attrs)
            self.afe.append(_MARKER)
        elif name in ("head", "html"):
            pass
        else:
            return False
        return True

    def _start_raw(self, name: str, attrs: dict[str, str], state: str) -> None:
        self._insert_element(name, attrs)
        # The appropriate end tag is the last start tag the tokenizer remembered (see module doc).
        self.raw = (state, self.last_start_tag)
        if name == "textarea":
            self.skip_newline = True

    def _body_start_tag(self, name: str, attrs: dict[str, str], self_closing: bool) -> None:
        current = self.current
        if current.namespace not in (HTML, "") and (current.namespace, current.name) not in _FOREIGN_SCOPE:
            if name in _BREAKOUT or (name == "font" and ({"color", "face", "size"} & set(attrs))):
                while self.stack and self.current.namespace not in (HTML, "") \
                        and (self.current.namespace, self.current.name) not in _FOREIGN_SCOPE:
                    self.stack.pop()
            else:
                self._insert_element(name, attrs, current.namespace, push=not self_closing)
                return
        if self._in_select() and self._select_start_tag(name, attrs):
            return
        if name in _TABLE_PARTS or name == "table":
            self._table_start_tag(name, attrs)
            return
        if name in ("html", "head", "body", "frameset", "frame"):
            return
        if name in _HEAD_ELEMENTS:
            self._head_start_tag(name, attrs)
            return
        self.foster_parenting = True  # takes effect only while the current node is table structure
        try:
            self._flow_start_tag(name, attrs, self_closing)
        finally:
            self.foster_parenting = False

    def _flow_start_tag(self, name: str, attrs: dict[str, str], self_closing: bool) -> None:
        if name in _CLOSES_P:
            self._close_p()
            self._insert_element(name, attrs)
        elif name in _HEADINGS:
            self._close_p()
            if self.current.is_html(*_HEADINGS):
                self.stack.pop()
            self._insert_element(name, attrs)
        elif name in ("pre", "listing"):
            self._close_p()
            self._insert_element(name, attrs)
            self.skip_newline = True
        elif name == "form":
            self._close_p()
            self._insert_element(name, attrs)
        elif name == "li" or name in ("dd", "dt"):
            closing = ("li",) if name == "li" else ("dd", "dt")
            for element in reversed(self.stack):
                if element.is_html(*closing):
                    self._generate_implied_end_tags(element.name)
                    self._pop_until(element.name)
                    break
                if self._is_special(element) and not element.is_html("address", "div", "p"):
                    break
            self._close_p()
            self._insert_element(name, attrs)
        elif name == "plaintext":
            self._close_p()
            self._insert_element(name, attrs)
            self.raw = (_PLAINTEXT, "")
        elif name == "button":
            if self._in_scope(("button",)):
                self._generate_implied_end_tags()
                self._pop_until("button")
            self._reconstruct_formatting()
            self._insert_element(name, attrs)
        elif name == "a":
            for entry in reversed(self.afe):
                if entry is _MARKER:
                    break
                if entry.is_html("a"):
                    self._adoption_agency("a")
                    if entry in self.afe:
                        self.afe.remove(entry)
                    if entry in self.stack:
                        self.stack.remove(entry)
                    break
            self._reconstruct_formatting()
            self._push_formatting(self._insert_element(name, attrs))
        elif name == "nobr":
            self._reconstruct_formatting()
            if self._in_scope(("nobr",)):
                self._adoption_agency("nobr")
                self._reconstruct_formatting()
            self._push_formatting(self._insert_element(name, attrs))
        elif name in _FORMATTING:
            self._reconstruct_formatting()
            self._push_formatting(self._insert_element(name, attrs))
        elif name in ("applet", "marquee", "object"):
            self._reconstruct_formatting()
            self._insert_element(name, attrs)
            self.afe.append(_MARKER)
        elif name in ("area", "br", "embed", "img", "image", "keygen", "wbr", "input"):
            self._reconstruct_formatting()
            self._insert_element("img" if name == "image" else name, attrs, push=False)
        elif name in ("param", "source", "track"):
            self._insert_element(name, attrs, push=False)
        elif name == "hr":
            self._close_p()
            self._insert_element(name, attrs, push=False)
        elif name == "textarea":
            self._start_raw(name, attrs, _RCDATA)
        elif name == "xmp":
            self._close_p()
            self._reconstruct_formatting()
            self._start_raw(name, attrs, _RAWTEXT)
        elif name in ("iframe", "noembed", "noscript"):
            self._start_raw(name, attrs, _RAWTEXT)
        elif name == "select":
            self._reconstruct_formatting()
            self._insert_element(name, attrs)
        elif name in ("optgroup", "option"):
            if self.current.is_html("option"):
                self.stack.pop()
            self._reconstruct_formatting()
            self._insert_element(name, attrs)
        elif name in ("rb", "rtc"):
            if self._in_scope(("ruby",)):
                self._generate_implied_end_tags()
            self._insert_element(name, attrs)
        elif name in ("rp", "rt"):
            if self._in_scope(("ruby",)):
                self._generate_implied_end_tags("rtc")
            self._insert_element(name, attrs)
        elif name in ("svg", "math"):
            self._reconstruct_formatting()
            self._insert_element(name, attrs, SVG if name == "svg" else MATHML, push=not self_closing)
        else:
            self._reconstruct_formatting()
            self._insert_element(name, attrs)

    def _in_select(self) -> bool:
        for element in reversed(self.stack):
            if element.is_html("select"):
                return True
            if not element.is_html("option", "optgroup"):
                return False
        return False

    def _select_start_tag(self, name: str, attrs: dict[str, str]) -> bool:
        """In a select only options, scripts and a few closers count; other start tags are dropped."""
        if name in ("option", "optgroup"):
            if self.current.is_html("option"):
                self.stack.pop()
            if name == "optgroup" and self.current.is_html("optgroup"):
                self.stack.pop()
            self._insert_element(name, attrs)
        elif name in ("select", "input", "keygen", "textarea"):
            self._pop_until("select")
            if name != "select":
                self._body_start_tag(name, attrs, False)
        elif name in ("script", "template", "style"):
            self._head_start_tag(name, attrs)
        return True

    def _clear_to(self, *names: str) -> None:
        while self.stack and not self.current.is_html(*names, "html", "template"):
            self.stack.pop()

    def _table_start_tag(self, name: str, attrs: dict[str, str]) -> None:
        if name == "table":
            innermost = next((e for e in reversed(self.stack) if e.is_html("table", "td", "th", "caption")), None)
            if innermost is not None and innermost.is_html("table"):
                self._pop_until("table")  # a table directly inside a table closes it
            elif not self.quirks:
                self._close_p()
            self._insert_element(name, attrs)
            return
        if not self._in_table_scope("table"):
            return  # table parts outside a table are ignored
        if name in ("caption", "colgroup"):
            self._clear_to("table")
            self._insert_element(name, attrs)
            if name == "caption":
                self.afe.append(_MARKER)
        elif name == "col":
            self._insert_element(name, attrs, push=False)
        elif name in _TABLE_SECTIONS:
            self._close_cell()
            self._clear_to("table")
            self._insert_element(name, attrs)
        elif name == "tr":
            self._close_cell()
            self._clear_to("table", *_TABLE_SECTIONS)
            self._insert_element(name, attrs)
        else:  # td, th
            self._close_cell()
            self._clear_to("tr", "table", *_TABLE_SECTIONS)
            self._insert_element(name, attrs)
            self.afe.append(_MARKER)

    def _close_cell(self) -> None:
        if self._in_table_scope("td", "th"):
            self._generate_implied_end_tags()
            self._pop_until("td", "th")
            self._clear_formatting_to_marker()

    def on_end(self, name: str) -> None:
        self.skip_newline = False  # only a newline right after <pre>/<listing>/<textarea> is dropped
        self.seen_token = True
        mode = self.mode
        if mode == "before_html":
            if name not in ("head", "body", "html", "br"):
                return
            self._start_html({})
            mode = self.mode
        if mode == "before_head":
            if name not in ("head", "body", "html", "br"):
                return
            self._start_head({})
            mode = self.mode
        if mode == "in_head":
            if name == "head":
                self._pop_until("head")
                self.mode = "after_head"
                return
            if name == "template":
                self._end_template()
                return
            if name not in ("body", "html", "br"):
                return
            self._pop_until("head")
            self.mode = mode = "after_head"
        if mode == "after_head":
            if name == "template":
                self._end_template()
                return
            if name not in ("body", "html", "br"):
                return
            self.body = self._insert_element("body", {})
            self.mode = "in_body"
        self._body_end_tag(name)

    def _end_template(self) -> None:
        if any(e.is_html("template") for e in self.stack):
            self._generate_implied_end_tags()
            self._pop_until("template")
            self._clear_formatting_to_marker()

    def _body_end_tag(self, name: str) -> None:
        current = self.current
        if current.namespace not in (HTML, ""):
            for index in range(len(self.stack) - 1, 0, -1):
                element = self.stack[index]
                if _lower(element.name) == name and element.namespace != HTML:
                    del self.stack[index:]
                    return
                if element.namespace == HTML:
                    break
        if self._in_select() and name in ("select", "option", "optgroup"):
            if name == "select":
                self._pop_until("select")
            elif name == "option" and self.current.is_html("option"):
                self.stack.pop()
            elif name == "optgroup":
                if self.current.is_html("option") and len(self.stack) > 1 and self.stack[-2].is_html("optgroup"):
                    self.stack.pop()
                if self.current.is_html("optgroup"):
                    self.stack.pop()
            return
        if name in ("body", "html"):
            return  # "after body" reprocesses everything in body: nothing moves
        if name == "template":
            self._end_template()
        elif name in _BLOCK_END or name == "form":
            if self._in_scope((name,)):
                self._generate_implied_end_tags()
                self._pop_until(name)
        elif name == "p":
            if not self._in_button_scope("p"):
                self._insert_element("p", {}, push=False)
                return
            self._generate_implied_end_tags("p")
            self._pop_until("p")
        elif name == "li":
            if self._in_scope(("li",), frozenset({"ol", "ul"})):
                self._generate_implied_end_tags("li")
                self._pop_until("li")
        elif name in ("dd", "dt"):
            if self._in_scope((name,)):
                self._generate_implied_end_tags(name)
                self._pop_until(name)
        elif name in _HEADINGS:
            if self._in_scope(tuple(_HEADINGS)):
                self._generate_implied_end_tags()
                self._pop_until(*_HEADINGS)
        elif name in _FORMATTING:
            self._adoption_agency(name)
        elif name in ("applet", "marquee", "object"):
            if self._in_scope((name,)):
                self._generate_implied_end_tags()
                self._pop_until(name)
                self._clear_formatting_to_marker()
        elif name == "br":
            self._reconstruct_formatting()
            self._insert_element("br", {}, push=False)
        elif name == "table":
            if self._in_table_scope("table"):
                self._pop_until("table")
        elif name in ("td", "th", "caption"):
            if self._in_table_scope(name):
                self._generate_implied_end_tags()
                self._pop_until(name)
                self._clear_formatting_to_marker()
        elif name in ("tr", "colgroup") or name in _TABLE_SECTIONS:
            if self._in_table_scope(name):
                self._close_cell()
                self._pop_until(name)
        elif name in ("col", "frameset", "frame"):
            return
        else:
            self._any_other_end_tag(name)

    def _any_other_end_tag(self, name: str) -> None:
        for index in range(len(self.stack) - 1, -1, -1):
            element = self.stack[index]
            if element.is_html(name):
                self._generate_implied_end_tags(name)
                del self.stack[self.stack.index(element):]
                return
            if self._is_special(element):
                return

    def _eof(self) -> None:
        if self.body is None:
            self._leave_head_modes()


def parse_document(source: str) -> tuple[Element, Element]:
    """Parse a whole page as JSDOM does; returns (document element tree root, body)."""
    parser = _Parser(_normalize_newlines(source), domino=False)
    parser.run()
    assert parser.body is not None
    return parser.document, parser.body


def parse_for_turndown(source: str) -> Element:
    """Parse ``<x-turndown id="turndown-root">`` + source + ``</x-turndown>`` as domino does; returns the wrapper."""
    wrapped = '<x-turndown id="turndown-root">' + source + "</x-turndown>"
    parser = _Parser(_normalize_newlines(wrapped), domino=True)
    parser.run()
    return parser.first_element_with_id["turndown-root"]


def _normalize_newlines(source: str) -> str:
    # The input stream preprocessor: CRLF and lone CR become LF before tokenizing.
    return source.replace("\r\n", "\n").replace("\r", "\n") if "\r" in source else source
