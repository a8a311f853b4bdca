"""ci/install_servers.py builds each server venv once per machine and gives every clone a hard-linked copy: the copy
runs from its own path, and nothing a clone writes reaches the machine's cached venv."""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("install_servers", REPO / "ci" / "install_servers.py")
assert spec is not None and spec.loader is not None
install_servers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(install_servers)


def _fake_built_venv(cache: Path) -> Path:
    """A venv as uv leaves it, built in a scratch folder then renamed into the cache."""
    built_at = cache / ".srv-0123.4242"
    built = cache / "srv-0123"
    (built / "bin").mkdir(parents=True)
    (built / "lib" / "python3.11" / "site-packages" / "pkg").mkdir(parents=True)
    (built / "bin" / "python").symlink_to(sys.executable)
    script = built / "bin" / "srv"
    script.write_text(f"#!{built_at}/bin/python\nfrom pkg import main\nmain()\n")
    script.chmod(0o755)
    (built / "bin" / "activate").write_text(f"VIRTUAL_ENV='{built_at}'\n")
    (built / "lib" / "python3.11" / "site-packages" / "pkg" / "__init__.py").write_text("def main(): print('ok')\n")
    (built / install_servers.BUILT_AT).write_text(str(built_at))
    return built


def test_a_clone_gets_a_linked_copy_whose_scripts_name_its_own_interpreter(tmp_path):
    built = _fake_built_venv(tmp_path / "cache")
    dest = tmp_path / "clone" / ".servers" / "srv"
    dest.parent.mkdir(parents=True)
    install_servers.link_copy(built, dest)

    module = "lib/python3.11/site-packages/pkg/__init__.py"
    assert os.stat(dest / module).st_ino == os.stat(built / module).st_ino  # linked, not copied
    assert (dest / "bin" / "srv").read_text().splitlines()[0] == f"#!{dest}/bin/python"
    assert os.access(dest / "bin" / "srv", os.X_OK)
    assert (dest / "bin" / "activate").read_text() == f"VIRTUAL_ENV='{dest}'\n"
    assert (dest / "bin" / "python").resolve() == Path(sys.executable).resolve()
    # The cached venv is as it was: its scripts were written anew in the copy, never through a link.
    assert (built / "bin" / "srv").read_text().startswith(f"#!{tmp_path / 'cache' / '.srv-0123.4242'}/bin/python")
    assert not list(dest.parent.glob(".srv.*")), "the copy's scratch folder was left behind"


def test_the_project_path_goes_into_the_clones_copy_alone(tmp_path):
    built = _fake_built_venv(tmp_path / "cache")
    site = "lib/python3.11/site-packages"
    (built / site / install_servers.PROJECT_PTH).write_text("/somewhere/else\n")  # as if linked in by an old copy
    dest = tmp_path / "clone" / ".servers" / "srv"
    dest.parent.mkdir(parents=True)
    install_servers.link_copy(built, dest)
    pins = tmp_path / "srv.txt"
    pins.write_text(f"{install_servers.PROJECT_MARK}\nmcp==2.0.0\n")
    install_servers.add_project(pins, dest)
    assert (dest / site / install_servers.PROJECT_PTH).read_text() == f"{install_servers.ROOT}\n"
    assert (built / site / install_servers.PROJECT_PTH).read_text() == "/somewhere/else\n"


def test_the_cache_is_off_in_an_image_build_and_on_request(tmp_path, monkeypatch):
    monkeypatch.delenv("UV_FIND_LINKS", raising=False)
    monkeypatch.setenv("DECATHLON_SERVER_VENVS", str(tmp_path))
    assert install_servers.venv_cache() == tmp_path
    monkeypatch.setenv("DECATHLON_SERVER_VENVS", "0")
    assert install_servers.venv_cache() is None
    monkeypatch.delenv("DECATHLON_SERVER_VENVS")
    monkeypatch.setenv("UV_FIND_LINKS", "/wheels")
    assert install_servers.venv_cache() is None
