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
from decathlon.core import blame
from decathlon.core.agent_loop import Loop, StopLoop, run_loop
from decathlon.training.vf_episode import DecathlonState, Episode, fail

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
        session = ep.session
        ep.messages = [{"role": "system", "content": ep.setup.system_prompt},
                       {"role": "user", "content": ep.setup.prompt}]
        client = openai.AsyncOpenAI(base_url=endpoint, api_key=secret, timeout=MODEL_TIMEOUT)
        tools = ep.setup.tools

        async def act(sent: list[dict]) -> dict:
            body: dict = {"model": ctx.model, "messages": sent}
            if tools:
                body["tools"] = tools
            try:
                completion = await client.chat.completions.create(**body)
            except openai.BadRequestError as exc:
                if trace.stop_condition is not None:
                    # A verifiers limit or @stop refused the turn: the run ends here and is still scored.
                    raise StopLoop("max_turns_reached" if trace.stop_condition == "max_turns"
                                   else "interrupted") from None
                # The endpoint refused the conversation (verifiers relays its reply): a context the policy
                # overflowed ends the run as its failure, scored 0; any other refusal fails the rollout.
                refusal = blame.model_refusal(exc.status_code, exc.body if exc.body is not None else exc.message,
                                               sent, exc.message[:500])
                raise fail(trace, refusal, "agent") from exc
            except openai.APIStatusError as exc:
                # Named with the endpoint's own words: shown as a bare ProviderError, the cause is lost.
                raise fail(trace, errors.InfraError(errors.Kind.MODEL_ERROR, f"HTTP {exc.status_code} from the model "
                                                    f"endpoint: {_said(exc)}", "agent"), "agent") from exc
            except openai.APIConnectionError as exc:
                raise fail(trace, errors.InfraError(errors.Kind.MODEL_UNREACHABLE, f"the model endpoint {endpoint} "
                                                    f"did not answer: {exc}", "agent"), "agent") from exc
            return _assistant(completion.choices[0].message)

        async def execute(name: str, args: str):
            try:
                return await session.execute(name, args)
            except errors.InfraError as exc:
                raise fail(trace, exc, "execute") from exc

        loop = Loop(ep.messages)
        try:
            await run_loop(loop, act, execute, ep.max_turns)
        finally:
            await client.close()
            ep.turns, ep.tool_calls = loop.turns, loop.tool_calls
        # Only a loop that ended on its own has a status; a cut-short one is judged at scoring time.
        ep.status = loop.status
        return vf.ProgramResult(0, "", "")

    async def cleanup(self, trace: vf.Trace, runtime: vf.Runtime) -> None:
        """After scoring, on every path (failed setup, failed or cancelled agent): artifacts, then release."""
        ep = trace.state.episode if isinstance(trace.state, DecathlonState) else None
        if ep is None:
            return
        try:
            await ep.save_artifacts(trace)
        finally:
            await ep.release()


def _said(exc: openai.APIStatusError) -> str:
    """The endpoint's error message (OpenAI's `{"error": {"message": …}}`, as serve-policy answers), else its text."""
    body: dict = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error")
    inner: dict = error if isinstance(error, dict) else body
    return str(inner.get("message") or exc.message)[:1000]


def _episode(trace: vf.Trace) -> Episode:
    ep = trace.state.episode if isinstance(trace.state, DecathlonState) else None
    if ep is None:
        raise vf.HarnessError("the decathlon harness runs decathlon tasks only (trace.state holds no episode)")
    return ep
