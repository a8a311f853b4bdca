"""A minimal DOM: what the parser builds and what turndown and the text extractor read.

Siblings are linked, as in a browser DOM, because turndown's whitespace pass removes nodes
while it walks the tree and its rules look at ``previousSibling`` / ``nextSibling``.
"""

from __future__ import annotations

from collections.abc import Iterator

HTML = "html"
SVG = "svg"
MATHML = "math"


class Node:
    __slots__ = ("parent", "prev", "next")

    def __init__(self) -> None:
        self.parent: Element | None = None
        self.prev: Node | None = None
        self.next: Node | None = None

    def detach(self) -> None:
        if self.parent is not None:
            self.parent.remove_child(self)


class Text(Node):
    __slots__ = ("data",)

    def __init__(self, data: str) -> None:
        super().__init__()
        self.data = data


class Comment(Node):
    __slots__ = ("data",)

    def __init__(self, data: str) -> None:
        super().__init__()
        self.data = data


class Element(Node):
    __slots__ = ("name", "namespace", "attrs", "first", "last")

    def __init__(self, name: str, attrs: dict[str, str] | None = None, namespace: str = HTML) -> None:
        super().__init__()
        self.name = name  # local name: lower case for HTML elements
        self.namespace = namespace
        self.attrs: dict[str, str] = dict(attrs or {})
        self.first: Node | None = None
        self.last: Node | None = None

    @property
    def node_name(self) -> str:
        # DOM nodeName: upper case in the HTML namespace, as written elsewhere (svg, math).
        return self.name.upper() if self.namespace == HTML else self.name

    def is_html(self, *names: str) -> bool:
        return self.namespace == HTML and self.name in names

    @property
    def is_template(self) -> bool:
        # A template's parsed children are its "content" fragment, not DOM children: no text
        # extractor or converter ever sees them.
        return self.namespace == HTML and self.name == "template"

    def children(self) -> Iterator[Node]:
        """childNodes, robust to the current child being removed while iterating."""
        node = self.first
        while node is not None:
            following = node.next
            yield node
            node = following

    def element_children(self) -> list[Element]:
        return [node for node in self.children() if isinstance(node, Element)]

    def append(self, child: Node) -> None:
        child.detach()
        child.parent = self
        child.prev = self.last
        child.next = None
        if self.last is None:
            self.first = child
        else:
            self.last.next = child
        self.last = child

    def insert_before(self, child: Node, reference: Node | None) -> None:
        if reference is None:
            self.append(child)
            return
        child.detach()
        child.parent = self
        child.next = reference
        child.prev = reference.prev
        if reference.prev is None:
            self.first = child
        else:
            reference.prev.next = child
        reference.prev = child

    def remove_child(self, child: Node) -> None:
        if child.prev is None:
            self.first = child.next
        else:
            child.prev.next = child.next
        if child.next is None:
            self.last = child.prev
        else:
            child.next.prev = child.prev
        child.parent = child.prev = child.next = None

    def get_attribute(self, name: str) -> str | None:
        return self.attrs.get(name)

    def descendants(self) -> Iterator[Node]:
        """Tree order, not entering template contents; iterative, so depth is unlimited."""
        node = self.first
        while node is not None:
            yield node
            if isinstance(node, Element) and node.first is not None and not node.is_template:
                node = node.first
                continue
            while node is not None and node.next is None:
                node = node.parent
                if node is self:
                    return
            if node is None:
                return
            node = node.next


def text_content(node: Node) -> str:
    """DOM textContent: the data of every descendant text node, in tree order."""
    if isinstance(node, (Text, Comment)):
        return node.data
    assert isinstance(node, Element)
    if node.is_template:
        return ""
    return "".join(child.data for child in node.descendants() if isinstance(child, Text))
