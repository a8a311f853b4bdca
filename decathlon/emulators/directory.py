"""The accounts the upstream deployment creates in every service, read from the task root's own files.

Upstream's deployment scripts create, from `configs/users_data.json` (`{"domain": ..., "users": [...]}`):
a Poste.io mailbox per user plus the admin `mcpposte_admin@mcp.com`; a Canvas user per user (API token
`canvas_token`) plus three admins `mcpcanvasadminN@mcp.com` (token `mcpcanvasadmintokenN`); and a
WooCommerce site `/storeN` per user id N, whose REST key is the user's consumer key/secret, run by
the WordPress admin `mcpwoocommerce`. Our services seed themselves the same way, so the tasks'
configs log in unchanged.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

USERS_FILE = "configs/users_data.json"
DEFAULT_DOMAIN = "mcp.com"
MAIL_ADMIN = ("mcpposte_admin", "mcpposte", "System Administrator")
CANVAS_ADMINS = tuple((f"mcpcanvasadmin{n}", f"mcpcanvasadminpass{n}", f"mcpcanvasadmintoken{n}") for n in (1, 2, 3))
WP_ADMIN_USER = "mcpwoocommerce"
WP_ADMIN_PASSWORD = "mcpwoocommerce"
WC_ADMIN_KEY = ("ck_woocommerce_token_admin", "cs_woocommerce_token_admin")


class DirectoryError(ValueError):
    """The users file is missing or malformed; the message names the file and what is wrong."""


@dataclass(frozen=True)
class Account:
    id: int
    first_name: str
    last_name: str
    full_name: str
    email: str
    password: str
    canvas_token: str = ""
    wc_consumer_key: str = ""
    wc_consumer_secret: str = ""
    admin: bool = False

    @property
    def login(self) -> str:
        return self.email.split("@", 1)[0]


@dataclass(frozen=True)
class Directory:
    domain: str
    users: tuple[Account, ...]

    @property
    def mail_accounts(self) -> tuple[Account, ...]:
        """Every mailbox Poste.io has: the users, the Canvas admins (they log in to mail too) and its admin."""
        login, password, name = MAIL_ADMIN
        admin = Account(0, "System", "Administrator", name, f"{login}@{self.domain}", password, admin=True)
        return (admin, *self.canvas_admins, *self.users)

    @property
    def canvas_admins(self) -> tuple[Account, ...]:
        return tuple(
            Account(-n, "Canvas", f"Admin{n}", f"Canvas Admin{n}", f"{login}@{self.domain}", password, canvas_token=token,
                    admin=True)
            for n, (login, password, token) in enumerate(CANVAS_ADMINS, start=1))

    def by_email(self) -> dict[str, Account]:
        return {a.email.lower(): a for a in self.mail_accounts}


def load_directory(root: Path) -> Directory:
    """The directory of a task root (a checkout, or an episode's private copy of one)."""
    path = Path(root) / USERS_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DirectoryError(f"{path} is missing: the services seed their accounts from it, as upstream's deployment "
                             "does") from None
    except (OSError, ValueError) as exc:
        raise DirectoryError(f"{path} cannot be read as JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("users"), list):
        raise DirectoryError(f'{path} must be an object with a "users" list')
    users = []
    for i, u in enumerate(data["users"]):
        try:
            users.append(Account(
                id=int(u["id"]), first_name=str(u["first_name"]), last_name=str(u["last_name"]),
                full_name=str(u.get("full_name") or f'{u["first_name"]} {u["last_name"]}'), email=str(u["email"]),
                password=str(u["password"]), canvas_token=str(u.get("canvas_token", "")),
                wc_consumer_key=str(u.get("woocommerce_consumer_key", "")),
                wc_consumer_secret=str(u.get("woocommerce_consumer_secret", ""))))
        except (KeyError, TypeError, ValueError) as exc:
            raise DirectoryError(f"{path}: user #{i} lacks a valid {exc}") from None
    return Directory(domain=str(data.get("domain") or DEFAULT_DOMAIN), users=tuple(sorted(users, key=lambda a: a.id)))
