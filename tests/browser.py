"""Debian's chromium, headless, through Playwright (no Playwright browser download): for the results page.

Without chromium or playwright the browser tests skip, saying how to get them, except where CI is set,
where they fail.
"""
from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager

import pytest


def chromium_path() -> str:
    """Debian's chromium, or why there is none: a failure under CI, a skip elsewhere."""
    why = None
    path = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
    if path is None:
        why = "Debian's chromium is not installed (apt-get install chromium; ci/test installs it as root)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        why = "playwright is not installed (pip install -e '.[dev]'; no browser download is needed)"
    if why:
        pytest.fail(why) if os.environ.get("CI") else pytest.skip(why)
    return path


@contextmanager
def report_page(url: str, problems: list[str], requests: list[str] | None = None) -> Iterator[object]:
    """A headless page at `url`, rendered (window.__reportReady); console errors and warnings, page errors
    and dialogs are appended to `problems`, every request's URL to `requests`."""
    executable = chromium_path()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
                    if m.type in ("error", "warning", "assert") else None)
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
            if requests is not None:
                page.on("request", lambda r: requests.append(r.url))
            page.goto(url)
            page.wait_for_function("window.__reportReady === true", timeout=15_000)
            yield page
        finally:
            browser.close()
