"""The wheelhouse (decathlon/checkout/wheelhouse.py), against a stand-in pip: each pinned wheel fetched once
however many pin files pin it, one manifest per pin file and interpreter, nothing fetched again once filled,
a changed pin file filled alone, and a file once in the pool never rewritten."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from decathlon.checkout import wheelhouse

# `pip wheel --no-deps -w OUT -r PINS` as far as the wheelhouse can tell: one file per pin, and a log line per run.
FAKE_PIP = r'''
import json, os, re, sys
a = sys.argv[1:]
refused = os.environ.get("FAKE_PIP_REFUSE", "")  # name==version this pip's Python will not take
if a[0] == "download":  # our own interpreter's pip: the release as a pure wheel
    dest, pin = a[a.index("-d") + 1], a[-1]
    name, version = pin.split("==")
    name = re.sub(r"[-.]+", "_", name)
    open(os.path.join(dest, f"{name}-{version}-py3-none-any.whl"), "w").write(f"{name} {version} pure")
    sys.exit(0)
out, pins = a[a.index("-w") + 1], a[a.index("-r") + 1]
os.makedirs(out, exist_ok=True)
if refused and refused in open(pins).read():
    print(f"ERROR: No matching distribution found for {refused}", file=sys.stderr)
    sys.exit(1)
names = []
for line in open(pins):
    m = re.match(r"([A-Za-z0-9._-]+)==(\S+)", line.strip())
    if m:
        name = re.sub(r"[-.]+", "_", m.group(1))
        open(os.path.join(out, f"{name}-{m.group(2)}-py3-none-any.whl"), "w").write(f"{name} {m.group(2)}")
        names.append(m.group(1))
with open(os.environ["FAKE_PIP_LOG"], "a") as log:
    log.write(json.dumps(names) + "\n")
'''


@pytest.fixture
def pip(tmp_path: Path, monkeypatch) -> Path:
    script = tmp_path / "fake_pip.py"
    script.write_text(FAKE_PIP)
    log = tmp_path / "pip.log"
    log.touch()
    monkeypatch.setenv("FAKE_PIP_LOG", str(log))
    monkeypatch.setenv("DECATHLON_WHEELHOUSE", str(tmp_path / "wheelhouse"))
    monkeypatch.setattr(wheelhouse, "_pip", lambda python: ([sys.executable, str(script)], {}))
    return log


def _runs(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_each_pin_is_fetched_once_and_each_set_names_its_own_files(pip: Path):
    a = wheelhouse.PinSet("a", "# a comment\nShared-Pkg==1.0\nonly_a==2.0\n", sys.executable)
    b = wheelhouse.PinSet("b", "shared-pkg==1.0\nonly-b==3.0  # why\n", sys.executable)
    c = wheelhouse.PinSet("c", "shared-pkg==1.1\n", sys.executable)  # another version of a name: another pip run
    filled = wheelhouse.fill([a, b, c])
    fetched = sorted(name.lower().replace("_", "-") for run in _runs(pip) for name in run)
    assert fetched == ["only-a", "only-b", "shared-pkg", "shared-pkg"]
    assert all(len({n.lower().replace("_", "-") for n in run}) == len(run) for run in _runs(pip))  # no name twice
    assert [f.name for f in filled["a"]] == ["Shared_Pkg-1.0-py3-none-any.whl", "only_a-2.0-py3-none-any.whl"]
    assert [f.name for f in filled["b"]] == ["Shared_Pkg-1.0-py3-none-any.whl", "only_b-3.0-py3-none-any.whl"]
    assert [f.name for f in filled["c"]] == ["shared_pkg-1.1-py3-none-any.whl"]
    assert all(f.parent == wheelhouse.pool_dir() for files in filled.values() for f in files)


def test_a_filled_set_fetches_nothing_and_a_changed_one_alone_is_filled(pip: Path):
    a = wheelhouse.PinSet("a", "x==1.0\ny==1.0\n", sys.executable)
    b = wheelhouse.PinSet("b", "z==1.0\n", sys.executable)
    wheelhouse.fill([a, b])
    runs = len(_runs(pip))
    assert wheelhouse.fill([a, b]) and len(_runs(pip)) == runs
    b2 = wheelhouse.PinSet("b", "z==2.0\n", sys.executable)
    assert [f.name for f in wheelhouse.fill([a, b2])["b"]] == ["z-2.0-py3-none-any.whl"]
    assert _runs(pip)[runs:] == [["z"]]


def test_a_file_in_the_pool_is_never_rewritten(pip: Path):
    a = wheelhouse.PinSet("a", "x==1.0\n", sys.executable)
    (first,) = wheelhouse.fill([a])["a"]
    first.write_text("the bytes images were built on")
    wheelhouse.fill([wheelhouse.PinSet("again", "x==1.0\n", sys.executable)])
    assert first.read_text() == "the bytes images were built on"


def test_the_wheelhouse_lives_in_the_cache_not_the_clone(monkeypatch, tmp_path: Path):
    monkeypatch.delenv("DECATHLON_WHEELHOUSE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert wheelhouse.cache_dir() == tmp_path / "cache" / "decathlon" / "wheelhouse"
    assert wheelhouse.PinSet("s", "x==1\n", sys.executable).key("cp311").startswith("s-cp311-")
    assert wheelhouse.pinned_version("uv") == wheelhouse.pinned((wheelhouse.ROOT / "pyproject.toml").read_text()
                                                                .replace('"', "\n"))["uv"]


def test_a_pin_pip_refuses_for_the_target_python_comes_as_its_pure_wheel(pip: Path, monkeypatch):
    """pip under Python 3.13 refuses snowflake 1.7.0 (its index entry says <3.13) even with --ignore-requires-python,
    where uv installed that very pure wheel: the set is still filled, with that file."""
    monkeypatch.setenv("FAKE_PIP_REFUSE", "old-pure==1.0")
    s = wheelhouse.PinSet("checkout", "old-pure==1.0\nfresh==2.0\n", sys.executable)
    filled = wheelhouse.fill([s], lambda m: None)
    assert sorted(f.name for f in filled["checkout"]) == ["fresh-2.0-py3-none-any.whl", "old_pure-1.0-py3-none-any.whl"]
    assert (wheelhouse.pool_dir() / "old_pure-1.0-py3-none-any.whl").read_text().endswith("pure")
