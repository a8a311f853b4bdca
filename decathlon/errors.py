"""The one error hierarchy of decathlon, host and sandbox alike: DecathlonError at the root, InfraError
(an error of the environment, reported with its kind and kept out of the reward), and every kind as a
member of `Kind`, each with a line saying what it means (docs/errors.md lists them: `python -m
decathlon.errors` writes that table).

Whose fault an error is once the agent has acted is the host's decision: decathlon.core.blame.
"""
from __future__ import annotations

import sys
from enum import StrEnum


class Kind(StrEnum):
    """Every kind of error decathlon reports. A StrEnum: it is its own value on the wire and in JSON."""

    # acquiring a sandbox
    ACQUIRE_FAILED = "acquire_failed"
    ACQUIRE_TIMEOUT = "acquire_timeout"
    ACQUIRE_UNREADABLE = "acquire_unreadable"
    ACQUIRE_USERS = "acquire_users"
    CREATE_FAILED = "create_failed"
    ENGINE_UNREACHABLE = "engine_unreachable"
    IMAGE_MISSING = "image_missing"
    IMAGE_BUILD = "image_build"
    SANDBOX_START_TIMEOUT = "sandbox_start_timeout"
    SANDBOX_UNREACHABLE = "sandbox_unreachable"
    UNAUTHORIZED = "unauthorized"
    PAYMENT_REQUIRED = "payment_required"
    QUOTA_EXCEEDED = "quota_exceeded"
    NO_API_KEY = "no_api_key"
    # a sandbox once it exists
    SANDBOX_DIED = "sandbox_died"
    SANDBOX_RELEASED = "sandbox_released"
    EXEC_FAILED = "exec_failed"
    EXEC_TIMEOUT = "exec_timeout"
    FILE_MISSING = "file_missing"
    FILE_DOWNLOAD_FAILED = "file_download_failed"
    FILE_UPLOAD_FAILED = "file_upload_failed"
    PUT_FAILED = "put_failed"
    RELEASE_FAILED = "release_failed"
    GC_FAILED = "gc_failed"
    PRIVILEGE = "privilege"
    # the task source and its environment
    BAD_SOURCE = "bad_source"
    UNKNOWN_TASK = "unknown_task"
    BAD_TASK = "bad_task"
    BAD_CONFIG = "bad_config"
    TASK_COPY_FAILED = "task_copy_failed"
    TASK_DATA_MISSING = "task_data_missing"
    TASK_PYTHON_TOO_OLD = "task_python_too_old"
    TASK_ENV_FAILED = "task_env_failed"
    PORTABLE_PYTHON = "portable_python"
    BAD_PYTHON = "bad_python"
    FAKETIME_MISSING = "faketime_missing"
    NO_FACTS_TABLE = "no_facts_table"
    MISSING_CREDENTIAL = "missing_credential"
    # setup
    ALREADY_SET_UP = "already_set_up"
    BAD_LAUNCH_TIME = "bad_launch_time"
    PREPROCESS_FAILED = "preprocess_failed"
    PREPROCESS_TIMEOUT = "preprocess_timeout"
    SEED_FAILED = "seed_failed"
    SEED_MISSING = "seed_missing"
    GRADER_PREFLIGHT = "grader_preflight"
    UNKNOWN_LOCAL_TOOLS = "unknown_local_tools"
    # MCP servers and the episode daemon
    UNKNOWN_SERVER = "unknown_server"
    UNKNOWN_LAUNCHER = "unknown_launcher"
    UNKNOWN_SERVER_PACKAGE = "unknown_server_package"
    BAD_SERVER_CONFIG = "bad_server_config"
    SERVER_NOT_INSTALLED = "server_not_installed"
    REPLAY_ONLY_SERVER = "replay_only_server"
    SERVER_START = "server_start"
    DAEMON_CRASH = "daemon_crash"
    DAEMON_DIED = "daemon_died"
    DAEMON_TIMEOUT = "daemon_timeout"
    NO_SESSION = "no_session"
    BAD_SESSION = "bad_session"
    BAD_REQUEST = "bad_request"
    # the episode's services (mail, Canvas, WooCommerce)
    SERVICE_START = "service_start"
    SERVICE_DIED = "service_died"
    SERVICES_NEED_NETNS = "services_need_netns"
    # replies of a sandbox
    BAD_REPLY = "bad_reply"
    REPLY_TOO_LARGE = "reply_too_large"
    # the policy and its model endpoint
    MODEL_UNREACHABLE = "model_unreachable"
    MODEL_ERROR = "model_error"
    CONTEXT_OVERFLOW = "context_overflow"
    NO_ORACLE = "no_oracle"
    BAD_ORACLE = "bad_oracle"
    NO_TRAJECTORY = "no_trajectory"
    BAD_TRAJECTORY = "bad_trajectory"
    # evaluation
    BAD_MESSAGES = "bad_messages"
    BAD_METRICS = "bad_metrics"
    EVALUATOR_MISSING = "evaluator_missing"
    EVALUATOR_CRASH = "evaluator_crash"
    EVALUATOR_TIMEOUT = "evaluator_timeout"
    NOT_GRADABLE = "not_gradable"
    # cassettes, recordings and replay
    BAD_CASSETTE = "bad_cassette"
    CASSETTE_EXISTS = "cassette_exists"
    CASSETTE_HASH = "cassette_hash"
    CASSETTE_LOCKED = "cassette_locked"
    CASSETTE_MISMATCH = "cassette_mismatch"
    CASSETTE_MISSING = "cassette_missing"
    CASSETTE_UNREADABLE = "cassette_unreadable"
    CASSETTE_VERSION = "cassette_version"
    REPLAY_MISS = "replay_miss"
    REPLAY_DIVERGENCE = "replay_divergence"
    HTTP_SHIM_MISSING = "http_shim_missing"
    BAD_RUN = "bad_run"
    NO_RUNS = "no_runs"
    BAD_OUT = "bad_out"
    # reports
    BAD_RESULTS = "bad_results"
    MIXED_RESULTS = "mixed_results"
    NO_RESULTS = "no_results"
    # the operator and ourselves
    USAGE = "usage"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"
    INTERNAL_ERROR = "internal_error"


DESCRIPTIONS: dict[Kind, str] = {
    Kind.ACQUIRE_FAILED: "the backend could not provide a sandbox",
    Kind.ACQUIRE_TIMEOUT: "no sandbox within the acquire bound",
    Kind.ACQUIRE_UNREADABLE: "the local backend's episode users (as root) cannot read the source, interpreter or servers",
    Kind.ACQUIRE_USERS: "the local backend (as root) has no free user slot, or its slot folder is unsafe",
    Kind.CREATE_FAILED: "Prime refused to create a sandbox, or gave up after its retries",
    Kind.ENGINE_UNREACHABLE: "the Docker engine does not answer",
    Kind.IMAGE_MISSING: "the sandbox image for this tree (or DECATHLON_IMAGE) is not built",
    Kind.IMAGE_BUILD: "`decathlon image build` failed (its log is named)",
    Kind.SANDBOX_START_TIMEOUT: "a Prime sandbox did not reach RUNNING in time",
    Kind.SANDBOX_UNREACHABLE: "a sandbox says it runs but does not answer",
    Kind.UNAUTHORIZED: "Prime refused the API key",
    Kind.PAYMENT_REQUIRED: "Prime refused for the account's balance",
    Kind.QUOTA_EXCEEDED: "Prime refused for the account's quota",
    Kind.NO_API_KEY: "PRIME_API_KEY (or the model endpoint's key) is not set",
    Kind.SANDBOX_DIED: "the sandbox is gone, or was killed for memory",
    Kind.SANDBOX_RELEASED: "a call on a sandbox already released",
    Kind.EXEC_FAILED: "a command could not be started in the sandbox",
    Kind.EXEC_TIMEOUT: "a command in the sandbox ran over its bound",
    Kind.FILE_MISSING: "a file asked of the sandbox is not there",
    Kind.FILE_DOWNLOAD_FAILED: "a file could not be read out of the sandbox",
    Kind.FILE_UPLOAD_FAILED: "a file could not be written into the sandbox",
    Kind.PUT_FAILED: "a file could not be copied into the container",
    Kind.RELEASE_FAILED: "a sandbox could not be released after the verdict",
    Kind.GC_FAILED: "`decathlon gc` could not remove what it found",
    Kind.PRIVILEGE: "the episode daemon could not become the agent's user",
    Kind.BAD_SOURCE: "the task source is missing or not a Toolathlon root",
    Kind.UNKNOWN_TASK: "no such task in the source",
    Kind.BAD_TASK: "a task's name or definition is not usable",
    Kind.BAD_CONFIG: "a config module the user named (DECATHLON_GLOBAL_CONFIGS…) is missing",
    Kind.TASK_COPY_FAILED: "the episode's private copy of the task could not be made",
    Kind.TASK_DATA_MISSING: "the source lacks a file of the task's own (a checkout without its large files)",
    Kind.TASK_PYTHON_TOO_OLD: "the task interpreter is older than the task's scripts need (3.12)",
    Kind.TASK_ENV_FAILED: "`decathlon task-env` could not build the checkout's environment",
    Kind.PORTABLE_PYTHON: "the portable Python 3.13 could not be built",
    Kind.BAD_PYTHON: "the interpreter named is not one",
    Kind.FAKETIME_MISSING: "the frozen clock needs libfaketime, which is not installed",
    Kind.NO_FACTS_TABLE: "the Toolathlon facts table (tasks.csv) is not where it was looked for",
    Kind.MISSING_CREDENTIAL: "a credential a task needs is not set",
    Kind.ALREADY_SET_UP: "an episode is already set up in this home",
    Kind.BAD_LAUNCH_TIME: "the launch time is not YYYY-MM-DD HH:MM:SS",
    Kind.PREPROCESS_FAILED: "the task's preprocess exited non-zero",
    Kind.PREPROCESS_TIMEOUT: "the task's preprocess ran over its bound",
    Kind.SEED_FAILED: "a seed pack given to setup could not be loaded into its emulator (named, with why)",
    Kind.SEED_MISSING: "the task starts from a vendor resource (a template) that no seed pack given brings (named, with "
                       "the `decathlon seeds capture` command that writes it)",
    Kind.GRADER_PREFLIGHT: "the task's evaluator cannot be imported (checked before the agent acts)",
    Kind.UNKNOWN_LOCAL_TOOLS: "the task asks for a built-in tool group this sandbox does not implement",
    Kind.UNKNOWN_SERVER: "the task names an MCP server no definition has",
    Kind.UNKNOWN_LAUNCHER: "a server definition is launched by a command the catalogue does not know",
    Kind.UNKNOWN_SERVER_PACKAGE: "a server definition names a package the catalogue does not know",
    Kind.BAD_SERVER_CONFIG: "a server definition (YAML) is malformed",
    Kind.SERVER_NOT_INSTALLED: "a real MCP server is not installed (ci/install_servers.py)",
    Kind.REPLAY_ONLY_SERVER: "a server that cannot run here was asked to run live",
    Kind.SERVER_START: "an MCP server did not start",
    Kind.DAEMON_CRASH: "the episode daemon failed",
    Kind.DAEMON_DIED: "the episode daemon is gone",
    Kind.DAEMON_TIMEOUT: "the episode daemon did not answer in time",
    Kind.NO_SESSION: "no episode is set up here",
    Kind.BAD_SESSION: "the session record was not written by this task-api",
    Kind.BAD_REQUEST: "a request to task-api or its daemon is malformed",
    Kind.SERVICE_START: "an episode's service (mail, Canvas, WooCommerce) did not start",
    Kind.SERVICE_DIED: "an episode's service is gone",
    Kind.SERVICES_NEED_NETNS: "the local backend needs root to give an episode's services a network of their own",
    Kind.BAD_REPLY: "a sandbox's reply is not what task-api sends (malformed, forged, nested too deep)",
    Kind.REPLY_TOO_LARGE: "a sandbox's reply is over its cap",
    Kind.MODEL_UNREACHABLE: "the policy's model endpoint does not answer",
    Kind.MODEL_ERROR: "the policy's model endpoint refused, or answered something unusable",
    Kind.CONTEXT_OVERFLOW: "the policy overflowed its model's context (its failure, scored 0)",
    Kind.NO_ORACLE: "no oracle trajectory for the task",
    Kind.BAD_ORACLE: "an oracle trajectory is malformed",
    Kind.NO_TRAJECTORY: "no recorded trajectory for the replay policy",
    Kind.BAD_TRAJECTORY: "a recorded trajectory is malformed",
    Kind.BAD_MESSAGES: "the messages handed to evaluate are not a chat",
    Kind.BAD_METRICS: "the evaluator's metrics file is not a JSON object of numbers",
    Kind.EVALUATOR_MISSING: "the task has no evaluation/main.py",
    Kind.EVALUATOR_CRASH: "the evaluator exited other than 0 or 1",
    Kind.EVALUATOR_TIMEOUT: "the evaluator ran over its bound",
    Kind.NOT_GRADABLE: "an imported run replayed other than as recorded: its recorded verdict cannot judge it",
    Kind.BAD_CASSETTE: "a cassette is malformed",
    Kind.CASSETTE_EXISTS: "a recording would overwrite a cassette (--force replaces it)",
    Kind.CASSETTE_HASH: "a cassette's seal does not match its content",
    Kind.CASSETTE_LOCKED: "another recording holds the cassette",
    Kind.CASSETTE_MISMATCH: "a cassette does not record what the task needs",
    Kind.CASSETTE_MISSING: "no cassette for the task",
    Kind.CASSETTE_UNREADABLE: "a cassette cannot be read",
    Kind.CASSETTE_VERSION: "a cassette's format version is unknown",
    Kind.REPLAY_MISS: "a call that was not recorded",
    Kind.REPLAY_DIVERGENCE: "a built-in tool printed something else than when recorded",
    Kind.HTTP_SHIM_MISSING: "the HTTP record/replay shim is not installed",
    Kind.BAD_RUN: "a recorded run to import is malformed",
    Kind.NO_RUNS: "no recorded runs to import",
    Kind.BAD_OUT: "an output folder that is neither new, empty nor an earlier import",
    Kind.BAD_RESULTS: "result files that cannot be used (killed mid-write, edited)",
    Kind.MIXED_RESULTS: "one folder holding results of different runs",
    Kind.NO_RESULTS: "a folder with no results",
    Kind.USAGE: "a command used wrongly (the message says how)",
    Kind.CANCELLED: "the episode was cancelled (Ctrl-C, SIGTERM)",
    Kind.INTERRUPTED: "the run was cut short by its operator or a limit",
    Kind.INTERNAL_ERROR: "a bug of decathlon's own (please report it)",
}


class DecathlonError(Exception):
    """The root of every error decathlon raises on purpose: a kind and a message that names the cause."""

    def __init__(self, kind: Kind | str, message: str) -> None:
        self.kind = Kind(kind)
        self.message = message
        super().__init__(f"{self.kind}: {message}")


class InfraError(DecathlonError):
    """An error of the environment, not of the agent: reported with its kind and kept out of the reward
    (unless decathlon.core.blame says the agent could have caused it). `phase` is where it happened on the
    host; `origin` is "sandbox" when the kind was read from a sandbox's reply (attacker-controlled once the
    agent runs), "host" when the host itself observed the fault."""

    def __init__(self, kind: Kind | str, message: str, phase: str | None = None, origin: str = "host") -> None:
        super().__init__(kind, message)
        self.phase = phase
        self.origin = origin

    def to_json(self) -> dict[str, str]:
        out = {"kind": str(self.kind), "message": self.message}
        if self.phase:
            out["phase"] = self.phase
        return out

    def reply(self) -> dict[str, dict[str, str]]:
        """What a task-api verb answers for it: {"error": {"kind", "message"}}."""
        return {"error": {"kind": str(self.kind), "message": self.message}}


HEADER = """# Error kinds

Every error decathlon reports carries one of these kinds: in `result.json` (`infra_error` or `failure`:
`{kind, message, phase}`), on a verifiers trace (`info["infra_error"]`), in a task-api reply
(`{"error": {kind, message}}`) and in the CLI's table. `infra_error` is the environment's fault and is kept
out of the reward; `failure` is the episode's own (after the agent acted), scored 0. Which is which is
decided on the host (decathlon/core/blame.py). In code: `decathlon.errors.Kind`, every error a
`decathlon.errors.DecathlonError` (`InfraError` for the environment's).

Generated by `python -m decathlon.errors > docs/errors.md`; a test holds this file to the code.

"""


def markdown() -> str:
    """docs/errors.md: every kind and what it means."""
    rows = [f"| `{k}` | {DESCRIPTIONS[k]} |" for k in Kind]
    return HEADER + "| kind | meaning |\n| --- | --- |\n" + "\n".join(rows) + "\n"


if __name__ == "__main__":
    sys.stdout.write(markdown())
