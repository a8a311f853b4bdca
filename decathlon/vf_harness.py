"""The decathlon harness: the episode's chat loop, run in-process on the host.

Every model call goes to the rollout's interception endpoint (so verifiers records the trace);
every tool call goes to the task's sandbox through `TaskSession.execute`. Nothing runs in the
verifiers runtime, which is why any runtime (subprocess included) will do.
"""
from __future__ import annotations

import os

import openai
import verifiers.v1 as vf

from decathlon import errors
from decathlon.episode import STOP_TOOL, apply_context
from decathlon.vf_episode import DecathlonState, Episode, fail

MODEL_TIMEOUT = float(os.environ.get("DECATHLON_MODEL_TIMEOUT", "600"))


def _assistant(message: object) -> dict:
    """An SDK reply as the plain chat message the sandbox, the evaluator and the next request expect."""
    out: dict = {"role": "assistant", "content": getattr(message, "content", None)}
    calls = getattr(message, "tool_calls", None) or []
    if calls:
        out["tool_calls"] = [{"id": c.id, "type": "function",
                              "function": {"name": c.function.name, "arguments": c.function.arguments or ""}}
                             for c in calls]
    return out


class DecathlonHarness(vf.Harness[vf.HarnessConfig]):
    APPENDS_SYSTEM_PROMPT = True  # we send the task's own filled system prompt as a system message
    # The loop runs on the host and touches the verifiers runtime not at all: tools execute in the
    # decathlon sandbox, whose isolation is its backend's business.
    NEEDS_CONTAINER = False
    EXECUTES_CODE = False

    async def launch(self, ctx: vf.ModelContext, trace: vf.Trace, runtime: vf.Runtime, endpoint: str, secret: str,
                     mcp_urls: dict[str, str], data: vf.TaskData) -> vf.ProgramResult:
        ep = _episode(trace)
        assert ep.setup is not None and ep.session is not None  # Task.setup ran, or the rollout failed before us
        ep.messages = [{"role": "system", "content": ep.setup.system_prompt},
                       {"role": "user", "content": ep.setup.prompt}]
        sent = list(ep.messages)
        client = openai.AsyncOpenAI(base_url=endpoint, api_key=secret, timeout=MODEL_TIMEOUT)
        status = "max_turns_reached"
        try:
            for _ in range(ep.max_turns):
                body: dict = {"model": ctx.model, "messages": sent}
                if ep.setup.tools:
                    body["tools"] = ep.setup.tools
                try:
                    completion = await client.chat.completions.create(**body)
                except openai.BadRequestError:
                    if trace.stop_condition is None:
                        raise
                    # A verifiers limit or @stop refused the turn: the run ends here and is still scored.
                    status = "max_turns_reached" if trace.stop_condition == "max_turns" else "interrupted"
                    break
                reply = _assistant(completion.choices[0].message)
                ep.messages.append(reply)
                sent.append(reply)
                ep.turns += 1
                calls = reply.get("tool_calls") or []
                if not calls:
                    status = "success"
                    break
                if await self._run_tools(trace, ep, calls, sent):
                    status = "success"
                    break
        finally:
            await client.close()
        # Only a loop that ended on its own has a status; a cut-short one is judged at scoring time.
        ep.status = status
        return vf.ProgramResult(0, "", "")

    async def _run_tools(self, trace: vf.Trace, ep: Episode, calls: list[dict], sent: list[dict]) -> bool:
        """Execute one turn's tool calls in order; whether the agent claimed the task done."""
        assert ep.session is not None
        done = False
        for call in calls:
            name = call["function"]["name"]
            try:
                res = await ep.session.execute(name, call["function"]["arguments"])
            except errors.InfraError as exc:
                raise fail(trace, exc, "execute") from exc
            ep.tool_calls += 1
            message = {"role": "tool", "tool_call_id": call["id"], "content": res.content}
            ep.messages.append(message)
            sent.append(message)
            if res.context and "keep_last_turns" in res.context:
                # manage_context trims what the model sees from now on; the evaluator still gets it all.
                sent[:] = apply_context(sent, int(res.context["keep_last_turns"]))
            done = done or name == STOP_TOOL
        return done

    async def cleanup(self, trace: vf.Trace, runtime: vf.Runtime) -> None:
        """After scoring, on every path (failed setup, failed or cancelled agent): artifacts, then release."""
        ep = trace.state.episode if isinstance(trace.state, DecathlonState) else None
        if ep is None:
            return
        try:
            await ep.save_artifacts(trace)
        finally:
            await ep.release()


def _episode(trace: vf.Trace) -> Episode:
    ep = trace.state.episode if isinstance(trace.state, DecathlonState) else None
    if ep is None:
        raise vf.HarnessError("the decathlon harness runs decathlon tasks only (trace.state holds no episode)")
    return ep
