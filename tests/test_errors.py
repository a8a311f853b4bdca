"""The error taxonomy: one enum of kinds, each described, the docs generated from it, no free-string kind."""
from __future__ import annotations

import ast
from pathlib import Path

from decathlon import errors
from decathlon.contract.replies import sandbox_error
from decathlon.errors import DESCRIPTIONS, DecathlonError, InfraError, Kind

ROOT = Path(__file__).resolve().parent.parent


def test_docs_list_every_kind_as_the_code_describes_it():
    doc = (ROOT / "docs" / "errors.md").read_text(encoding="utf-8")
    assert doc == errors.markdown(), "docs/errors.md is stale: python -m decathlon.errors > docs/errors.md"
    assert all(f"| `{k}` |" in doc for k in Kind)


def test_every_kind_is_described():
    assert sorted(DESCRIPTIONS) == sorted(Kind) and all(DESCRIPTIONS[k].strip() for k in Kind)


def _kind_literals() -> list[tuple[str, int, str]]:
    """Every string written as an error's kind in the package: {"kind": "...", "message": ...} and
    InfraError("...", ...)."""
    found = []
    for path in sorted((ROOT / "decathlon").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            keys = {k.value for k in node.keys if isinstance(k, ast.Constant)} if isinstance(node, ast.Dict) else set()
            if {"kind", "message"} <= keys:  # an error record ({kind, message, phase})
                for k, v in zip(node.keys, node.values):
                    if isinstance(k, ast.Constant) and k.value == "kind" and isinstance(v, ast.Constant) \
                            and isinstance(v.value, str):
                        found.append((str(path.relative_to(ROOT)), node.lineno, v.value))
            elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) in (
                    "InfraError", "DaemonError", "CassetteError", "DecathlonError"):
                if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                    found.append((str(path.relative_to(ROOT)), node.lineno, node.args[0].value))
    return found


def test_no_error_kind_outside_the_enum():
    known = {str(k) for k in Kind}
    strays = [f"{f}:{line}: {kind}" for f, line, kind in _kind_literals() if kind not in known]
    assert not strays, "kinds that are not members of decathlon.errors.Kind:\n" + "\n".join(strays)


def test_one_root_and_one_infra_error():
    from decathlon.sandbox.client import DaemonError
    from decathlon.tape.errors import CassetteError
    assert issubclass(InfraError, DecathlonError)
    assert issubclass(DaemonError, InfraError) and issubclass(CassetteError, InfraError)
    e = InfraError("daemon_died", "gone", "execute")
    assert e.kind is Kind.DAEMON_DIED and e.to_json() == {"kind": "daemon_died", "message": "gone", "phase": "execute"}


def test_a_sandbox_naming_an_unknown_kind_sent_a_bad_reply():
    """The kind in a sandbox's error reply is the agent's to forge: one not in the enum is bad_reply, never a
    crash of the host."""
    e = sandbox_error({"error": {"kind": "made_up", "message": "x"}}, "task-api execute", "execute")
    assert e.kind is Kind.BAD_REPLY and "made_up" in e.message and e.origin == "sandbox"
    e = sandbox_error({"error": {"kind": "daemon_died", "message": "x"}}, "task-api execute", "execute")
    assert e.kind is Kind.DAEMON_DIED
