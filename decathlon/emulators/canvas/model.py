"""The records the emulator keeps: one dataclass per Canvas object, holding what the API reads back.

Only state lives here; what a response looks like is `views`, who may do what is `access`, and how
objects change together (a graded quiz owns an assignment, a published assignment gives every
student a submission) is `store`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from decathlon.emulators.canvas.clock import ACCOUNT_TIME_ZONE

AVATAR = "http://canvas.instructure.com/images/messages/avatar-50.png"

# Canvas's built-in course roles: (type, API role name, role_id, the short type courses list shows)
ROLES = {
    "StudentEnrollment": (3, "student"),
    "TeacherEnrollment": (4, "teacher"),
    "TaEnrollment": (5, "ta"),
    "DesignerEnrollment": (6, "designer"),
    "ObserverEnrollment": (7, "observer"),
}
STAFF_TYPES = ("TeacherEnrollment", "TaEnrollment", "DesignerEnrollment")


@dataclass(eq=False)
class User:
    id: int
    name: str
    short_name: str
    sortable_name: str
    login_id: str
    sis_user_id: str | None
    password: str
    created_at: datetime
    uuid: str
    admin: bool = False
    tokens: list[str] = field(default_factory=list)
    time_zone: str = ACCOUNT_TIME_ZONE
    locale: str | None = None
    bio: str | None = None
    title: str | None = None
    pronouns: str | None = None
    primary_email: str | None = None
    avatar_url: str = AVATAR
    workflow_state: str = "registered"
    integration_id: str | None = None


@dataclass(eq=False)
class Account:
    id: int
    name: str
    uuid: str
    parent_account_id: int | None = None
    root_account_id: int | None = None
    default_time_zone: str = ACCOUNT_TIME_ZONE
    workflow_state: str = "active"


@dataclass(eq=False)
class Course:
    id: int
    name: str
    course_code: str
    account_id: int
    uuid: str
    created_at: datetime
    section_id: int
    group_id: int                 # the "Assignments" group every course starts with
    workflow_state: str = "unpublished"   # unpublished | available | completed | deleted
    start_at: datetime | None = None
    end_at: datetime | None = None
    default_view: str = "modules"
    syllabus_body: str | None = None
    public_description: str | None = None
    is_public: bool | None = None
    is_public_to_auth_users: bool = False
    public_syllabus: bool = False
    public_syllabus_to_auth: bool = False
    license: str | None = None
    time_zone: str = ACCOUNT_TIME_ZONE
    enrollment_term_id: int = 1
    storage_quota_mb: int = 500
    hide_final_grades: bool = False
    apply_assignment_group_weights: bool = False
    restrict_enrollments_to_course_dates: bool = False
    sis_course_id: str | None = None
    integration_id: str | None = None
    open_enrollment: bool | None = None
    self_enrollment: bool | None = None
    allow_student_forum_attachments: bool = False
    allow_wiki_comments: bool | None = None
    allow_student_wiki_edits: bool = False
    grading_standard_id: int | None = None
    course_format: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    front_page_url: str | None = None


@dataclass(eq=False)
class Section:
    id: int
    course_id: int
    name: str
    created_at: datetime


@dataclass(eq=False)
class Enrollment:
    id: int
    user_id: int
    course_id: int
    section_id: int
    type: str
    workflow_state: str
    created_at: datetime
    updated_at: datetime
    associated_user_id: int | None = None
    limit_privileges_to_course_section: bool = False
    start_at: datetime | None = None
    end_at: datetime | None = None
    last_activity_at: datetime | None = None

    @property
    def role_id(self) -> int:
        return ROLES.get(self.type, (3, "student"))[0]


@dataclass(eq=False)
class AssignmentGroup:
    id: int
    course_id: int
    name: str
    position: int
    group_weight: float = 0
    workflow_state: str = "available"


@dataclass(eq=False)
class Assignment:
    id: int
    course_id: int
    name: str
    group_id: int
    position: int
    created_at: datetime
    updated_at: datetime
    description: str | None = None
    due_at: datetime | None = None
    unlock_at: datetime | None = None
    lock_at: datetime | None = None
    points_possible: float | None = None
    grading_type: str = "points"
    submission_types: list[str] = field(default_factory=lambda: ["none"])
    allowed_extensions: list[str] = field(default_factory=list)
    workflow_state: str = "unpublished"   # unpublished | published | deleted
    quiz_id: int | None = None
    discussion_topic_id: int | None = None
    peer_reviews: bool = False
    automatic_peer_reviews: bool = False
    omit_from_final_grade: bool = False
    allowed_attempts: int = -1
    grade_group_students_individually: bool = False
    group_category_id: int | None = None
    only_visible_to_overrides: bool = False
    post_to_sis: bool = False
    anonymous_grading: bool = False
    integration_id: str | None = None

    @property
    def published(self) -> bool:
        return self.workflow_state == "published"


@dataclass(eq=False)
class SubmissionComment:
    id: int
    author_id: int
    comment: str
    created_at: datetime
    attempt: int | None = None
    attachment_ids: list[int] = field(default_factory=list)


@dataclass(eq=False)
class Submission:
    id: int
    assignment_id: int
    user_id: int
    created_at: datetime
    workflow_state: str = "unsubmitted"   # unsubmitted | submitted | pending_review | graded
    body: str | None = None
    url: str | None = None
    submission_type: str | None = None
    submitted_at: datetime | None = None
    attempt: int | None = None
    grade: str | None = None
    score: float | None = None
    entered_grade: str | None = None
    entered_score: float | None = None
    graded_at: datetime | None = None
    grader_id: int | None = None
    excused: bool | None = None
    late_policy_status: str | None = None
    attachment_ids: list[int] = field(default_factory=list)
    comments: list[SubmissionComment] = field(default_factory=list)
    quiz_submission_id: int | None = None
    versions: list[dict] = field(default_factory=list)   # earlier attempts, as `submission_history` shows them


@dataclass(eq=False)
class Quiz:
    id: int
    course_id: int
    title: str
    created_at: datetime
    updated_at: datetime
    description: str = ""
    quiz_type: str = "assignment"   # assignment | practice_quiz | graded_survey | survey
    time_limit: int | None = None
    shuffle_answers: bool = False
    show_correct_answers: bool = True
    show_correct_answers_last_attempt: bool = False
    show_correct_answers_at: datetime | None = None
    hide_correct_answers_at: datetime | None = None
    hide_results: str | None = None
    scoring_policy: str = "keep_highest"
    allowed_attempts: int = 1
    one_question_at_a_time: bool = False
    cant_go_back: bool = False
    access_code: str | None = None
    ip_filter: str | None = None
    due_at: datetime | None = None
    lock_at: datetime | None = None
    unlock_at: datetime | None = None
    workflow_state: str = "unpublished"   # unpublished | available | deleted
    assignment_id: int | None = None
    assignment_group_id: int | None = None
    one_time_results: bool = False
    only_visible_to_overrides: bool = False
    version_number: int = 1
    edited: bool = False            # questions changed since the last publish (the next publish is a new version)

    @property
    def published(self) -> bool:
        return self.workflow_state == "available"


@dataclass(eq=False)
class QuizQuestion:
    id: int
    quiz_id: int
    position: int
    question_type: str
    question_name: str
    question_text: str
    points_possible: float
    created_at: datetime
    updated_at: datetime
    answers: list[dict] = field(default_factory=list)
    correct_comments: str = ""
    incorrect_comments: str = ""
    neutral_comments: str = ""
    correct_comments_html: str = ""
    incorrect_comments_html: str = ""
    neutral_comments_html: str = ""
    text_after_answers: str = ""
    matching_answer_incorrect_matches: str | None = None
    quiz_group_id: int | None = None
    workflow_state: str = "active"


@dataclass(eq=False)
class QuizAttempt:
    """One finished attempt, kept so `kept_score` follows the quiz's scoring policy."""
    attempt: int
    score: float
    finished_at: datetime


@dataclass(eq=False)
class QuizSubmission:
    id: int
    quiz_id: int
    user_id: int
    attempt: int
    started_at: datetime
    validation_token: str
    quiz_points_possible: float
    quiz_version: int
    submission_id: int | None = None
    end_at: datetime | None = None
    finished_at: datetime | None = None
    score: float | None = None
    kept_score: float | None = None
    workflow_state: str = "untaken"   # untaken | pending_review | complete | settings_only
    fudge_points: float | None = None
    extra_attempts: int | None = None
    extra_time: int | None = None
    manually_unlocked: bool | None = None
    has_seen_results: bool | None = None
    time_spent: int | None = None
    answers: dict[int, Any] = field(default_factory=dict)    # question id -> the answer as given
    manual_scores: dict[int, float] = field(default_factory=dict)   # question id -> a teacher's score for it
    flagged: set[int] = field(default_factory=set)
    history: list[QuizAttempt] = field(default_factory=list)


@dataclass(eq=False)
class DiscussionEntry:
    id: int
    topic_id: int
    user_id: int
    message: str
    created_at: datetime
    updated_at: datetime
    parent_id: int | None = None
    workflow_state: str = "active"


@dataclass(eq=False)
class DiscussionTopic:
    id: int
    course_id: int
    user_id: int
    title: str
    message: str
    created_at: datetime
    updated_at: datetime
    position: int
    is_announcement: bool = False
    published: bool = True
    posted_at: datetime | None = None
    delayed_post_at: datetime | None = None
    lock_at: datetime | None = None
    last_reply_at: datetime | None = None
    discussion_type: str = "side_comment"
    require_initial_post: bool | None = None
    pinned: bool = False
    locked: bool = False
    allow_rating: bool = False
    only_graders_can_rate: bool = False
    sort_by_rating: bool = False
    podcast_enabled: bool = False
    podcast_has_student_posts: bool = False
    assignment_id: int | None = None
    attachment_ids: list[int] = field(default_factory=list)
    workflow_state: str = "active"   # active | unpublished | deleted


@dataclass(eq=False)
class ConversationMessage:
    id: int
    author_id: int
    body: str
    created_at: datetime
    participating_user_ids: list[int]
    attachment_ids: list[int] = field(default_factory=list)
    generated: bool = False


@dataclass(eq=False)
class ConversationParticipant:
    user_id: int
    workflow_state: str = "unread"   # read | unread | archived
    starred: bool = False
    subscribed: bool = True
    deleted: bool = False
    # the messages this participant still sees (deleting a conversation hides it only for them)
    message_ids: list[int] = field(default_factory=list)


@dataclass(eq=False)
class Conversation:
    id: int
    subject: str
    created_at: datetime
    context_code: str | None = None
    private: bool = True
    messages: list[ConversationMessage] = field(default_factory=list)
    participants: dict[int, ConversationParticipant] = field(default_factory=dict)


@dataclass(eq=False)
class ContextModule:
    id: int
    course_id: int
    name: str
    position: int
    created_at: datetime
    unlock_at: datetime | None = None
    require_sequential_progress: bool = False
    prerequisite_module_ids: list[int] = field(default_factory=list)
    publish_final_grade: bool = False
    workflow_state: str = "unpublished"   # unpublished | active | deleted


@dataclass(eq=False)
class ModuleItem:
    id: int
    module_id: int
    course_id: int
    position: int
    title: str
    type: str                      # File | Page | Discussion | Assignment | Quiz | SubHeader | ExternalUrl | ExternalTool
    content_id: int | None = None
    page_url: str | None = None
    external_url: str | None = None
    new_tab: bool = False
    indent: int = 0
    completion_requirement: dict | None = None
    published: bool = False
    completed_by: set[int] = field(default_factory=set)


@dataclass(eq=False)
class Folder:
    id: int
    context_type: str               # Course | User
    context_id: int
    name: str
    full_name: str
    parent_folder_id: int | None
    created_at: datetime
    position: int = 0


@dataclass(eq=False)
class File:
    id: int
    folder_id: int
    display_name: str
    filename: str
    content_type: str
    data: bytes
    created_at: datetime
    updated_at: datetime
    uuid: str
    user_id: int | None = None
    locked: bool = False
    hidden: bool = False
    workflow_state: str = "processed"   # processed | deleted

    @property
    def size(self) -> int:
        return len(self.data)


@dataclass(eq=False)
class PendingUpload:
    """Step 1 of Canvas's three-step upload: where the bytes of step 2 will go."""
    token: str
    user_id: int
    folder_id: int
    name: str
    content_type: str | None
    size: int | None
    on_duplicate: str
    created_at: datetime
    for_submission: tuple[int, int] | None = None   # (assignment, user) when uploading for a submission


@dataclass(eq=False)
class WikiPage:
    id: int
    course_id: int
    url: str
    title: str
    body: str
    created_at: datetime
    updated_at: datetime
    published: bool = False
    front_page: bool = False
    editing_roles: str = "teachers"
    last_edited_by: int | None = None
    workflow_state: str = "unpublished"   # unpublished | active | deleted


@dataclass(eq=False)
class CalendarEvent:
    id: int
    context_code: str
    title: str
    created_at: datetime
    updated_at: datetime
    start_at: datetime | None = None
    end_at: datetime | None = None
    description: str | None = None
    location_name: str | None = None
    location_address: str | None = None
    all_day: bool = False
    workflow_state: str = "active"
