"""Confinement of every path argument to the allowed root directories.

Mirrors the reference server's ``validatePath``:

1. ``~`` / ``~/...`` expand to the home directory (as the reference does); the
   result is still subject to the root check, so it can never reach outside.
2. Relative paths resolve against the first root (the reference uses its
   working directory, which is the workspace in recorded runs).
3. The lexically normalised absolute path must be inside a root, otherwise
   ``Access denied - path outside allowed directories: <abs> not in <roots>``.
4. Existing paths are resolved with realpath; a result outside the roots is
   ``Access denied - symlink target outside allowed directories: ...``.
5. Missing paths need an existing parent whose realpath is inside a root,
   otherwise ``Parent directory does not exist: <parent>`` (the reference
   reports an outside parent with that same text, because its catch-all
   swallows the more specific message). Only the immediate parent counts,
   which is why ``create_directory a/b`` fails when ``a`` is missing.

Deliberate tightening over the reference: a missing path that is a dangling
symlink pointing outside is refused, and missing paths are returned under the
real parent so a later operation cannot be redirected through a symlinked
parent.
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat

from .errors import ToolError, node_error


def _lexical_absolute(base: str, requested: str) -> str:
    joined = posixpath.normpath(posixpath.join(base, requested))
    # POSIX normpath keeps a leading "//", Node's path.resolve does not.
    if joined.startswith("//"):
        joined = "/" + joined.lstrip("/")
    return joined


def _expand_home(requested: str) -> str:
    if requested == "~" or requested.startswith("~/"):
        return os.path.expanduser("~") + requested[1:]
    return requested


def _is_within(path: str, root: str) -> bool:
    if root == "/":
        return path.startswith("/")
    return path == root or path.startswith(root + "/")


class Sandbox:
    """The set of allowed roots and the validation of paths against them."""

    def __init__(self, roots: list[str]) -> None:
        if not roots:
            raise ValueError("at least one root directory is required")
        self.roots = roots

    @classmethod
    def from_arguments(cls, arguments: list[str]) -> Sandbox:
        """Resolve command-line roots to real absolute directories.

        Raises ValueError naming the first root that is not an accessible
        directory, mirroring the reference's refusal to start.
        """
        roots: list[str] = []
        for argument in arguments:
            absolute = _lexical_absolute(os.getcwd(), _expand_home(argument))
            try:
                resolved = os.path.realpath(absolute, strict=True)
            except OSError:
                resolved = absolute
            try:
                info = os.stat(resolved)
            except OSError as exc:
                raise ValueError(f"Error accessing directory {resolved}: {exc}") from exc
            if not stat.S_ISDIR(info.st_mode):
                raise ValueError(f"Error: {resolved} is not a directory")
            if resolved not in roots:
                roots.append(resolved)
        return cls(roots)

    def contains(self, path: str) -> bool:
        if "\x00" in path:
            return False
        return any(_is_within(path, root) for root in self.roots)

    def _roots_text(self) -> str:
        return ", ".join(self.roots)

    def absolute(self, requested: str) -> str:
        """The lexically resolved absolute form of ``requested`` (no checks)."""
        return _lexical_absolute(self.roots[0], _expand_home(requested))

    def validate(self, requested: str) -> str:
        """Return the real path to operate on, or raise ToolError."""
        absolute = self.absolute(requested)
        if not self.contains(absolute):
            raise ToolError(f"Access denied - path outside allowed directories: {absolute} not in {self._roots_text()}")
        try:
            real = os.path.realpath(absolute, strict=True)
        except OSError as exc:
            if exc.errno != errno.ENOENT:
                raise node_error(exc, "realpath", absolute) from exc
            return self._validate_missing(absolute)
        if not self.contains(real):
            raise ToolError(
                f"Access denied - symlink target outside allowed directories: {real} not in {self._roots_text()}"
            )
        return real

    def _validate_missing(self, absolute: str) -> str:
        parent = posixpath.dirname(absolute)
        try:
            real_parent = os.path.realpath(parent, strict=True)
        except OSError:
            raise ToolError(f"Parent directory does not exist: {parent}") from None
        if not self.contains(real_parent) or not os.path.isdir(real_parent):
            raise ToolError(f"Parent directory does not exist: {parent}")
        candidate = posixpath.join(real_parent, posixpath.basename(absolute))
        # A dangling symlink as the final component would let a later create
        # follow it to wherever it points.
        target = os.path.realpath(candidate)
        if not self.contains(target):
            raise ToolError(
                f"Access denied - symlink target outside allowed directories: {target} not in {self._roots_text()}"
            )
        return candidate

    def is_allowed_entry(self, path: str) -> bool:
        """Whether a directory entry found while walking may be reported/followed."""
        try:
            self.validate(path)
        except ToolError:
            return False
        return True
