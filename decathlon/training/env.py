"""The verifiers v1 integration: decathlon's tasks as a Taskset, with the decathlon harness as its default.

One rollout: `DecathlonTask.setup` acquires a sandbox from the configured backend and runs the task's
setup in it; `DecathlonHarness.launch` runs the chat loop (model calls through the interception,
tool calls through the sandbox); scoring runs the task's evaluator once (reward = pass, metrics =
its dense metrics); `DecathlonHarness.cleanup` saves artifacts and releases the sandbox.

Infra errors (a decathlon `InfraError` from setup, a tool call or the evaluator) fail the rollout
with a `decathlon.training.vf_episode.InfraError` (ok=False, `trace.info["infra_error"]` = kind/message/phase),
so they are masked from training rather than scored 0 — unless the agent had acted and the fault is
one its sandbox could have caused (decathlon.errors.environment_owned), or the endpoint refused a
context the policy overflowed (`context_overflow`): that is the episode's failure, `trace.info["failure"]`,
scored 0 like a failed task.

The tasks it loads are those a live policy runs and their real scripts grade here: `decathlon tasks --runs live`'s
list, by the same function (decathlon.checkout.task_status); the others are left out, said once.

Config: load-time knobs on the taskset: `--env.taskset.source`, `--env.taskset.tasks`, and the
deterministic split and curriculum of `decathlon.training.splits` (`--env.taskset.split all|train|test`,
`--env.taskset.split-ratio`, `--env.taskset.split-seed`; `--env.taskset.curriculum FILE|DIR` makes the
dataset order easiest first; docs/training.md). Per-rollout knobs on the task config
(`--env.taskset.task.backend|launch-time|max-turns|metric-weights|out`), where verifiers' env servers,
which rebuild tasks from `config.taskset.task` alone, also find them.
"""
from __future__ import annotations

import warnings

from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import verifiers.v1 as vf
from pydantic import Field, field_validator
from verifiers.v1.utils.loaders import harness_class

from decathlon import errors
from decathlon.training.splits import DEFAULT_RATIO, DEFAULT_SEED, apply_split_and_curriculum, ratio_problem
from decathlon.checkout.real_saas import check_real_saas
from decathlon.checkout import task_status
from decathlon.checkout.tasks import catalogue, replay_only, MINI, resolve_source, select
from decathlon.core.task_session import EvalResult
from decathlon.training.vf_episode import DecathlonState, Episode, fail
from decathlon.training.vf_harness import DecathlonHarness
from decathlon.sandbox import taskdef
from decathlon.errors import Kind

# The verdict of an episode that failed on its own after the agent acted: no evaluator runs in a sandbox
# that broke or lied, and the run scores 0.
FAILED = EvalResult(passed=False)
UNISOLATED = {"local"}

PASS_REWARD = "passed"


class UnisolatedBackendWarning(UserWarning):
    """The taskset's sandboxes do not keep the agent from the host (shown once per process)."""


_SAID: set[str] = set()


def say_isolation(backend: str) -> None:
    """The default backend stays local (a laptop's dev loop and the tests need no engine), but never silently:
    said once per process, when a rollout first runs on it (not when a config is built: the taskset's default
    config is built at import, whatever backend the run then asks for)."""
    if backend in UNISOLATED and backend not in _SAID:
        _SAID.add(backend)
        from decathlon.backends.local import isolation_note
        warnings.warn(f"decathlon: the taskset runs on the {backend!r} backend. {isolation_note()}",
                      UnisolatedBackendWarning, stacklevel=2)


class DecathlonTaskConfig(vf.TaskConfig):
    backend: str = "local"
    """Where sandboxes come from (`decathlon.backends.make_backend`)."""
    launch_time: str | None = None
    """Pin the task's clock, "YYYY-MM-DD HH:MM:SS"; unset takes the wall clock, as Toolathlon does."""
    max_turns: int = Field(100, ge=1)
    """Assistant turns before the run ends as max_turns_reached."""
    metric_weights: dict[str, float] = Field(default_factory=dict)
    """Evaluator metrics added to the reward, each as its own weighted reward; none by default."""
    out: Path | None = None
    """If set, each rollout's artifacts go to <out>/<task>/<trace id>/."""
    saas: Literal["emulated", "real"] = "emulated"
    """emulated: Google Cloud and Snowflake answered per rollout by its own emulators; real: your own accounts
    (DECATHLON_TOKEN_KEY_SESSION and the checkout's key files), with the checkout's conflict groups held."""


    @field_validator("metric_weights")
    @classmethod
    def _no_clash(cls, value: dict[str, float]) -> dict[str, float]:
        if PASS_REWARD in value:
            raise ValueError(f"{PASS_REWARD!r} is the pass reward itself; weight it with "
                             f"--env.taskset.task.rewards.{PASS_REWARD}.weight")
        return value


class DecathlonData(vf.TaskData):
    task: str = ""
    """The task's folder name under tasks/finalpool/."""
    source: str = ""
    """The Toolathlon root the task comes from, on the host."""


class DecathlonTask(vf.Task[DecathlonData, DecathlonState, DecathlonTaskConfig]):
    @property
    def key(self) -> str:
        # The default content hash covers the run-local idx; the task name is the durable identity.
        return self.data.task

    async def setup(self, trace: vf.Trace, runtime: vf.Runtime) -> None:
        _require_our_harness(trace)
        say_isolation(self.config.backend)
        ep = Episode(self.data.task, Path(self.data.source), self.config.backend, self.config.max_turns,
                     self.config.out, saas=self.config.saas)
        trace.state.attach(ep)  # before acquiring, so the harness's cleanup can release on every path
        try:
            await ep.acquire(trace.id)
            assert ep.session is not None
            ep.setup = await ep.session.setup(self.data.task, self.config.launch_time, saas=self.config.saas)
        except errors.InfraError as exc:
            err = fail(trace, exc, "setup")
            # The rollout ends here; release now rather than trust a later hook to run.
            await ep.save_artifacts(trace)
            await ep.release()
            raise err from exc
        trace.info["decathlon"] = {"task": self.data.task, "sandbox": ep.sandbox.id if ep.sandbox else None,
                                   "launch_time": ep.setup.launch_time, "workspace": ep.setup.workspace}

    async def _verdict(self, trace: vf.Trace) -> EvalResult:
        ep = trace.state.episode
        if ep is None:
            raise fail(trace, errors.InfraError(Kind.NO_SESSION, "the rollout has no sandbox to evaluate in"), "evaluate")
        # No status means the loop never finished: the agent stage timed out or was cut short.
        ep.status = ep.status or ("timeout" if trace.is_timeout else "interrupted")
        trace.info.setdefault("decathlon", {}).update(status=ep.status, turns=ep.turns, tool_calls=ep.tool_calls)
        if ep.failure is not None:
            return FAILED
        try:
            return await ep.evaluate(ep.status)
        except errors.InfraError as exc:
            err = fail(trace, exc, "evaluate")
            if ep.failure is not None:
                return FAILED
            raise err from exc

    @vf.metric
    async def evaluator(self, trace: vf.Trace) -> dict[str, float]:
        """The evaluator's dense metrics, under their own names."""
        return dict((await self._verdict(trace)).metrics)

    @vf.reward(weight=1.0)
    async def passed(self, trace: vf.Trace) -> float:
        """1.0 if the task's evaluator passed the run, 0.0 if it failed it or gave no verdict."""
        return 1.0 if (await self._verdict(trace)).passed else 0.0

    @vf.reward(weight=1.0)
    async def dense(self, trace: vf.Trace) -> dict[str, float]:
        """The configured metric_weights: each metric a reward of its own weight (a missing one scores 0)."""
        if not self.config.metric_weights:
            return {}
        metrics = (await self._verdict(trace)).metrics
        for name, weight in sorted(self.config.metric_weights.items()):
            trace.record_reward(name, metrics.get(name, 0.0), weight)
        return {}  # recorded above, each with its own weight


def _require_our_harness(trace: vf.Trace) -> None:
    """Tool calls only reach the sandbox through DecathlonHarness; another harness would run blind and
    never release the sandbox, so refuse before acquiring one."""
    config = trace.agent.config.harness if trace.agent is not None else None
    if config is None:
        return  # the taskset's default harness: ours
    try:
        ours = issubclass(harness_class(config.id), DecathlonHarness)
    except (ImportError, TypeError, ValueError, AttributeError):
        ours = False
    if not ours:
        raise vf.TaskError(f"decathlon tasks need the decathlon harness, not {config.id!r}: "
                           "drop --env.agent.harness.id or name this taskset's id")


class DecathlonTasksetConfig(vf.TasksetConfig):
    source: Path = MINI
    """A Toolathlon root (holding configs/ and tasks/); default: the bundled mini pack."""
    tasks: list[str] = Field(default_factory=list)
    """Only these tasks (names as in tasks/finalpool/); empty: every task of the source."""
    split: Literal["all", "train", "test"] = "all"
    """Only the train or the test tasks of the deterministic split of the source's tasks (`decathlon.training.splits`);
    with `tasks`, those of them in the split."""
    split_ratio: float = DEFAULT_RATIO
    """The share of the source's tasks in the train split, in (0, 1); default 80/108 (80 train, 28 test)."""
    split_seed: str = Field(DEFAULT_SEED, coerce_numbers_to_str=True)
    """The seed of the split; another seed, another split."""
    runs: Literal["live", "all"] = "live"
    """live: only the tasks a live policy runs and their real scripts grade here (`decathlon tasks --runs live`); all:
    every task of the source, each that cannot run here failing its rollouts with its own infra error."""
    curriculum: Path | None = None
    """Pass rates of earlier runs (`decathlon report --json` output, a {task: rate} JSON object, a CSV with
    columns task,pass_rate, or a results folder): the tasks are then loaded easiest first."""
    task: DecathlonTaskConfig = DecathlonTaskConfig()

    @field_validator("split_ratio")
    @classmethod
    def _ratio_in_range(cls, value: float) -> float:
        problem = ratio_problem(value)
        if problem:
            raise ValueError(f"{problem}; set --env.taskset.split-ratio (e.g. 0.8)")
        return value


class DecathlonTaskset(vf.Taskset[DecathlonTask, DecathlonTasksetConfig]):
    def _names(self, source: Path) -> list[str]:
        named = select(source, self.config.tasks, False) if self.config.tasks else None
        try:
            return apply_split_and_curriculum(select(source, [], True), self.config, named)
        except errors.InfraError as exc:  # the split is validated with the config: this is the curriculum
            raise ValueError(f"--env.taskset.curriculum: {exc.message}") from exc

    def _gradable(self, source: Path, names: list[str]) -> list[str]:
        """The tasks a live policy runs and their real scripts grade here: `decathlon tasks --runs live`'s list, by the
        same function (decathlon.checkout.task_status). A task asked for by name that is not is refused, saying why;
        the others are left out, said once. One graded without a seed its checkout lacks is kept if named."""
        infos = {i.id: i for i in catalogue(source)}
        found = task_status.statuses(source, [infos[n] for n in names if n in infos])
        keep, left = [], []
        for name in names:
            status = found.get(name)
            if status is None or status.graded or status.kind is task_status.BROKEN or (
                    self.config.tasks and status.kind is task_status.UNSEEDED):  # a broken one is said by load()
                keep.append(name)
                continue
            if self.config.tasks:
                raise ValueError(f"--env.taskset.tasks: {name} is {status.kind.code} here ({status.kind.label}): "
                                 f"{status.summary()}; `decathlon tasks --source {source}` lists what runs here")
            left.append(name)
        if left:
            by_kind = {k.code: sum(found[n].kind is k for n in left) for k in task_status.KINDS}
            said = ", ".join(f"{count} {code}" for code, count in by_kind.items() if count)
            warnings.warn(f"decathlon: {len(left)} of {len(names)} tasks of {source} left out of the taskset, not graded "
                          f"here ({said}); `decathlon tasks --source {source}` says why, task by task", stacklevel=3)
        return keep

    def load(self) -> Iterator[DecathlonTask]:
        source = resolve_source(str(self.config.source))
        # Every rollout here is a live policy's: a source that can only replay fails here, not per rollout.
        if (why := replay_only(source)) is not None:
            raise ValueError(f"--env.taskset.source: {why}")
        names = self._names(source)
        if self.config.task.saas == "real":
            try:
                check_real_saas(source, names)
            except errors.InfraError as exc:
                raise ValueError(f"--env.taskset.task.saas: {exc.message}") from exc
            if self.config.task.backend in UNISOLATED:
                from decathlon.backends.local import real_saas_note
                if note := real_saas_note():
                    warnings.warn(f"decathlon: {note}", UnisolatedBackendWarning, stacklevel=2)
        if self.config.runs == "live":
            names = self._gradable(source, names)
        for name in names:
            try:
                task = taskdef.load_task(source, name)
            except errors.InfraError as exc:
                if self.config.tasks:  # asked for by name: say so loudly
                    raise
                warnings.warn(f"decathlon: task {name} left out of the taskset: {exc.kind}: {exc.message}",
                              stacklevel=2)
                continue
            data = DecathlonData(id=name, name=name, task=name, source=str(source),
                                 description=(task.config.get("meta") or {}).get("description"),
                                 prompt=task.read_doc("task.md"))
            yield DecathlonTask(data, self.config.task)


__all__ = ["DecathlonTaskset", "DecathlonHarness"]
