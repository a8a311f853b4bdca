"""The grader's side of the control channel (decathlon.emulators.kit.control): reset, snapshot, restore and seed an
episode's emulators through their Unix sockets. The standard library only: the host and task-api call it.

    python -m decathlon.emulators.kit.control_client SOCKET health|reset
    python -m decathlon.emulators.kit.control_client SOCKET snapshot|restore|load_seed FOLDER

Where the sockets are: `<services folder>/control/<emulator>.sock` (the episode's services folder, the service
user's alone: decathlon/sandbox/services.py), written by the supervisor and the SaaS front as they start each
emulator. FOLDER is relative to that control folder, or absolute inside it; `stage_seed` copies a seed pack there.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import socket
import sys
from pathlib import Path
from typing import Any

from decathlon.emulators.kit.unix_path import bindable

CONTROL_DIR = "control"
TIMEOUT = 60.0  # a snapshot of a large table takes its time; a hang does not outlive this


class ControlError(RuntimeError):
    """The emulator refused (`code`, its message) or could not be reached."""

    def __init__(self, message: str, code: str = "unreachable", status: int = 0) -> None:
        super().__init__(message)
        self.code, self.status = code, status


def control_dir(services_home: Path) -> Path:
    """The folder of an episode's control sockets (and their state root), inside its services folder."""
    return services_home / CONTROL_DIR


def socket_of(services_home: Path, emulator: str) -> Path:
    return control_dir(services_home) / f"{emulator}.sock"


def sockets(services_home: Path) -> dict[str, Path]:
    """The control sockets there are, by emulator (an emulator the front has not started yet has none)."""
    folder = control_dir(services_home)
    try:
        return {p.stem: p for p in sorted(folder.iterdir()) if p.suffix == ".sock" and p.is_socket()}
    except OSError:
        return {}


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: Path, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        name, fd = bindable(self._path)
        try:
            sock.connect(name)
        except OSError:
            sock.close()
            raise
        finally:
            if fd is not None:
                os.close(fd)
        self.sock = sock


def call(sock: Path, method: str, path: str, body: dict[str, Any] | None = None,
         timeout: float = TIMEOUT) -> dict[str, Any]:
    """One request; the answer's JSON, or ControlError with the emulator's own message."""
    conn = _UnixConnection(sock, timeout)
    try:
        data = json.dumps(body).encode() if body is not None else None
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
        response = conn.getresponse()
        raw = response.read()
    except (OSError, http.client.HTTPException) as exc:
        raise ControlError(f"the control socket {sock} cannot be reached: {exc}") from None
    finally:
        conn.close()
    try:
        answer = json.loads(raw)
    except ValueError:
        raise ControlError(f"{sock} answered {response.status} with no JSON: {raw[:200]!r}", "bad_answer",
                           response.status) from None
    if response.status >= 400 or not answer.get("ok"):
        error = answer.get("error") or {}
        raise ControlError(str(error.get("message") or answer), str(error.get("code") or "error"), response.status)
    return answer


def health(sock: Path, timeout: float = TIMEOUT) -> dict[str, Any]:
    return call(sock, "GET", "/health", timeout=timeout)


def reset(sock: Path, timeout: float = TIMEOUT) -> dict[str, Any]:
    return call(sock, "POST", "/reset", {}, timeout)


def snapshot(sock: Path, folder: str | Path, timeout: float = TIMEOUT) -> dict[str, Any]:
    return call(sock, "POST", "/snapshot", {"folder": str(folder)}, timeout)


def restore(sock: Path, folder: str | Path, timeout: float = TIMEOUT) -> dict[str, Any]:
    return call(sock, "POST", "/restore", {"folder": str(folder)}, timeout)


def load_seed(sock: Path, folder: str | Path, timeout: float = TIMEOUT) -> dict[str, Any]:
    return call(sock, "POST", "/load_seed", {"folder": str(folder)}, timeout)


def stage_seed(pack: Path, services_home: Path, name: str, uid: int | None = None) -> Path:
    """Copy the seed pack `pack` into the control folder as `seeds/<name>` (replacing one there), readable by the
    emulators' user `uid` (None: whoever runs this); returns the copy's path, for `load_seed`."""
    if not (pack / "manifest.json").is_file():
        raise ControlError(f"{pack} is not a seed pack: it has no manifest.json", "bad_seed")
    target = control_dir(services_home) / "seeds" / name
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(pack, target, symlinks=False)
    if uid is not None:
        for folder in (target.parent, target, *(p for p in target.rglob("*"))):
            os.lchown(folder, uid, uid)
    return target


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m decathlon.emulators.kit.control_client",
                                description="Reset, snapshot, restore or seed an emulator through its control socket.")
    p.add_argument("socket", type=Path)
    p.add_argument("action", choices=("health", "reset", "snapshot", "restore", "load_seed"))
    p.add_argument("folder", nargs="?", help="for snapshot, restore and load_seed: a folder in the state root")
    a = p.parse_args(argv)
    if a.action in ("snapshot", "restore", "load_seed") and not a.folder:
        p.error(f"{a.action} needs a FOLDER")
    try:
        if a.action == "health":
            answer = health(a.socket)
        elif a.action == "reset":
            answer = reset(a.socket)
        else:
            answer = call(a.socket, "POST", f"/{a.action}", {"folder": a.folder})
    except ControlError as exc:
        print(json.dumps({"ok": False, "error": {"code": exc.code, "message": str(exc)}}), file=sys.stderr)
        return 1
    print(json.dumps(answer, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
