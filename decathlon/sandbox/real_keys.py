"""`--saas real`: where the user's own keys go in an episode, and where they never go.

- To the grader's scripts (preprocess, evaluator), as the user's token_key_session names them: setup (root) copies
  every key file it names (saas_credentials.KEY_FILE_TOKENS) into the episode's private configs/ (the grader's
  alone), and lays the token session over so that those names point at the copies. A key kept outside the checkout
  (the user's home, say) is then the grader's to read too, whoever runs the episode.
- To our servers that take a key (the snowflake and google-cloud stand-ins: keyclaim.BROKERED_FLAGS), through the
  episode's one-shot key broker (decathlon/sandbox/key_broker.py): their command line carries a token, not a path.
- Never into a file or a variable of the agent's: the key files are withheld from the read-only copies an
  agent-side server gets of the grader's files (servers_config.Templates), and the agent's uid reads neither the
  private configs nor a server that holds a key (it is not dumpable).

What stays exposed: a key given to any other server, which cannot use the broker (it is left as a path into the
grader's root, which that server then fails to open where users are separated), and everything where users are not
separated (the local backend not run as root: the agent is you, and reads what you can).
"""
from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path

from decathlon.sandbox.key_broker import KeyBroker
from decathlon.sandbox.saas_credentials import KEY_FILE_TOKENS, KEY_FILES, lay_over
from decathlon.sandbox.servers_config import ServerSpec, module_table
from decathlon.standins.keyclaim import BROKER_ENV, BROKERED_FLAGS, flag_value, read_value, with_value

COPIES = "user-keys"  # configs/user-keys/<token>/<file>: the copies of keys the user keeps outside the checkout


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
        return True
    except ValueError:
        return False


def gather(configs: Path) -> dict[str, Path]:
    """Into the episode's private `configs/` (decathlon/sandbox/task_copy.py), as root: the key files the token
    session names, by token. Its relative paths are the scripts' (from the episode's root, their working folder)."""
    root = configs.parent.resolve()
    tokens = module_table(configs / "token_key_session.py", "all_token_key_session", root)
    found: dict[str, Path] = {}
    for name in KEY_FILE_TOKENS:
        value = tokens.get(name)
        if not isinstance(value, str) or not value:
            continue
        path = Path(value) if os.path.isabs(value) else root / value
        if not path.is_file():
            continue  # the scripts that need it fail naming it, as they would upstream
        resolved = path.resolve()
        if not _inside(resolved, root):
            # the checkout's own entries are links out of the root too (utils/…): resolved, they are copied as well
            copy = configs / COPIES / name / resolved.name
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(resolved, copy)
            os.chmod(copy, 0o600)
            resolved = copy.resolve()
        found[name] = resolved
    if found:
        lay_over(configs, {name: str(path) for name, path in sorted(found.items())},
                 "its key-file paths pointing at the episode's private copies")
    return found


def withheld(configs: Path, found: dict[str, Path]) -> frozenset[Path]:
    """What must never be handed to an agent-side server: the keys the token session names, and the checkout's
    key files wherever a template names them."""
    return frozenset({*found.values(), *(configs / name for name in KEY_FILES if (configs / name).is_file())})


def broker_specs(specs: list[ServerSpec], broker: KeyBroker) -> list[ServerSpec]:
    """Each server of ours that takes a key gets a token of `broker` instead of the key file's path (read here, as
    root), and the broker's socket in its environment."""
    out = []
    for spec in specs:
        flag = BROKERED_FLAGS.get(spec.args[1]) if len(spec.args) > 1 and spec.args[0] == "-m" else None
        index = flag_value(spec.args, flag) if flag else None
        if flag is None or index is None:
            out.append(spec)
            continue
        value = read_value(spec.args, index, flag)
        path = Path(value) if os.path.isabs(value) else Path(spec.cwd or ".") / value
        try:
            secret = path.read_bytes()
        except OSError:
            out.append(spec)  # no key there: the server says so, naming the path, as the reference would
            continue
        out.append(replace(spec, args=with_value(spec.args, index, flag, broker.offer(secret)),
                           env={**spec.env, BROKER_ENV: str(broker.path)}))
    return out
