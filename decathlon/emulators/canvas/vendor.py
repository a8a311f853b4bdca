"""Canvas LMS, as upstream's deployment runs it."""
from decathlon.emulators.vendor import System, Vendor

VENDOR = Vendor(
    name="canvas",
    title="the Canvas LMS emulator (10001/20001)",
    reach="service",
    protocol="REST",
    ports=(10001, 20001),
    servers=("canvas",),
    systems=(System("canvas", "Canvas LMS", modules=("canvasapi",), hosts=(r"(?:localhost|127\.0\.0\.1):[12]0001\b",),
                    service="canvas"),),
    surface="Canvas REST /api/v1: users, courses, enrollments, assignments, submissions, quizzes, discussions, "
            "conversations, modules, files, pages",
)
