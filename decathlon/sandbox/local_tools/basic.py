"""claim_done and sleep."""
from __future__ import annotations

import asyncio

from decathlon.sandbox.local_tools.base import Context, LocalResult, LocalTool, obj

MAX_SLEEP = 300.0


async def _claim_done(args: dict, ctx: Context) -> LocalResult:
    return LocalResult("you have claimed the task is done!")


async def _sleep(args: dict, ctx: Context) -> LocalResult:
    seconds = float(args["seconds"])
    if seconds < 0:
        return LocalResult("Error: seconds must not be negative", is_error=True)
    seconds = min(seconds, MAX_SLEEP)
    await asyncio.sleep(seconds)
    return LocalResult(f"Slept for {seconds:g} seconds")


CLAIM_DONE = LocalTool("claim_done", "Call this once the task is complete; it ends your work on the task.",
                       obj({}), _claim_done)
SLEEP = LocalTool("sleep", f"Wait for a number of seconds (at most {MAX_SLEEP:g}) before continuing.",
                  obj({"seconds": {"type": "number", "description": "How long to wait, in seconds."}},
                      ["seconds"]), _sleep)
