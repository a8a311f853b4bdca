"""Who may see and change what, with Canvas's answers when they may not.

Account admins may do everything. In a course, teachers, TAs and designers manage; students and
observers read what is published, and only while the course is published (or concluded); everyone
else is refused with Canvas's 401 "user not authorized". Deleted things do not exist (404).
"""
from __future__ import annotations

from decathlon.emulators.canvas.errors import not_found, unauthorized
from decathlon.emulators.canvas.model import STAFF_TYPES, Course, Enrollment, User
from decathlon.emulators.canvas.store import Store


def course_roles(store: Store, user: User, course: Course) -> list[Enrollment]:
    return [e for e in store.user_enrollments(user.id, course.id) if e.workflow_state != "completed"
            or course.workflow_state == "completed"]


def is_staff(store: Store, user: User, course: Course) -> bool:
    if user.admin:
        return True
    return any(e.type in STAFF_TYPES for e in course_roles(store, user, course))


def is_student(store: Store, user: User, course: Course) -> bool:
    return any(e.type == "StudentEnrollment" for e in course_roles(store, user, course))


def can_read_course(store: Store, user: User, course: Course) -> bool:
    if user.admin:
        return True
    roles = course_roles(store, user, course)
    if any(e.type in STAFF_TYPES for e in roles):
        return True
    return bool(roles) and course.workflow_state in ("available", "completed")


def course_for_read(store: Store, user: User, course_id: int) -> Course:
    course = store.courses.get(course_id)
    if course is None or course.workflow_state == "deleted":
        raise not_found()
    if not can_read_course(store, user, course):
        raise unauthorized()
    return course


def course_for_manage(store: Store, user: User, course_id: int) -> Course:
    course = course_for_read(store, user, course_id)
    if not is_staff(store, user, course):
        raise unauthorized()
    return course


def require_admin(user: User) -> None:
    if not user.admin:
        raise unauthorized()
