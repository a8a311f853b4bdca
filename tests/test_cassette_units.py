"""Cassette building blocks: canonical matching, strict misses, sealed files, deltas, redaction."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from decathlon.tape import delta
from decathlon.tape.canonical import WORKSPACE_TOKEN, canonical, detokenize, tokenize
from decathlon.tape.errors import CassetteError
from decathlon.tape.match import Matcher
from decathlon.tape.redact import Redactor, scan
from decathlon.tape.store import FORMAT, dumps, load, save
from decathlon.sandbox.replay.protocol import pack_extras, unpack_extras


def test_canonical_ignores_key_order_whitespace_and_number_forms():
    assert canonical({"b": 1, "a": [1.0, 2.5]}) == canonical(json.loads('{ "a" : [1, 2.5],\n "b": 1.0 }'))
    assert canonical({"a": 1}) != canonical({"a": "1"})
    assert canonical({"a": 1, "ts": 5}, ["ts"]) == canonical({"a": 1, "ts": 9}, ["ts"])
    assert canonical({"q": {"at": 1, "x": 2}}, ["q.at"]) == canonical({"q": {"x": 2}})


def test_occurrences_replay_in_order_even_when_calls_interleave():
    rec = [{"tool": "read", "arguments": {"p": "a"}, "result": 1}, {"tool": "read", "arguments": {"p": "b"}, "result": 2},
           {"tool": "read", "arguments": {"p": "a"}, "result": 3}]
    m = Matcher("fs", rec)
    assert m.take("read", {"p": "b"})["result"] == 2  # b first: a's occurrences are unaffected
    assert m.take("read", {"p": "a"})["result"] == 1
    assert m.take("read", {"p": "a"})["result"] == 3
    assert m.take("read", {"p": "a"}) is None
    assert "recorded 2 time(s) and is now called once more" in m.explain_miss("read", {"p": "a"})


def test_miss_names_the_call_and_shows_the_nearest_as_a_diff():
    m = Matcher("filesystem", [{"tool": "read_file", "arguments": {"path": "/ws/sales.csv"}},
                               {"tool": "write_file", "arguments": {"path": "/ws/out.json", "content": "x"}}])
    text = m.explain_miss("read_file", {"path": "/ws/sale.csv"})
    assert text.startswith('replay miss: no recording of filesystem-read_file {"path":"/ws/sale.csv"}')
    assert "nearest recorded call #1" in text and '-  "path": "/ws/sales.csv"' in text and '+  "path": "/ws/sale.csv"' in text


def test_workspace_token_round_trip():
    value = {"path": "/tmp/x/workspace/a.txt", "list": ["/tmp/x/workspace"]}
    tok = tokenize(value, "/tmp/x/workspace")
    assert tok == {"path": f"{WORKSPACE_TOKEN}/a.txt", "list": [WORKSPACE_TOKEN]}
    assert detokenize(tok, "/other/ws") == {"path": "/other/ws/a.txt", "list": ["/other/ws"]}


def test_sealed_cassette_checks(tmp_path: Path):
    path = tmp_path / "t.cassette.json"
    save(path, {"meta": {"task": "t", "launch_time": "x"}, "servers": {}})
    data = load(path)
    assert data["format"] == FORMAT and data["meta"]["content_hash"].startswith("sha256:")
    assert path.read_text() == dumps(data)  # stable form: sorted keys, one value per line
    tampered = json.loads(path.read_text())
    tampered["meta"]["task"] = "other"
    path.write_text(json.dumps(tampered))
    with pytest.raises(CassetteError) as e:
        load(path)
    assert e.value.kind == "cassette_hash" and str(path) in e.value.message
    wrong = {**data, "version": 99}
    path.write_text(json.dumps(wrong))
    with pytest.raises(CassetteError) as e:
        load(path)
    assert e.value.kind == "cassette_version" and "99" in e.value.message
    path.write_bytes(b"\xff\xfe not json")
    with pytest.raises(CassetteError) as e:
        load(path)
    assert e.value.kind in ("cassette_unreadable", "bad_cassette") and str(path) in e.value.message
    with pytest.raises(CassetteError) as e:
        load(tmp_path / "absent.cassette.json")
    assert e.value.kind == "cassette_missing" and "decathlon record" in e.value.message
    assert not list(tmp_path.glob("*.partial"))


def test_delta_round_trip(tmp_path: Path):
    a, b = tmp_path / "a", tmp_path / "b"
    for root in (a, b):
        (root / "keep").mkdir(parents=True)
        (root / "old.txt").write_text("old")
    before = delta.snapshot(a)
    (a / "old.txt").unlink()
    (a / "new").mkdir()
    (a / "new" / "bin.dat").write_bytes(bytes(range(256)))
    (a / "keep" / "t.txt").write_text("héllo")
    change = delta.diff(a, before, delta.snapshot(a))
    assert change["remove"] == ["old.txt"] and change["mkdir"] == ["new"]
    delta.apply(b, json.loads(json.dumps(change)))
    assert (b / "new" / "bin.dat").read_bytes() == bytes(range(256)) and (b / "keep" / "t.txt").read_text() == "héllo"
    assert not (b / "old.txt").exists()
    with pytest.raises(CassetteError):
        delta.apply(b, {"write": [{"path": "../escape.txt", "text": "x"}]})
    assert not (tmp_path / "escape.txt").exists()


def test_redaction_and_scan():
    r = Redactor({"SERVICE_API_KEY": "sk-live-1234567890abcdef"})
    out = r.apply({"url": "https://x/?key=sk-live-1234567890abcdef", "n": 3})
    assert out == {"url": "https://x/?key=<REDACTED:SERVICE_API_KEY>", "n": 3}
    assert scan(["token ghp_abcdefghijklmnopqrstuvwxyz123456"], {}) != []
    assert scan(["nothing to see"], {"K_TOKEN": "abcdefgh"}) == []
    assert scan(["has abcdefgh inside"], {"K_TOKEN": "abcdefgh"}) == ["the value of $K_TOKEN appears"]


def test_extra_fields_travel_in_meta():
    item = {"type": "text", "text": "x", "annotations": None, "error": True}
    packed = pack_extras(item)
    assert "error" not in packed and unpack_extras(packed) == {"type": "text", "text": "x", "annotations": None, "error": True}


def test_local_replay_checks_live_output_against_the_recording(tmp_path: Path):
    from decathlon.errors import InfraError
    from decathlon.sandbox.recording import FrameworkReplay, LocalReplay
    ws = str(tmp_path)
    recorded = f"=== STDOUT ===\n{WORKSPACE_TOKEN}\n=== EXECUTION INFO ===\nExecution time: 0.042 seconds"
    replay = LocalReplay({"interactions": [{"tool": "python-execute", "arguments": {"code": "print(1)"},
                                            "content": recorded}]}, tmp_path)
    live = f"=== STDOUT ===\n{ws}\n=== EXECUTION INFO ===\nExecution time: 0.317 seconds"
    assert replay.check("python-execute", '{"code": "print(1)"}', live) == recorded.replace(WORKSPACE_TOKEN, ws)
    with pytest.raises(InfraError) as e:
        replay.check("python-execute", '{"code": "print(1)"}', live)
    assert e.value.kind == "replay_miss" and "local-python-execute" in e.value.message
    other = LocalReplay({"interactions": [{"tool": "python-execute", "arguments": {"code": "print(1)"},
                                           "content": recorded}]}, tmp_path)
    with pytest.raises(InfraError) as e:
        other.check("python-execute", '{"code": "print(1)"}', "=== STDOUT ===\n2")
    assert e.value.kind == "replay_divergence" and "\n+2" in e.value.message and "<volatile>" in e.value.message
    framework = FrameworkReplay([{"tool": "web_search", "arguments_raw": '{"q": 1}', "content": "Tool web_search not found"}],
                                tmp_path)
    assert framework.answer("web_search", '{"q": 1}') == "Tool web_search not found"
    with pytest.raises(InfraError) as e:
        framework.answer("web_search", '{"q": 1}')
    assert e.value.kind == "replay_miss" and "web_search" in e.value.message
