"""Offline stand-in for the npm MCP server ``@modelcontextprotocol/server-memory`` (version 2025.4.25).

Run as ``MEMORY_FILE_PATH=<file> python -m decathlon.standins.memory``; it serves MCP over stdio
with the reference's nine tools (create_entities, create_relations, add_observations,
delete_entities, delete_observations, delete_relations, read_graph, search_nodes,
open_nodes), their input schemas, result text and errors. The version is the one
Toolathlon's package-lock pins; its output differs from later releases, which strip ``type``
from entities and report errors as ``isError`` results.

Taken from recorded real runs: ``read_graph``'s ``JSON.stringify(graph, null, 2)`` text, with
each entity and relation shown exactly as its memory file line was parsed (``"type"`` kept,
the file's key order kept), and a malformed file failing the call with V8's ``JSON.parse``
message (``Expected property name or '}' in JSON at position 1 (line 1 column 2)``) as a
JSON-RPC error, not as an ``isError`` result.

Assumed from the reference's source where no recording shows the case: the other eight tools'
results and messages (``Entities deleted successfully`` ...), the JSONL file format, the
missing-file-is-empty rule, ``Entity with name X not found``, ``Unknown tool: X``, ``No
arguments provided for tool: X``, and what unvalidated bad arguments do: V8 TypeErrors such
as ``Cannot read properties of undefined (reading 'filter')`` or ``entities.filter is not a
function``, or JavaScript's lenient behaviour (a string ``entityNames`` is matched by
substring). The V8 and Node texts of those messages follow V8's sources for Node 22, the
Node version of Toolathlon's image; Node's fs errors read ``ENOENT: no such file or
directory, open '<path>'``.

Deliberate differences: a relative MEMORY_FILE_PATH (and the default ``memory.json`` when it
is unset) is anchored at the working directory, not at the package's install directory;
writes go to a temporary file renamed over the target (upstream rewrites in place), falling
back to an in-place write only when the directory is not writable; calls are served one at a
time, so concurrent calls cannot lose each other's updates as upstream's can; a lone
surrogate in an error message (half an emoji quoted by a JSON.parse message) is sent as
U+FFFD, since the Python SDK cannot encode one; the SDK puts the top-level keys of each
``inputSchema`` in its own order (properties, required, type) and adds ``isError: false``.

There is deliberately no ``inprocess_server``: the memory file comes from the server's own
environment, which a host serving it in-process would not pass on.
"""
