"""The architecture holds (decathlon/layers.py): no module imports a higher layer, no import cycle, and the
check itself finds both when they are there."""
from __future__ import annotations

from pathlib import Path

from decathlon import layers


def test_no_module_imports_a_higher_layer_nor_goes_round_in_a_cycle():
    edges = layers.graph()
    assert len(edges) > 500  # the whole tree was read, not an empty folder
    assert [f"{e.source}:{e.line} → {e.target}" for e in layers.upward(edges)] == []
    assert layers.cycles(edges) == []


def test_every_module_has_a_layer():
    for name in layers.modules():
        layers.layer_of(name)


def test_the_check_finds_an_upward_import_and_a_cycle(tmp_path: Path):
    pkg = tmp_path / "decathlon"
    for rel, text in {"__init__.py": "", "errors.py": "def f():\n    from decathlon.cli import x\n",
                      "cli/__init__.py": "from decathlon.cli.b import y\n", "cli/b.py": "import decathlon.cli\n"}.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(text)
    edges = layers.graph(pkg)
    assert [(e.source, e.target) for e in layers.upward(edges)] == [("decathlon.errors", "decathlon.cli")]
    assert layers.cycles(edges) == [["decathlon.cli", "decathlon.cli.b"]]
