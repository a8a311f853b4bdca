"""The state upstream's deployment leaves in Canvas before any task runs, rebuilt from the Directory.

Upstream's scripts create one Canvas user per entry of `configs/users_data.json` (login = email,
API token = `canvas_token`, SIS id `MCP` + the entry's id on six digits) and three account admins
`mcpcanvasadminN@mcp.com` ("MCP Canvas Admin N", short name "AdminN", SIS id `ADMIN00N`, token
`mcpcanvasadmintokenN`). Their Canvas image already holds 33 users of its own, so each entry's
Canvas id is its directory id + 33 (the admins, entries 501-503 of the checkout's file, end at
534-536); recorded runs refer to users by these ids, so we keep them. The image's own users are not
reproduced: no task or evaluator reads them.
"""
from __future__ import annotations

from decathlon.emulators.canvas.clock import Clock, system_clock
from decathlon.emulators.canvas.model import Account
from decathlon.emulators.canvas.store import Store
from decathlon.emulators.directory import CANVAS_ADMINS, Directory

ID_OFFSET = 33
ADMIN_DIRECTORY_BASE = 500   # upstream's file lists admin N as user 500 + N


def build_store(directory: Directory, clock: Clock = system_clock, seed: int = 0) -> Store:
    store = Store(clock, seed)
    store.accounts[1] = Account(id=1, name="Canvas Docker", uuid=store.random_string())
    admin_logins = {f"{login}@{directory.domain}".lower(): (n, token)
                    for n, (login, _pw, token) in enumerate(CANVAS_ADMINS, start=1)}
    seen_admins: set[int] = set()
    for account in directory.users:
        admin = admin_logins.get(account.email.lower())
        if admin:
            n, token = admin
            seen_admins.add(n)
            store.add_user(f"MCP Canvas Admin {n}", account.email, user_id=account.id + ID_OFFSET,
                           short_name=f"Admin{n}", sis_user_id=f"ADMIN{n:03d}", password=account.password,
                           tokens=[t for t in (token, account.canvas_token) if t], admin=True)
            continue
        store.add_user(account.full_name, account.email, user_id=account.id + ID_OFFSET,
                       short_name=account.first_name, sis_user_id=f"MCP{account.id:06d}", password=account.password,
                       tokens=[account.canvas_token] if account.canvas_token else [])
    for admin_account in directory.canvas_admins:
        n = -admin_account.id
        if n in seen_admins:
            continue
        wanted = ADMIN_DIRECTORY_BASE + n + ID_OFFSET
        store.add_user(f"MCP Canvas Admin {n}", admin_account.email, user_id=None if wanted in store.users else wanted,
                       short_name=f"Admin{n}", sis_user_id=f"ADMIN{n:03d}", password=admin_account.password,
                       tokens=[admin_account.canvas_token], admin=True)
    return store
