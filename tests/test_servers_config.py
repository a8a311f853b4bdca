"""Server templates that name the grader's files: the agent's servers get read-only copies they can open."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from decathlon.sandbox.servers_config import Templates

TOKENS = """from pathlib import Path
all_token_key_session = {{"emails_config_file": str(Path(__file__).parent / "emails_config.json"),
                         "folder": str(Path(__file__).parent / "accounts"),
                         "answer": str(Path(__file__).parent / "groundtruth_workspace" / "expected.json"),
                         "outside": {outside!r}, "link": str(Path(__file__).parent / "escape.json"),
                         "relative": "configs/example_email_config.json"}}
"""


@pytest.fixture
def layout(tmp_path: Path):
    """An episode root as task_copy makes it (the grader's), a task folder in it, and a shared folder."""
    private = tmp_path / "home" / "grader" / "checkout"
    task_dir = private / "tasks" / "finalpool" / "mail-task"
    task_dir.mkdir(parents=True)
    (private / "configs").mkdir()
    secret = tmp_path / "elsewhere.json"
    secret.write_text('{"secret": true}')
    (task_dir / "token_key_session.py").write_text(TOKENS.format(outside=str(secret)))
    (task_dir / "emails_config.json").write_text('{"email": "agent@mcp.com", "password": "pw"}')
    (task_dir / "accounts").mkdir()
    (task_dir / "accounts" / "a.json").write_text("{}")
    (task_dir / "escape.json").symlink_to(secret)
    (task_dir / "groundtruth_workspace").mkdir()
    (task_dir / "groundtruth_workspace" / "expected.json").write_text('{"answer": 42}')
    shared = tmp_path / "home" / "server-files"
    shared.mkdir()
    return Templates(private, tmp_path / "ws", task_dir, private=private, shared=shared), task_dir, shared, secret


def test_a_token_naming_a_grader_file_becomes_a_read_only_copy_outside_the_graders_root(layout):
    templates, task_dir, shared, _ = layout
    filled = templates.fill(["--config_file", "${token.emails_config_file}"])
    copy = Path(filled[1])
    assert copy.is_relative_to(shared) and copy.name == "emails_config.json", filled
    assert copy.read_text() == (task_dir / "emails_config.json").read_text()
    assert stat.S_IMODE(copy.stat().st_mode) == 0o444
    assert stat.S_IMODE(copy.parent.stat().st_mode) == 0o755
    # One file named twice is one copy.
    assert templates.fill("${token.emails_config_file}") == str(copy)


def test_the_graders_answers_and_folders_are_never_handed_over(layout):
    """A folder could hold the evaluator; ground truth is the answer. Both stay the grader's: a server
    started with one fails to open it, by name, rather than the agent reading it."""
    templates, task_dir, shared, _ = layout
    assert templates.fill("${token.folder}") == str(task_dir / "accounts")
    assert templates.fill("${token.answer}") == str(task_dir / "groundtruth_workspace" / "expected.json")
    assert os.listdir(shared) == []


def test_values_that_are_not_the_graders_files_are_left_as_the_module_gave_them(layout):
    templates, _, shared, secret = layout
    assert templates.fill("${token.outside}") == str(secret)
    assert templates.fill("${token.relative}") == "configs/example_email_config.json"
    # A link in the grader's root to a file outside it is not followed into a copy.
    assert templates.fill("${token.link}").endswith("escape.json")
    assert not Path(templates.fill("${token.link}")).is_relative_to(shared)
    assert os.listdir(shared) == []
