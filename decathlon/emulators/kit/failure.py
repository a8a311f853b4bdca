"""The one root of every error an emulator answers in its vendor's own shape. A vendor family's subclass carries what
its serializer needs: kit.errors.ApiError (an HTTP status and a JSON body: Google REST, Canvas),
gcplogging.errors.ApiError (a gRPC status), snowflake.wire.SnowflakeError (an errno and SQL state),
woocommerce.errors.RestError (a WP_Error), gcp.bigquery.errors.QueryError (a job's error result). Anything else a
handler raises is the emulator's own bug, answered as the vendor's internal error, never with a traceback.

Free of any server library: every emulator's error module imports it, whatever it serves with."""
from __future__ import annotations


class ServiceError(Exception):
    """An answer in the vendor's shape that a handler gives by raising."""
