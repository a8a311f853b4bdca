"""End-to-end tests of the offline filesystem MCP stand-in, driven over stdio with the mcp client.

One server process (rooted at a module-level temporary workspace) is shared by
all tests in this module; every test works in its own subdirectory, so tests
are independent of order and of pytest-xdist distribution.
"""

from __future__ import annotations

import json
import os
import re
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client

REPO_ROOT = Path(__file__).resolve().parents[1]
EXPECTED_TOOLS = {
    "read_file",
    "read_multiple_files",
    "write_file",
    "edit_file",
    "create_directory",
    "list_directory",
    "list_directory_with_sizes",
    "directory_tree",
    "move_file",
    "search_files",
    "get_file_info",
    "list_allowed_directories",
}


@dataclass
class Server:
    portal: BlockingPortal
    session: ClientSession
    root: Path
    home: Path
    tool_names: set[str]

    def call(self, name: str, arguments: dict[str, Any] | None) -> tuple[str, bool]:
        result = self.portal.call(self.session.call_tool, name, arguments)
        assert len(result.content) == 1
        return result.content[0].text, result.is_error

    def ok(self, name: str, arguments: dict[str, Any] | None) -> str:
        text, is_error = self.call(name, arguments)
        assert not is_error, text
        return text

    def error(self, name: str, arguments: dict[str, Any] | None) -> str:
        text, is_error = self.call(name, arguments)
        assert is_error, text
        assert text.startswith("Error: "), text
        return text

    def denied(self, requested: str) -> str:
        return f"Error: Access denied - path outside allowed directories: {requested} not in {self.root}"

    def symlink_denied(self, target: Path) -> str:
        return f"Error: Access denied - symlink target outside allowed directories: {target} not in {self.root}"


@asynccontextmanager
async def _connect(root: Path, home: Path) -> AsyncIterator[tuple[ClientSession, set[str]]]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "decathlon.standins.filesystem", str(root)],
        cwd=str(REPO_ROOT),
        env={**get_default_environment(), "HOME": str(home), "PYTHONPATH": str(REPO_ROOT)},
    )
    async with stdio_client(params) as (read_stream, write_stream), ClientSession(read_stream, write_stream) as session:
        await session.initialize()
        tools = await session.list_tools()
        yield session, {tool.name for tool in tools.tools}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = Path(os.path.realpath(tmp_path_factory.mktemp("ws")))
    home = Path(os.path.realpath(tmp_path_factory.mktemp("home")))
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(_connect(root, home)) as connected:
        session, names = connected
        yield Server(portal, session, root, home, names)


@pytest.fixture
def ws(server: Server) -> Path:
    """A fresh directory inside the served root for one test."""
    path = server.root / f"t_{uuid.uuid4().hex[:12]}"
    path.mkdir()
    return path


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory outside the served root, holding a secret file."""
    path = Path(os.path.realpath(tmp_path)) / "outside"
    path.mkdir()
    (path / "secret.txt").write_text("TOP SECRET\n")
    return path


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() if p.is_file() else b"<dir>" for p in directory.rglob("*")}


# --- tool list -------------------------------------------------------------------------------


def test_lists_exactly_the_reference_tools(server: Server) -> None:
    assert server.tool_names == EXPECTED_TOOLS


def test_list_allowed_directories(server: Server) -> None:
    assert server.ok("list_allowed_directories", {}) == f"Allowed directories:\n{server.root}"


# --- read_file ---------------------------------------------------------------------------------


def test_read_file_full_head_tail(server: Server, ws: Path) -> None:
    (ws / "f.txt").write_text("a\nb\nc\n")
    path = str(ws / "f.txt")
    assert server.ok("read_file", {"path": path}) == "a\nb\nc\n"
    assert server.ok("read_file", {"path": path, "head": 2}) == "a\nb"
    assert server.ok("read_file", {"path": path, "head": 10}) == "a\nb\nc"
    # The reference counts the empty string after the final newline as a line.
    assert server.ok("read_file", {"path": path, "tail": 2}) == "c\n"
    assert server.ok("read_file", {"path": path, "tail": 3}) == "b\nc\n"
    assert server.ok("read_file", {"path": path, "head": 0}) == "a\nb\nc\n"


def test_read_file_head_keeps_carriage_returns(server: Server, ws: Path) -> None:
    (ws / "crlf.csv").write_bytes(b"x,y\r\n1,2\r\n3,4\r\n")
    assert server.ok("read_file", {"path": str(ws / "crlf.csv"), "head": 2}) == "x,y\r\n1,2\r"
    assert server.ok("read_file", {"path": str(ws / "crlf.csv"), "tail": 2}) == "3,4\n"


def test_read_file_head_splits_characters_at_chunk_boundary_like_reference(server: Server, ws: Path) -> None:
    (ws / "zh.txt").write_bytes(b"a" * 1023 + "有".encode() + b"\nnext\n")
    path = str(ws / "zh.txt")
    assert server.ok("read_file", {"path": path, "head": 1}) == "a" * 1023 + "\ufffd\ufffd\ufffd"
    assert server.ok("read_file", {"path": path}) == "a" * 1023 + "有\nnext\n"


def test_read_file_relative_path_resolves_against_root(server: Server, ws: Path) -> None:
    (ws / "rel.txt").write_text("relative")
    assert server.ok("read_file", {"path": f"{ws.name}/rel.txt"}) == "relative"


def test_read_file_both_head_and_tail(server: Server, ws: Path) -> None:
    (ws / "f.txt").write_text("a\n")
    text = server.error("read_file", {"path": str(ws / "f.txt"), "head": 1, "tail": 1})
    assert text == "Error: Cannot specify both head and tail parameters simultaneously"


def test_read_file_missing(server: Server, ws: Path) -> None:
    missing = ws / "nope.md"
    assert server.error("read_file", {"path": str(missing)}) == (
        f"Error: ENOENT: no such file or directory, open '{missing}'"
    )


def test_read_file_directory(server: Server, ws: Path) -> None:
    assert server.error("read_file", {"path": str(ws)}) == "Error: EISDIR: illegal operation on a directory, read"


def test_read_binary_file_decodes_with_replacement(server: Server, ws: Path) -> None:
    data = b"PK\x03\x04\x00\x89\xff\xfeabc\xe6\x9c\x89"
    (ws / "b.bin").write_bytes(data)
    assert server.ok("read_file", {"path": str(ws / "b.bin")}) == data.decode("utf-8", "replace")


def test_read_huge_file_is_not_truncated(server: Server, ws: Path) -> None:
    content = "".join(f"line {i:06d} " + "x" * 50 + "\n" for i in range(6000))
    (ws / "big.txt").write_text(content)
    assert server.ok("read_file", {"path": str(ws / "big.txt")}) == content


# --- read_multiple_files -----------------------------------------------------------------------


def test_read_multiple_files(server: Server, ws: Path, outside: Path) -> None:
    (ws / "one.txt").write_text("first\n")
    (ws / "two.txt").write_text("second")
    paths = [str(ws / "one.txt"), f"{ws.name}/two.txt", str(ws / "gone.txt"), str(outside / "secret.txt")]
    assert server.ok("read_multiple_files", {"paths": paths}) == (
        f"{ws / 'one.txt'}:\nfirst\n\n"
        "\n---\n"
        f"{ws.name}/two.txt:\nsecond\n"
        "\n---\n"
        f"{ws / 'gone.txt'}: Error - ENOENT: no such file or directory, open '{ws / 'gone.txt'}'"
        "\n---\n"
        f"{outside / 'secret.txt'}: Error - Access denied - path outside allowed directories: "
        f"{outside / 'secret.txt'} not in {server.root}"
    )


# --- write_file / create_directory / move_file -------------------------------------------------


def test_write_file_creates_and_overwrites(server: Server, ws: Path) -> None:
    path = ws / "w.txt"
    assert server.ok("write_file", {"path": str(path), "content": "one\r\ntwo"}) == f"Successfully wrote to {path}"
    assert path.read_bytes() == b"one\r\ntwo"
    assert server.ok("write_file", {"path": str(path), "content": "ünïcode"}) == f"Successfully wrote to {path}"
    assert path.read_text(encoding="utf-8") == "ünïcode"
    assert sorted(p.name for p in ws.iterdir()) == ["w.txt"]


def test_write_file_relative_echoes_given_path(server: Server, ws: Path) -> None:
    relative = f"{ws.name}/r.txt"
    assert server.ok("write_file", {"path": relative, "content": "x"}) == f"Successfully wrote to {relative}"
    assert (ws / "r.txt").read_text() == "x"


def test_write_file_parent_missing(server: Server, ws: Path) -> None:
    text = server.error("write_file", {"path": str(ws / "no" / "f.txt"), "content": "x"})
    assert text == f"Error: Parent directory does not exist: {ws / 'no'}"
    assert not (ws / "no").exists()


def test_create_directory(server: Server, ws: Path) -> None:
    path = ws / "School"
    assert server.ok("create_directory", {"path": str(path)}) == f"Successfully created directory {path}"
    assert path.is_dir()
    assert server.ok("create_directory", {"path": str(path)}) == f"Successfully created directory {path}"


def test_create_directory_needs_existing_parent(server: Server, ws: Path) -> None:
    text = server.error("create_directory", {"path": str(ws / "Work" / "Projects")})
    assert text == f"Error: Parent directory does not exist: {ws / 'Work'}"


def test_create_directory_over_file(server: Server, ws: Path) -> None:
    (ws / "f").write_text("")
    assert server.error("create_directory", {"path": str(ws / "f")}) == (
        f"Error: EEXIST: file already exists, mkdir '{ws / 'f'}'"
    )


def test_move_file(server: Server, ws: Path) -> None:
    (ws / "a.txt").write_text("payload")
    (ws / "dest").mkdir()
    source, destination = str(ws / "a.txt"), str(ws / "dest" / "b.txt")
    text = server.ok("move_file", {"source": source, "destination": destination})
    assert text == f"Successfully moved {source} to {destination}"
    assert not (ws / "a.txt").exists()
    assert (ws / "dest" / "b.txt").read_text() == "payload"


def test_move_missing_source(server: Server, ws: Path) -> None:
    source, destination = ws / "none", ws / "x"
    assert server.error("move_file", {"source": str(source), "destination": str(destination)}) == (
        f"Error: ENOENT: no such file or directory, rename '{source}' -> '{destination}'"
    )


# --- listings ----------------------------------------------------------------------------------


def _make_listing_fixture(ws: Path) -> None:
    (ws / "b_dir").mkdir()
    (ws / "b_dir" / "inner.txt").write_text("12345")
    (ws / ".hidden").mkdir()
    (ws / "README.md").write_bytes(b"x" * 1152)
    (ws / "alpha.py").write_bytes(b"y" * 100)
    (ws / "Zeta.txt").write_bytes(b"")


def test_list_directory(server: Server, ws: Path) -> None:
    _make_listing_fixture(ws)
    assert server.ok("list_directory", {"path": str(ws)}) == (
        "[DIR] .hidden\n[FILE] README.md\n[FILE] Zeta.txt\n[FILE] alpha.py\n[DIR] b_dir"
    )


def test_list_directory_missing(server: Server, ws: Path) -> None:
    assert server.error("list_directory", {"path": str(ws / "x")}) == (
        f"Error: ENOENT: no such file or directory, scandir '{ws / 'x'}'"
    )


def test_list_directory_with_sizes(server: Server, ws: Path) -> None:
    _make_listing_fixture(ws)
    by_name = server.ok("list_directory_with_sizes", {"path": str(ws), "sortBy": "name"})
    # 1152 B is exactly 1.125 KB: JavaScript's toFixed rounds that half up.
    assert by_name == "\n".join(
        [
            f"[DIR] {'.hidden':<30} ",
            f"[FILE] {'alpha.py':<30} {'100 B':>10}",
            f"[DIR] {'b_dir':<30} ",
            f"[FILE] {'README.md':<30} {'1.13 KB':>10}",
            f"[FILE] {'Zeta.txt':<30} {'0 B':>10}",
            "",
            "Total: 3 files, 2 directories",
            "Combined size: 1.22 KB",
        ]
    )
    assert server.ok("list_directory_with_sizes", {"path": str(ws)}) == by_name
    by_size = server.ok("list_directory_with_sizes", {"path": str(ws), "sortBy": "size"})
    assert [line.split()[1] for line in by_size.split("\n")[:5] if "FILE" in line] == [
        "README.md",
        "alpha.py",
        "Zeta.txt",
    ]


def test_directory_tree(server: Server, ws: Path) -> None:
    _make_listing_fixture(ws)
    expected = [
        {"name": ".hidden", "type": "directory", "children": []},
        {"name": "README.md", "type": "file"},
        {"name": "Zeta.txt", "type": "file"},
        {"name": "alpha.py", "type": "file"},
        {"name": "b_dir", "type": "directory", "children": [{"name": "inner.txt", "type": "file"}]},
    ]
    assert server.ok("directory_tree", {"path": str(ws)}) == json.dumps(expected, indent=2)


def test_search_files(server: Server, ws: Path) -> None:
    (ws / "config").mkdir()
    (ws / "config" / "redis-values.yaml").write_text("")
    (ws / "k8s_configs").mkdir()
    (ws / "k8s_configs" / "cluster-CONFIG.yaml").write_text("")
    (ws / "node_modules").mkdir()
    (ws / "node_modules" / "config.js").write_text("")
    text = server.ok("search_files", {"path": str(ws), "pattern": "Config"})
    assert text == "\n".join(
        str(ws / p) for p in ["config", "k8s_configs", "k8s_configs/cluster-CONFIG.yaml", "node_modules/config.js"]
    )
    excluded = server.ok("search_files", {"path": str(ws), "pattern": "config", "excludePatterns": ["node_modules"]})
    assert excluded == "\n".join(str(ws / p) for p in ["config", "k8s_configs", "k8s_configs/cluster-CONFIG.yaml"])
    globbed = server.ok("search_files", {"path": str(ws), "pattern": "config", "excludePatterns": ["**/*.yaml"]})
    assert globbed == "\n".join(str(ws / p) for p in ["config", "k8s_configs", "node_modules/config.js"])
    assert server.ok("search_files", {"path": str(ws), "pattern": "kubeconfig"}) == "No matches found"


def test_get_file_info(server: Server, ws: Path) -> None:
    path = ws / "info.txt"
    path.write_text("hello")
    path.chmod(0o644)
    text = server.ok("get_file_info", {"path": str(path)})
    date = r"[A-Z][a-z]{2} [A-Z][a-z]{2} \d{2} \d{4} \d{2}:\d{2}:\d{2} GMT[+-]\d{4} \(.+\)"
    assert re.fullmatch(
        rf"size: 5\ncreated: {date}\nmodified: {date}\naccessed: {date}\n"
        r"isDirectory: false\nisFile: true\npermissions: 644",
        text,
    ), text
    directory = server.ok("get_file_info", {"path": str(ws)})
    assert "isDirectory: true\nisFile: false\n" in directory


# --- edit_file ---------------------------------------------------------------------------------


def _diff_header(path: Path) -> str:
    return f"```diff\nIndex: {path}\n{'=' * 67}\n--- {path}\toriginal\n+++ {path}\tmodified\n"


def test_edit_file_diff_and_write(server: Server, ws: Path) -> None:
    path = ws / "e.txt"
    path.write_text("line1\nline2\nline3\n")
    text = server.ok("edit_file", {"path": str(path), "edits": [{"oldText": "line2", "newText": "LINE2"}]})
    assert text == _diff_header(path) + "@@ -1,3 +1,3 @@\n line1\n-line2\n+LINE2\n line3\n```\n\n"
    assert path.read_text() == "line1\nLINE2\nline3\n"


def test_edit_file_dry_run_leaves_file(server: Server, ws: Path) -> None:
    path = ws / "d.txt"
    path.write_text("keep me\n")
    text = server.ok(
        "edit_file", {"path": str(path), "edits": [{"oldText": "keep", "newText": "drop"}], "dryRun": True}
    )
    assert text == _diff_header(path) + "@@ -1,1 +1,1 @@\n-keep me\n+drop me\n```\n\n"
    assert path.read_text() == "keep me\n"


def test_edit_file_no_newline_at_end(server: Server, ws: Path) -> None:
    path = ws / "n.tex"
    path.write_text("a\nb")
    text = server.ok("edit_file", {"path": str(path), "edits": [{"oldText": "b", "newText": "b\n\nc"}]})
    assert text == _diff_header(path) + (
        "@@ -1,2 +1,4 @@\n a\n-b\n\\ No newline at end of file\n+b\n+\n+c\n\\ No newline at end of file\n```\n\n"
    )


def test_edit_file_separate_hunks_and_multiple_edits(server: Server, ws: Path) -> None:
    path = ws / "m.txt"
    path.write_text("".join(f"{i}\n" for i in range(1, 21)))
    edits = [{"oldText": "2\n", "newText": "two\n"}, {"oldText": "19\n", "newText": "nineteen\n"}]
    text = server.ok("edit_file", {"path": str(path), "edits": edits})
    assert text == _diff_header(path) + (
        "@@ -1,6 +1,6 @@\n 1\n-2\n+two\n 3\n 4\n 5\n 6\n"
        "@@ -15,6 +15,6 @@\n 15\n 16\n 17\n 18\n-19\n+nineteen\n 20\n```\n\n"
    )


def test_edit_file_whitespace_flexible_match(server: Server, ws: Path) -> None:
    path = ws / "code.py"
    path.write_text("def f():\n    x = 1\n    return x\n")
    edits = [{"oldText": "  x = 1\n  return x", "newText": "  y = 2\n  return y"}]
    server.ok("edit_file", {"path": str(path), "edits": edits})
    assert path.read_text() == "def f():\n    y = 2\n    return y\n"


def test_edit_file_crlf_and_fence_growth(server: Server, ws: Path) -> None:
    path = ws / "w.md"
    path.write_bytes(b"text\r\n```\r\nend\r\n")
    text = server.ok("edit_file", {"path": str(path), "edits": [{"oldText": "end", "newText": "END"}]})
    assert text.startswith("````diff\n") and text.endswith("````\n\n")
    assert path.read_bytes() == b"text\n```\nEND\n"


def test_edit_file_no_match(server: Server, ws: Path) -> None:
    path = ws / "x.txt"
    path.write_text("abc\n")
    text = server.error("edit_file", {"path": str(path), "edits": [{"oldText": "zzz", "newText": "y"}]})
    assert text == "Error: Could not find exact match for edit:\nzzz"
    assert path.read_text() == "abc\n"


# --- escapes -----------------------------------------------------------------------------------


def test_absolute_path_outside_root(server: Server, outside: Path) -> None:
    secret = outside / "secret.txt"
    assert server.error("read_file", {"path": str(secret)}) == server.denied(str(secret))
    target = outside / "new.txt"
    assert server.error("write_file", {"path": str(target), "content": "x"}) == server.denied(str(target))
    assert not target.exists()
    assert server.error("list_directory", {"path": "/"}) == server.denied("/")


def test_dotdot_escape(server: Server, ws: Path, outside: Path) -> None:
    before = _snapshot(outside)
    relative_escape = os.path.relpath(outside / "secret.txt", server.root)
    assert relative_escape.startswith("..")
    assert server.error("read_file", {"path": relative_escape}) == server.denied(str(outside / "secret.txt"))
    sneaky = f"{ws}/../../{os.path.relpath(outside, server.root.parent)}/evil.txt"
    assert server.error("write_file", {"path": sneaky, "content": "x"}) == server.denied(os.path.normpath(sneaky))
    assert server.error("create_directory", {"path": str(server.root / ".." / "escaped")}) == server.denied(
        str(server.root.parent / "escaped")
    )
    assert not (server.root.parent / "escaped").exists()
    assert _snapshot(outside) == before


def test_prefix_sibling_is_not_inside(server: Server) -> None:
    sibling = server.root.parent / (server.root.name + "-evil")
    sibling.mkdir(exist_ok=True)
    (sibling / "loot.txt").write_text("loot")
    assert server.error("read_file", {"path": str(sibling / "loot.txt")}) == server.denied(str(sibling / "loot.txt"))
    assert server.error("write_file", {"path": str(sibling / "new.txt"), "content": "x"}) == server.denied(
        str(sibling / "new.txt")
    )
    assert sorted(p.name for p in sibling.iterdir()) == ["loot.txt"]


def test_symlinked_file_pointing_outside(server: Server, ws: Path, outside: Path) -> None:
    before = _snapshot(outside)
    link = ws / "link.txt"
    link.symlink_to(outside / "secret.txt")
    expected = server.symlink_denied(outside / "secret.txt")
    assert server.error("read_file", {"path": str(link)}) == expected
    assert server.error("read_file", {"path": str(link), "head": 1}) == expected
    assert server.error("write_file", {"path": str(link), "content": "pwned"}) == expected
    assert server.error("edit_file", {"path": str(link), "edits": [{"oldText": "TOP", "newText": "x"}]}) == expected
    assert server.error("get_file_info", {"path": str(link)}) == expected
    multi = server.ok("read_multiple_files", {"paths": [str(link)]})
    assert "TOP SECRET" not in multi
    assert _snapshot(outside) == before
    assert link.is_symlink()


def test_symlinked_directory_pointing_outside(server: Server, ws: Path, outside: Path) -> None:
    before = _snapshot(outside)
    link = ws / "door"
    link.symlink_to(outside, target_is_directory=True)
    assert server.error("list_directory", {"path": str(link)}) == server.symlink_denied(outside)
    assert server.error("directory_tree", {"path": str(link)}) == server.symlink_denied(outside)
    assert server.error("search_files", {"path": str(link), "pattern": "secret"}) == server.symlink_denied(outside)
    assert server.error("read_file", {"path": str(link / "secret.txt")}) == server.symlink_denied(
        outside / "secret.txt"
    )
    text = server.error("write_file", {"path": str(link / "planted.txt"), "content": "x"})
    assert text == f"Error: Parent directory does not exist: {link}"
    assert server.error("create_directory", {"path": str(link / "sub")}).startswith("Error: ")
    assert _snapshot(outside) == before


def test_dangling_symlink_pointing_outside(server: Server, ws: Path, outside: Path) -> None:
    link = ws / "dangling.txt"
    link.symlink_to(outside / "will-be-created.txt")
    text = server.error("write_file", {"path": str(link), "content": "x"})
    assert text == server.symlink_denied(outside / "will-be-created.txt")
    assert not (outside / "will-be-created.txt").exists()
    assert server.error("move_file", {"source": str(link), "destination": str(ws / "moved")}).startswith("Error: ")


def test_move_file_refuses_either_end_outside(server: Server, ws: Path, outside: Path) -> None:
    before = _snapshot(outside)
    (ws / "mine.txt").write_text("mine")
    out_target = outside / "stolen.txt"
    text = server.error("move_file", {"source": str(ws / "mine.txt"), "destination": str(out_target)})
    assert text == server.denied(str(out_target))
    assert (ws / "mine.txt").read_text() == "mine"
    text = server.error("move_file", {"source": str(outside / "secret.txt"), "destination": str(ws / "in.txt")})
    assert text == server.denied(str(outside / "secret.txt"))
    assert not (ws / "in.txt").exists()
    assert _snapshot(outside) == before


def test_walks_do_not_follow_or_reveal_outside_links(server: Server, ws: Path, outside: Path) -> None:
    (outside / "secret_dir").mkdir()
    (outside / "secret_dir" / "secret_plan.txt").write_text("plan")
    (ws / "secret_local.txt").write_text("ok")
    (ws / "secret_link").symlink_to(outside / "secret_dir", target_is_directory=True)
    (ws / "size_link").symlink_to(outside / "secret.txt")
    assert server.ok("search_files", {"path": str(ws), "pattern": "secret"}) == str(ws / "secret_local.txt")
    tree = json.loads(server.ok("directory_tree", {"path": str(ws)}))
    assert {"name": "secret_link", "type": "file"} in tree
    sizes = server.ok("list_directory_with_sizes", {"path": str(ws)})
    assert re.search(r"\[FILE\] size_link +0 B\n", sizes), sizes


def test_search_outside_root(server: Server, outside: Path) -> None:
    assert server.error("search_files", {"path": str(outside), "pattern": "secret"}) == server.denied(str(outside))


def test_home_expansion_stays_confined(server: Server) -> None:
    (server.home / "secret.txt").write_text("home secret")
    assert server.error("read_file", {"path": "~/secret.txt"}) == server.denied(f"{server.home}/secret.txt")
    assert server.error("write_file", {"path": "~/planted.txt", "content": "x"}) == server.denied(
        f"{server.home}/planted.txt"
    )
    assert not (server.home / "planted.txt").exists()


def test_null_byte_path(server: Server, ws: Path) -> None:
    assert server.error("read_file", {"path": f"{ws}/a\x00b"}).startswith("Error: Access denied")


# --- malformed arguments -----------------------------------------------------------------------


def _issues(text: str, tool: str) -> list[dict[str, Any]]:
    prefix = f"Error: Invalid arguments for {tool}: "
    assert text.startswith(prefix), text
    return json.loads(text[len(prefix) :])


def test_missing_required_argument(server: Server) -> None:
    text = server.error("read_file", {})
    assert text == (
        'Error: Invalid arguments for read_file: [\n  {\n    "code": "invalid_type",\n'
        '    "expected": "string",\n    "received": "undefined",\n    "path": [\n      "path"\n'
        '    ],\n    "message": "Required"\n  }\n]'
    )
    assert _issues(server.error("write_file", None), "write_file")[1]["path"] == ["content"]


def test_wrong_argument_types(server: Server, ws: Path) -> None:
    issue = _issues(server.error("read_file", {"path": 123}), "read_file")[0]
    assert issue["message"] == "Expected string, received number"
    issue = _issues(server.error("read_file", {"path": str(ws), "head": "5"}), "read_file")[0]
    assert (issue["path"], issue["message"]) == (["head"], "Expected number, received string")
    issue = _issues(server.error("read_multiple_files", {"paths": "a.txt"}), "read_multiple_files")[0]
    assert issue["message"] == "Expected array, received string"
    issue = _issues(server.error("read_multiple_files", {"paths": ["a", 7]}), "read_multiple_files")[0]
    assert issue["path"] == ["paths", 1]
    edits = [{"oldText": "a"}]
    issue = _issues(server.error("edit_file", {"path": str(ws), "edits": edits}), "edit_file")[0]
    assert (issue["path"], issue["message"]) == (["edits", 0, "newText"], "Required")
    issue = _issues(server.error("edit_file", {"path": str(ws), "edits": [], "dryRun": "yes"}), "edit_file")[0]
    assert issue["message"] == "Expected boolean, received string"
    text = server.error("list_directory_with_sizes", {"path": str(ws), "sortBy": "date"})
    issue = _issues(text, "list_directory_with_sizes")[0]
    assert issue["message"] == "Invalid enum value. Expected 'name' | 'size', received 'date'"


def test_unknown_tool(server: Server) -> None:
    assert server.error("delete_everything", {}) == "Error: Unknown tool: delete_everything"
