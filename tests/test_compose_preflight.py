"""A compose run on a Toolathlon checkout needs that checkout's own image (its files and task environment): a missing
or another checkout's image is refused, and the plain sandbox image said, once, before any sandbox, naming `image build
--source` and DECATHLON_IMAGE. The engine is a
stand-in here (the docker tier runs the real one)."""
from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import docker
import pytest

from decathlon.backends.compose import ComposeBackend
from decathlon.errors import InfraError

from conftest import MINI


class Images:
    def __init__(self, known: dict[str, dict[str, str]]) -> None:
        self.known = known

    def get(self, tag: str) -> SimpleNamespace:
        if tag not in self.known:
            raise docker.errors.ImageNotFound(tag)
        return SimpleNamespace(labels=self.known[tag])


def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "Toolathlon"
    (root / "tasks" / "finalpool").mkdir(parents=True)
    (root / "uv.lock").write_text("version = 1\n")
    return root


def preflight(known: dict[str, dict[str, str]], image: str, source: Path) -> None:
    backend = ComposeBackend(SimpleNamespace(images=Images(known)), image)
    asyncio.run(backend.preflight(source))


def test_a_checkout_on_the_plain_sandbox_image_is_said_once_naming_the_checkout_build(tmp_path, capsys):
    source = checkout(tmp_path)
    preflight({"decathlon-sandbox:x": {}}, "decathlon-sandbox:x", source)
    said = capsys.readouterr().err
    assert "plain sandbox image" in said and f"decathlon image build --source {source}" in said and "DECATHLON_IMAGE" in said


def test_a_missing_image_names_the_build_for_what_is_run(tmp_path, monkeypatch):
    source = checkout(tmp_path)
    monkeypatch.setenv("DECATHLON_IMAGE", "decathlon-checkout:gone")
    with pytest.raises(InfraError) as err:
        preflight({}, "decathlon-checkout:gone", source)
    assert "checkout image decathlon-checkout:gone is not built" in err.value.message
    assert f"--source {source}" in err.value.message
    monkeypatch.delenv("DECATHLON_IMAGE")
    with pytest.raises(InfraError) as err:
        preflight({}, "decathlon-sandbox:gone", MINI)
    assert "decathlon image build`" in err.value.message and "--source" not in err.value.message


def test_another_checkouts_image_is_refused_and_its_own_passes(tmp_path):
    source = checkout(tmp_path)
    with pytest.raises(InfraError) as err:
        preflight({"decathlon-checkout:a": {"decathlon.checkout": "/elsewhere/Toolathlon"}}, "decathlon-checkout:a", source)
    assert "carries the checkout /elsewhere/Toolathlon" in err.value.message
    preflight({"decathlon-checkout:b": {"decathlon.checkout": str(source)}}, "decathlon-checkout:b", source)
    preflight({"decathlon-sandbox:x": {}}, "decathlon-sandbox:x", MINI)  # our packs run on the sandbox image
