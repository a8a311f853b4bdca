"""Offline stand-in for the npm MCP server ``@modelcontextprotocol/server-filesystem``.

Run as ``python -m decathlon.standins.filesystem ROOT [ROOT...]``; it serves MCP over
stdio with the reference's twelve tools, argument names and output text.

Formats taken from recorded real runs: every success message, ``list_directory``,
``list_directory_with_sizes`` (column padding, totals, sizes), ``directory_tree``
JSON, ``read_multiple_files`` blocks, the ``edit_file`` fenced diff (checked
against the npm ``diff`` 5.2.0 package the reference uses), ``get_file_info``,
``search_files`` (case-insensitive name substring, ``No matches found``),
``list_allowed_directories``, ``head``/``tail`` (including the chunk-boundary
U+FFFD quirk) and the errors ``Access denied - path outside allowed
directories``, ``Parent directory does not exist`` and Node's ENOENT texts.

Assumed from the reference source where no recording shows the case:
per-file errors in ``read_multiple_files`` (``<path>: Error - <message>``),
the symlink-target denial text, invalid-argument messages (zod v3 issue JSON),
``Unknown tool: <name>``, the ``excludePatterns`` glob rules, ``localeCompare``
ordering for ``sortBy: name``, and Node's wording of other OS errors.

Deliberate differences: relative paths resolve against the first root rather
than the working directory; MCP client roots are not requested; symlinked
entries whose target is outside the roots are reported with size 0 by
``list_directory_with_sizes`` instead of being stat-ed; a dangling symlink that
points outside is refused; time-zone names in dates cover common zones only.
Checks happen before each operation, so, as with the reference, a concurrent
process swapping in symlinks between check and use is not defended against.
"""


def inprocess_server(argv: list[str]):
    """The same server, for a host process that serves it over in-memory streams (see decathlon.sandbox.mcp_pool)."""
    from .paths import Sandbox
    from .server import build_server

    return build_server(Sandbox.from_arguments(argv))
