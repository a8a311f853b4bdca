"""Which version of each server package a checkout pins, and which one is installed here.

Toolathlon pins in three places, by launcher: `uv run` resolves through the project's `uv.lock`;
`uvx` runs what its Dockerfile installed with `uv tool install PKG@VER` (or a git commit of a fork);
`npx` runs what `npm install` put in node_modules from `package-lock.json`.
"""
from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

_TOOL = re.compile(r"uv tool install\s+(\S+)")


@dataclass(frozen=True)
class Pin:
    version: str
    origin: str  # the checkout's file that says so

    def to_json(self) -> dict:
        return {"version": self.version, "from": self.origin}


def _normal(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


class CheckoutPins:
    def __init__(self, source: Path) -> None:
        self.lock = self._uv_lock(source / "uv.lock")
        self.tools = self._dockerfile(source / "Dockerfile")
        self.npm = self._package_lock(source / "package-lock.json")

    @staticmethod
    def _uv_lock(path: Path) -> dict[str, str]:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return {}
        return {_normal(str(p.get("name"))): str(p.get("version")) for p in data.get("package") or []
                if isinstance(p, dict) and p.get("name") and p.get("version")}

    @staticmethod
    def _dockerfile(path: Path) -> dict[str, str]:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return {}
        pins = {}
        for spec in _TOOL.findall(text):
            if spec.startswith("git+"):
                url, _, commit = spec.rpartition("@")
                pins[_normal(url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git"))] = f"git {url[4:]}@{commit[:12]}"
            elif "@" in spec:
                name, _, version = spec.partition("@")
                pins[_normal(name)] = version
        return pins

    @staticmethod
    def _package_lock(path: Path) -> dict[str, str]:
        try:
            packages = json.loads(path.read_text(encoding="utf-8")).get("packages") or {}
        except (OSError, UnicodeDecodeError, ValueError, AttributeError):
            return {}
        return {key.removeprefix("node_modules/"): str(value.get("version")) for key, value in packages.items()
                if key.count("node_modules/") == 1 and isinstance(value, dict) and value.get("version")}

    def pin(self, launcher: str, registry: str | None, package: str | None) -> Pin | None:
        if not package:
            return None
        if registry == "npm":
            version = self.npm.get(package)
            return Pin(version, "package-lock.json") if version else None
        key = _normal(package)
        if launcher == "uvx" and key in self.tools:
            return Pin(self.tools[key], "Dockerfile")
        if key in self.lock:
            return Pin(self.lock[key], "uv.lock")
        return None


def installed_version(env: Path, package: str) -> str | None:
    """The version in a server's virtualenv, read from its dist-info (nothing is imported)."""
    want = _normal(package)
    for site in sorted(env.glob("lib/python3*/site-packages")):
        for dist in metadata.distributions(path=[str(site)]):
            if _normal(dist.metadata["Name"] or "") == want:
                return dist.version
    return None


CI_SERVERS = Path(__file__).resolve().parents[2] / "ci" / "servers"


def ci_pin(env: str | None, package: str | None, folder: Path = CI_SERVERS) -> str | None:
    """The version `ci/install_servers.py` installs `package` at in the virtualenv `env` (ci/servers/<env>.txt), or
    None: not pinned there (a stand-in's virtualenv holds only what it drives), or this installation has no ci/."""
    if not env or not package:
        return None
    try:
        lines = (folder / f"{env}.txt").read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    want = _normal(package)
    for line in lines:
        name, sep, version = line.split("#", 1)[0].strip().partition("==")
        if sep and _normal(name.split("[", 1)[0]) == want:
            return version.strip()
    return None
