"""What a Toolathlon server definition launches, read off its `command` and `args` as written.

Upstream starts every server through a package runner (`npx -y PKG`, `uvx PKG`, `uvx --from PKG
ENTRY`, `uv run ENTRY` / `uv run -m MODULE`) or from its own tree (`node ${local_servers_paths}/…`,
`${local_binary_paths}/…`). None of those runners can fetch anything offline, so the launch is
parsed into the package it names and the arguments the server itself receives; the catalogue then
says how that package runs here. Parsing happens on the unfilled YAML: the answer must not depend on
secrets (`${token.*}`) a replay-only server would never need.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from decathlon.errors import InfraError, Kind

# Runner options that take a value (the next word), so that value is not mistaken for the package.
_NPX_VALUED = {"-p", "--package", "--cache", "--registry", "--userconfig"}
_UVX_VALUED = {"--from", "--with", "--with-requirements", "--with-editable", "-p", "--python", "--index",
               "--index-url", "--extra-index-url", "--directory", "--project", "--cache-dir", "--config-file"}
_UV_VALUED = _UVX_VALUED | {"--group", "--extra", "--package", "--env-file"}
_LOCAL_TREES = ("${local_servers_paths}", "${local_binary_paths}")
_LOCAL_SERVERS = "${local_servers_paths}/"
_VERSION = re.compile(r"^(@?[^@=<>~!\s]+)(?:@|==)(.+)$")
KNOWN_LAUNCHERS = ("npx", "uvx", "uv run", "node", "python", "an absolute path",
                   "${local_servers_paths}/…", "${local_binary_paths}/…")


@dataclass(frozen=True)
class Launch:
    """kind: npx | uvx | uv-run | local | python | direct."""

    kind: str
    package: str | None = None  # as the registry names it (npm or PyPI), version stripped
    local: str | None = None  # local: the folder under ${local_servers_paths} a `node` launch runs from
    version: str | None = None  # a version written into the launch itself (`pkg@1.2`), if any
    entry: str | None = None  # console script to run
    module: str | None = None  # or `python -m` module
    args: list[str] = field(default_factory=list)  # what the server itself is given
    written: str = ""  # the launch as written, for messages

    @property
    def registry(self) -> str | None:
        return {"npx": "npm", "uvx": "pypi", "uv-run": "pypi"}.get(self.kind)


def _split_version(spec: str) -> tuple[str, str | None]:
    m = _VERSION.match(spec)
    return (m.group(1), m.group(2)) if m else (spec, None)


def _options(words: list[str], valued: set[str]) -> tuple[dict[str, str], list[str]]:
    """Leading runner options, and the words after them."""
    opts: dict[str, str] = {}
    i = 0
    while i < len(words) and words[i].startswith("-") and words[i] != "-m":
        word = words[i]
        if "=" in word and word.startswith("--"):
            key, _, value = word.partition("=")
            opts[key] = value
        elif word in valued and i + 1 < len(words):
            opts[word] = words[i + 1]
            i += 1
        else:
            opts[word] = ""
        i += 1
    return opts, words[i:]


def parse_launch(server: str, command: str, args: list[str]) -> Launch:
    written = " ".join([command, *args])
    base = command.rsplit("/", 1)[-1]
    if base == "node" and args and args[0].startswith(_LOCAL_SERVERS):
        # `node ${local_servers_paths}/NAME/build/index.js ARGS…`: the server is NAME, and it is given ARGS
        return Launch("local", local=args[0][len(_LOCAL_SERVERS):].split("/")[0] or None, args=list(args[1:]),
                      written=written)
    if any(command.startswith(t) for t in _LOCAL_TREES) or (
            base == "node" and args and any(args[0].startswith(t) for t in _LOCAL_TREES)):
        return Launch("local", args=list(args), written=written)
    if base == "npx":
        _, rest = _options(list(args), _NPX_VALUED)
        if not rest:
            raise InfraError(Kind.UNKNOWN_LAUNCHER, f"server {server}: `{written}` names no npm package")
        package, version = _split_version(rest[0])
        return Launch("npx", package=package, version=version, entry=package, args=rest[1:], written=written)
    if base == "uvx":
        opts, rest = _options(list(args), _UVX_VALUED)
        if not rest:
            raise InfraError(Kind.UNKNOWN_LAUNCHER, f"server {server}: `{written}` names no command to run")
        package, version = _split_version(opts.get("--from") or rest[0])
        return Launch("uvx", package=package, version=version, entry=rest[0], args=rest[1:], written=written)
    if base == "uv":
        opts, rest = _options(list(args), _UV_VALUED)
        if not rest or rest[0] != "run":
            raise InfraError(Kind.UNKNOWN_LAUNCHER, f"server {server}: `{written}`: only `uv run …` starts a server")
        run_opts, rest = _options(rest[1:], _UV_VALUED)
        if not rest:
            raise InfraError(Kind.UNKNOWN_LAUNCHER, f"server {server}: `{written}` names nothing to run")
        if opts.get("--directory", "").startswith(_LOCAL_TREES) or run_opts.get("--directory", "").startswith(
                _LOCAL_TREES) or rest[0].startswith(_LOCAL_TREES) or rest[0].endswith(".py"):
            return Launch("local", args=list(args), written=written)
        if rest[0] == "-m":
            if len(rest) < 2:
                raise InfraError(Kind.UNKNOWN_LAUNCHER, f"server {server}: `{written}`: -m names no module")
            return Launch("uv-run", module=rest[1], args=rest[2:], written=written)
        return Launch("uv-run", entry=rest[0], args=rest[1:], written=written)
    if base in ("python", "python3") or command == "${decathlon_python}":
        return Launch("python", args=list(args), written=written)
    if command.startswith("/") or command.startswith("${decathlon_servers}"):
        return Launch("direct", args=list(args), written=written)
    raise InfraError(Kind.UNKNOWN_LAUNCHER, f"server {server}: unknown launcher {command!r} in `{written}`; "
                     f"known: {', '.join(KNOWN_LAUNCHERS)}")
