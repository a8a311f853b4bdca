"""The five tools: the Forms v1 calls each makes, and the text the reference makes of the answer or the failure."""
from __future__ import annotations

from typing import Any

from ..canvas.jsargs import truthy
from ..google_api import Caller, failure_message
from ..jsvalues import MessageError
from ..memory.jsvalues import UNDEFINED, to_string
from ..memory.stringify import stringify
from decathlon.emulators.workspace.links import form_view_url

# JSON-RPC codes of the McpError the reference throws (its SDK's ErrorCode).
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# What each tool calls itself in "Failed to <what>: <Google's message>".
WHAT = {"create_form": "create form", "add_text_question": "add text question",
        "add_multiple_choice_question": "add multiple choice question", "get_form": "get form",
        "get_form_responses": "get form responses"}


class Refusal(MessageError):
    """What the reference throws before its call's own try: the handler shows it as it is, not as a failed call."""


def mcp_error(code: int, message: str) -> Refusal:
    """The TypeScript SDK's McpError, whose message carries its code."""
    return Refusal(f"MCP error {code}: {message}")


class Args:
    """`args.<key>` as JavaScript reads it: undefined arguments throw the TypeError Node words this way."""

    def __init__(self, arguments: dict[str, Any] | None) -> None:
        self.arguments = arguments

    def __getitem__(self, key: str) -> Any:
        if self.arguments is None:
            raise Refusal(f"Cannot read properties of undefined (reading '{key}')")
        return self.arguments.get(key, UNDEFINED)


def _or_false(value: Any) -> Any:
    """`value || false`."""
    return value if truthy(value) else False


def _path(value: Any) -> str:
    return value if isinstance(value, str) else to_string(value)


def responder_uri(form_id: Any) -> str:
    return form_view_url(to_string(form_id))


def created_text(form_id: Any, args: Args) -> str:
    description = args["description"]
    return stringify({"formId": form_id, "title": args["title"], "description": description if truthy(description)
                      else "", "responderUri": responder_uri(form_id)}, "  ")


def text_added_text(args: Args) -> str:
    return stringify({"success": True, "message": "Text question added successfully",
                      "questionTitle": args["questionTitle"], "required": _or_false(args["required"])}, "  ")


def choice_added_text(args: Args) -> str:
    return stringify({"success": True, "message": "Multiple choice question added successfully",
                      "questionTitle": args["questionTitle"], "options": args["options"],
                      "required": _or_false(args["required"])}, "  ")


def failed_text(tool: str, message: str) -> str:
    """A failed call, as the reference's handler shows the InternalError its tool threw."""
    return f"Error: {mcp_error(INTERNAL_ERROR, f'Failed to {WHAT[tool]}: {message}').message}"


def answer_text(answer: Any) -> str:
    """get_form and get_form_responses: Google's answer as JSON.stringify(data, null, 2)."""
    return stringify(answer, "  ")


def _new_item(args: Args, question: dict[str, Any]) -> dict[str, Any]:
    """A batchUpdate that puts the question first in the form (`location.index` 0), as the reference does."""
    body = {"required": _or_false(args["required"]), **question}
    return {"requests": [{"createItem": {"item": {"title": args["questionTitle"], "questionItem": {"question": body}},
                                         "location": {"index": 0}}}]}


async def _create_form(caller: Caller, args: Args) -> str:
    if not truthy(args["title"]):
        raise mcp_error(INVALID_PARAMS, "Title is required")
    info: dict[str, Any] = {"title": args["title"], "documentTitle": args["title"]}
    if truthy(args["description"]):
        info["description"] = args["description"]
    answer = await caller.run(lambda: caller.service("forms", "v1").forms().create(body={"info": info}).execute())
    return created_text(answer.get("formId", UNDEFINED) if isinstance(answer, dict) else UNDEFINED, args)


async def _add_text_question(caller: Caller, args: Args) -> str:
    if not truthy(args["formId"]) or not truthy(args["questionTitle"]):
        raise mcp_error(INVALID_PARAMS, "Form ID and question title are required")
    forms = caller.service("forms", "v1").forms()
    form_id = _path(args["formId"])
    body = _new_item(args, {"textQuestion": {}})

    def add() -> None:
        forms.get(formId=form_id).execute()  # the reference reads the form first, and drops what it read
        forms.batchUpdate(formId=form_id, body=body).execute()

    await caller.run(add)
    return text_added_text(args)


async def _add_choice_question(caller: Caller, args: Args) -> str:
    options = args["options"]
    if not truthy(args["formId"]) or not truthy(args["questionTitle"]) or not isinstance(options, list):
        raise mcp_error(INVALID_PARAMS, "Form ID, question title, and options array are required")
    body = _new_item(args, {"choiceQuestion": {"type": "RADIO", "options": [{"value": o} for o in options]}})
    await caller.run(lambda: caller.service("forms", "v1").forms().batchUpdate(
        formId=_path(args["formId"]), body=body).execute())
    return choice_added_text(args)


async def _read(caller: Caller, args: Args, responses: bool) -> str:
    if not truthy(args["formId"]):
        raise mcp_error(INVALID_PARAMS, "Form ID is required")
    form_id = _path(args["formId"])

    def read() -> Any:
        forms = caller.service("forms", "v1").forms()
        return (forms.responses().list(formId=form_id) if responses else forms.get(formId=form_id)).execute()

    return answer_text(await caller.run(read))


async def _run(caller: Caller, name: str, args: Args) -> str:
    if name == "create_form":
        return await _create_form(caller, args)
    if name == "add_text_question":
        return await _add_text_question(caller, args)
    if name == "add_multiple_choice_question":
        return await _add_choice_question(caller, args)
    return await _read(caller, args, responses=name == "get_form_responses")


async def call(caller: Caller, name: str, arguments: dict[str, Any] | None) -> tuple[str, bool]:
    """The result text and its error flag. A refusal of the arguments is an InvalidParams McpError, a failed call an
    InternalError one naming the tool's action, and the reference's handler turns either into `Error: <message>`."""
    if name not in WHAT:
        return f"Error: {mcp_error(METHOD_NOT_FOUND, f'Unknown tool: {name}').message}", True
    try:
        return await _run(caller, name, Args(arguments)), False
    except Refusal as exc:
        return f"Error: {exc.message}", True
    except Exception as exc:
        message = failure_message(exc)
        if message is None:
            raise
        return failed_text(name, message), True
