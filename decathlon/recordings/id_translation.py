"""Recorded ids → live ids, for re-executing a recorded run against live services.

A recorded run talked to upstream's shared Canvas, WooCommerce and mail servers, whose ids come from
their whole history (course 70, product 341, email 12). Re-executed against an episode's own services,
the same preprocess creates the same objects under other ids (course 1, product 17…), and the recorded
calls (`canvas_list_quizzes {"course_id": 70}`) would name objects that do not exist here.

The agent only knows an id from a tool's answer. So each recorded answer is aligned with the live
answer to the same call, and where they differ only in an id, the pair is learnt; later recorded
calls have their id arguments rewritten through what was learnt. Alignment is structural on JSON
answers (dict keys; list items matched by a natural key such as name, title or email, else by
position) and by order of appearance on text answers (`ID: 12`). The name under which an overlong
answer was saved is replaced wherever a later call mentions it (the code that reads that file), and so is a
name made unique by a random hex suffix (a bucket `reports-7b6c349200a5`, made again as `reports-ac17a02cefe3`), and
an opaque token an answer hands out for a later call to echo (`validation_token`) is translated like an
id. An opaque id (Google's: a form's `formId`, a spreadsheet's, a calendar event's, random letters and digits) is
unique on its own, so it is replaced wherever a later call names it, like a saved name: the link the agent wrote into
a file (`https://docs.google.com/forms/d/<formId>/viewform`) names the live form. Such an id is also learnt from two
links that differ only in it, whatever their key (a form's `responderUri`, `…/forms/d/e/<published id>/viewform`).

Published runs mask some identifiers (a project id shown as `t********n` in every answer, then typed so by the
model into its SQL): such a mask is learnt like a name, from the live answer that shows a value where the
recorded one showed the mask (`(Project: t********n)` ↔ `(Project: decathlon-emulated)`), and so is the
identifier a mask stands for where the recording shows it unmasked (`unmask`: same visible letters, same
length, one candidate only). Only a pair seen in a live answer is used: a replay, whose answers are the recorded
ones, translates nothing.
Nothing else in an argument is touched, and an id never seen in a recorded answer is left as it is.
An answer or argument nested past nesting.MAX_DEPTH is opaque text: nothing in it is learnt or translated,
so a replay still returns what was recorded.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Iterable

from decathlon.tape import nesting

_ID_KEY = re.compile(r"(?:^|_)(?:id|ids|uid)$|Id$|Ids$", re.IGNORECASE)
# Opaque per-object secrets a later call must echo (a quiz submission's validation_token): random on
# every server, so a recorded one never matches the live one.
_TOKEN_KEY = re.compile(r"(?:^|_)token$", re.IGNORECASE)
_TOKEN_VALUE = re.compile(r"[A-Za-z0-9_\-]{16,256}")
# A vendor's random id: long, letters and digits (Google's 44-character file ids, 26-character event ids).
_OPAQUE_ID = re.compile(r"(?=[A-Za-z0-9_\-]*[0-9])(?=[A-Za-z0-9_\-]*[A-Za-z])[A-Za-z0-9_\-]{20,128}")
# Identify list items across the two answers when their ids differ.
_NATURAL_KEYS = ("name", "title", "login_id", "email", "sku", "slug", "subject", "course_code", "question_name",
                 "display_name", "sortable_name", "filename", "username", "question_text", "text")
_TEXT_ID = re.compile(r"\b([A-Za-z_ ]*?(?:ID|Id|id))\s*[:=#]\s*(\d+)\b")
_MAX_DEPTH = 40
# A link's parts, between the characters that delimit them (an id is one whole part).
_LINK_PARTS = re.compile(r"[/?&=#.:]")
# An answer too long to show is saved under a name of its own (decathlon/sandbox/toolfmt.py); the code a
# recorded agent wrote to read it names the recorded file.
_SAVED_AS = re.compile(r"shortuuid identifier: ([A-Za-z0-9]+)\)")
# A name a preprocess makes unique with a random hex suffix (a bucket `iot_anomaly_reports-7b6c349200a5`, a
# dataset `ab_testing_3f9a…`): re-executed, the same preprocess makes it again under another suffix.
_SUFFIXED = re.compile(r"\b([A-Za-z][A-Za-z0-9_.-]*[-_])([0-9a-f]{8,32})\b")
# A value the run's publisher masked: letters on both sides of a run of stars (`t********n`, `As**********ng`), so
# task data masked to digits (a card's `****-2841`, a phone's `138****1234`) is no such value.
_MASK = re.compile(r"(?<![\w*])([A-Za-z][A-Za-z0-9_]*?)(\*{3,})([A-Za-z0-9_]*[A-Za-z])(?![\w*])")
# What a live answer shows in a mask's place: one identifier (a project, account, bucket, zone), no spaces.
_IDENTIFIER = re.compile(r"[A-Za-z0-9][\w.\-/:@]{0,127}")
_CONTEXT = 24  # characters of the line before a mask, that find its place in the live answer


def _suffixed(text: str) -> dict[str, set[str]]:
    """stem → the suffixed names with that stem in `text` (a suffix has a digit: a word is no random suffix)."""
    out: dict[str, set[str]] = {}
    for stem, suffix in _SUFFIXED.findall(text):
        if any(c.isdigit() for c in suffix):
            out.setdefault(stem, set()).add(stem + suffix)
    return out


def masks_in(text: str) -> set[str]:
    return {m[0] for m in _MASK.finditer(text)}


def unmask(outputs: Iterable[str], masks: Iterable[str]) -> dict[str, str]:
    """mask → the identifier it stands for, where the recorded outputs show exactly one value of its visible
    letters and length unmasked (`t********n` → `toolathlon`)."""
    texts = [t for t in outputs if t]
    out = {}
    for mask in sorted(set(masks)):
        m = _MASK.fullmatch(mask)
        if m is None:
            continue
        shape = re.compile(rf"(?<![\w*]){re.escape(m[1])}[\w.\-/]{{{len(m[2])}}}{re.escape(m[3])}(?![\w*])")
        seen = {found for text in texts for found in shape.findall(text)}
        if len(seen) == 1:
            out[mask] = seen.pop()
    return out


def _is_id_key(key: str) -> bool:
    return bool(_ID_KEY.search(key))


def _token_value(value: object) -> str | None:
    return value if isinstance(value, str) and _TOKEN_VALUE.fullmatch(value) else None


def _id_value(value: object) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value.isdigit() and len(value) < 20:
        return value
    return None


def unwrap(content: object, _depth: int = 0) -> str:
    """A tool result's text: recorded runs store the MCP content item as JSON text
    (`{"type": "text", "text": ...}`), or a list of them, or plain text."""
    if isinstance(content, list):
        if _depth > nesting.MAX_DEPTH:  # no content is lists this deep; bounded, so no RecursionError
            return ""
        return "\n".join(unwrap(c, _depth + 1) for c in content)
    if isinstance(content, dict):
        return str(content.get("text", ""))
    if not isinstance(content, str):
        return ""
    stripped = content.lstrip()
    if stripped.startswith(("{", "[")) and '"type"' in stripped[:40]:
        try:
            return unwrap(nesting.loads(stripped), _depth + 1)
        except ValueError:  # not JSON, or too deep to be content items: the text as it is
            pass
    return content


def _parse(text: str) -> object | None:
    """The JSON in a tool's text: the whole text, or the first value after a prose prefix."""
    try:
        return nesting.loads(text)
    except nesting.TooDeep:
        return None  # opaque: aligned as text
    except ValueError:
        pass
    for i, ch in enumerate(text[:400]):
        if ch in "[{":
            try:
                return nesting.raw_decode(text, i)[0]
            except nesting.TooDeep:
                return None
            except ValueError:
                continue
    return None


# Verbs whose answer is the object the tool names (canvas_list_courses → courses); a tool named for
# anything else (canvas_enroll_user answers an enrollment) says nothing of its answer's kind.
_OBJECT_VERBS = frozenset({"get", "list", "search", "create", "update", "delete", "read", "fetch", "find"})


def _scope_of(name: str | None) -> str | None:
    """The kind of object a key or tool names: course_id, courseId, courses, course_ids → course."""
    if not name:
        return None
    s = re.sub(r"[^a-z0-9]", "", name.lower())
    for suffix in ("uids", "ids", "uid", "id"):
        if s.endswith(suffix):
            s = s[: -len(suffix)]
            break
    if s.endswith("ies"):
        s = s[:-3] + "y"
    elif s.endswith("zzes"):
        s = s[:-3]
    elif s.endswith(("sses", "xes")):
        s = s[:-2]
    elif s.endswith("s") and not s.endswith("ss"):
        s = s[:-1]
    return s or None


# Tools whose answer is an object their name does not say: Canvas's quiz attempt is a quiz submission (its `id` is
# what a later `quiz_submission_id` names, numbered apart from the quiz ids beside it).
_ANSWER_SCOPES = {"start_quiz_attempt": "quizsubmission"}
# A tool's argument whose name says less than what it names: canvas_submit_quiz_answers' `submission_id` is the quiz
# submission's (an assignment submission is numbered apart).
# A multiple-choice `answer` is the chosen answer's id (Canvas's quiz API), numbered afresh in every episode.
_ARGUMENT_SCOPES = {("submit_quiz_answers", "submission_id"): "quizsubmission", ("submit_quiz_answers", "answer"): "answer"}


def _tool_scope(tool: str | None) -> str | None:
    """What a tool's answer lists or returns at its top level: woo_products_get → product,
    canvas_list_quiz_questions → question."""
    if not tool:
        return None
    for suffix, scope in _ANSWER_SCOPES.items():
        if tool.endswith(suffix):
            return scope
    words = [w.lower() for w in re.split(r"[_\-\s.]+|(?<=[a-z])(?=[A-Z])", tool) if w][1:]
    nouns = [w for w in words if w not in _OBJECT_VERBS]
    if len(nouns) == len(words) or not nouns:
        return None
    return _scope_of(nouns[-1])


@dataclass
class IdTranslator:
    """Ids are learnt per kind of object (`scoped`: a course's ids apart from a question's, since upstream
    numbers each table on its own and a recorded 56 can be both), and globally as a fallback for a key
    that does not say its kind (`mapping`)."""
    mapping: dict[str, str] = field(default_factory=dict)
    # A recorded id seen paired with two different live ids: ambiguous, so not translated globally.
    conflicts: set[str] = field(default_factory=set)
    # kind → recorded → live; the latest answer wins, as the agent acts on what it saw last.
    scoped: dict[str, dict[str, str]] = field(default_factory=dict)
    # Names replaced wherever they appear in a later call's strings (saved overlong outputs).
    substitutions: dict[str, str] = field(default_factory=dict)
    # mask → the identifier the recording shows it stands for (`unmask`), known from the start.
    unmasked: dict[str, str] = field(default_factory=dict)
    # A mask, or an identifier a mask stands for, → what the live answer showed in its place.
    aliases: dict[str, str] = field(default_factory=dict)
    alias_conflicts: set[str] = field(default_factory=set)
    # An opaque id seen paired with two different live ids: which one a later call meant cannot be told.
    opaque_conflicts: set[str] = field(default_factory=set)

    @classmethod
    def for_recording(cls, outputs: Iterable[object], arguments: Iterable[str] = ()) -> IdTranslator:
        """A translator for one recorded run: the identifiers its masks stand for are read from its outputs."""
        texts = [unwrap(o) for o in outputs]
        masks = {m for t in [*texts, *arguments] if isinstance(t, str) for m in masks_in(t)}
        return cls(unmasked=unmask(texts, masks))

    @property
    def active(self) -> bool:
        return bool(self.mapping or self.substitutions or self.aliases or any(v != k for m in self.scoped.values()
                                                                              for k, v in m.items()))

    def learn(self, recorded: object, live: object, tool: str | None = None) -> None:
        rec_text, live_text = unwrap(recorded), unwrap(live)
        for a, b in zip(_SAVED_AS.findall(rec_text), _SAVED_AS.findall(live_text)):
            if a != b:
                self.substitutions[a] = b
        # A suffixed name is paired where each answer names one of its stem: it is replaced wherever a later call
        # names it, as the agent typed it from this answer.
        live_names = _suffixed(live_text)
        for stem, names in sorted(_suffixed(rec_text).items()):
            live = live_names.get(stem, set())
            if len(names) == 1 and len(live) == 1 and names != live:
                self.substitutions[next(iter(names))] = next(iter(live))
        self._learn_aliases(rec_text, live_text)
        rec, cur = _parse(rec_text), _parse(live_text)
        if rec is not None and cur is not None:
            self._align(rec, cur, None, _tool_scope(tool), 0)
        else:
            self._align_text(rec_text, live_text, _tool_scope(tool))

    def _learn_aliases(self, rec_text: str, live_text: str) -> None:
        """What the live answer shows where the recorded one shows a mask (or the identifier a mask stands for): the
        value between the same text before it on its line and the same few characters after it."""
        tokens = masks_in(rec_text) | {v for v in self.unmasked.values() if v in rec_text}
        for token in sorted(tokens):
            for m in re.finditer(rf"(?<![\w*]){re.escape(token)}(?![\w*])", rec_text):
                live = _aligned(rec_text, live_text, m.start(), m.end())
                if live is not None and live != token:
                    self._pair_alias(token, live)

    def _pair_alias(self, token: str, live: str) -> None:
        if token in self.alias_conflicts:
            return
        known = self.aliases.get(token)
        if known is None:
            self.aliases[token] = live
        elif known != live:  # one mask, two values: which one a call meant cannot be told
            del self.aliases[token]
            self.alias_conflicts.add(token)

    def _alias_table(self) -> dict[str, str]:
        """Recorded token → live value: masks learnt directly, and masks through the identifier they stand for."""
        table = dict(self.aliases)
        for mask, identifier in self.unmasked.items():
            if mask not in table and mask not in self.alias_conflicts and identifier in self.aliases:
                table[mask] = self.aliases[identifier]
        return table

    def _substitute(self, value: str) -> str:
        out = value
        for a, b in self.substitutions.items():
            out = out.replace(a, b)
        table = self._alias_table()
        if table:
            pattern = re.compile("|".join(rf"(?<![\w*]){re.escape(k)}(?![\w*])"
                                          for k in sorted(table, key=len, reverse=True)))
            out = pattern.sub(lambda m: table[m[0]], out)
        return out

    def _pair(self, rec: str, cur: str, scope: str | None) -> None:
        if scope is not None:
            self.scoped.setdefault(scope, {})[rec] = cur
        if rec == cur or rec in self.conflicts:
            return
        known = self.mapping.get(rec)
        if known is None:
            self.mapping[rec] = cur
        elif known != cur:
            del self.mapping[rec]
            self.conflicts.add(rec)

    def _align(self, rec: object, cur: object, key: str | None, scope: str | None, depth: int) -> None:
        if depth > _MAX_DEPTH:
            return
        if isinstance(rec, dict) and isinstance(cur, dict):
            for k in sorted(rec.keys() & cur.keys()):
                self._align(rec[k], cur[k], k, _scope_of(k) or scope, depth + 1)
        elif isinstance(rec, list) and isinstance(cur, list):
            for a, b in _match_items(rec, cur):
                self._align(a, b, key, scope, depth + 1)
        elif key is not None and _is_id_key(key):
            a, b = _id_value(rec), _id_value(cur)
            if a is not None and b is not None:
                self._pair(a, b, scope)
            elif _opaque(rec) and _opaque(cur):
                self._pair_opaque(str(rec), str(cur))
        elif key is not None and _TOKEN_KEY.search(key):
            a, b = _token_value(rec), _token_value(cur)
            if a is not None and b is not None:
                self._pair(a, b, None)
        elif isinstance(rec, str) and isinstance(cur, str) and rec != cur and "://" in rec:
            for a, b in _link_ids(rec, cur):
                self._pair_opaque(a, b)

    def _pair_opaque(self, rec: str, cur: str) -> None:
        if rec == cur or rec in self.opaque_conflicts:
            return
        known = self.substitutions.get(rec)
        if known is None:
            self.substitutions[rec] = cur
        elif known != cur:
            del self.substitutions[rec]
            self.opaque_conflicts.add(rec)

    def _align_text(self, rec: str, cur: str, scope: str | None) -> None:
        by_label: dict[str, list[str]] = {}
        for label, value in _TEXT_ID.findall(cur):
            by_label.setdefault(label.strip().lower(), []).append(value)
        seen: dict[str, int] = {}
        for label, value in _TEXT_ID.findall(rec):
            label = label.strip().lower()
            i = seen.get(label, 0)
            seen[label] = i + 1
            live = by_label.get(label, [])
            if i < len(live):
                self._pair(value, live[i], _scope_of(label) or scope)

    def translate_arguments(self, arguments: str, tool: str | None = None) -> str:
        """A recorded call's arguments (JSON text) with its ids made live; as it was if nothing applies."""
        if not self.active:
            return arguments
        try:
            value = nesting.loads(arguments)
        except (TypeError, ValueError):  # not JSON text, or too deep to hold ids we would find
            return arguments
        named = {key: scope for (suffix, key), scope in _ARGUMENT_SCOPES.items() if tool and tool.endswith(suffix)}
        changed, out = self._rewrite(value, None, _tool_scope(tool), 0, named)
        return json.dumps(out, ensure_ascii=False) if changed else arguments

    def _live(self, raw: str, scope: str | None) -> str | None:
        known = self.scoped.get(scope) if scope is not None else None
        if known is not None and raw in known:
            return known[raw]
        return self.mapping.get(raw)

    def _rewrite(self, value: object, key: str | None, scope: str | None, depth: int,
                 named: dict[str, str] | None = None) -> tuple[bool, object]:
        """`named`: keys of this tool's arguments that hold ids their names do not say, and of which kind."""
        named = named or {}
        if depth > _MAX_DEPTH:
            return False, value
        if isinstance(value, dict):
            changed, rewritten = False, {}
            for k, v in value.items():
                c, rewritten[k] = self._rewrite(v, k, named.get(k) or _scope_of(k) or scope, depth + 1, named)
                changed |= c
            return changed, rewritten
        if isinstance(value, list):
            pairs = [self._rewrite(v, key, scope, depth + 1, named) for v in value]
            return any(c for c, _ in pairs), [v for _, v in pairs]
        if isinstance(value, str) and (self.substitutions or self.aliases):
            out = self._substitute(value)
            if out != value:
                return True, out
        if key is not None and (_is_id_key(key) or key in named):
            raw = _id_value(value)
            live = self._live(raw, scope) if raw is not None else None
            if live is not None and live != raw:
                return True, int(live) if isinstance(value, int) else live
        if key is not None and _TOKEN_KEY.search(key):
            raw = _token_value(value)
            if raw is not None and raw in self.mapping:
                return True, self.mapping[raw]
        return False, value


def _opaque(value: object) -> bool:
    return isinstance(value, str) and _OPAQUE_ID.fullmatch(value) is not None


def _link_ids(rec: str, live: str) -> list[tuple[str, str]]:
    """The opaque ids two links differ in, where they differ in nothing else: a form's `responderUri`
    (`…/forms/d/e/<published id>/viewform`) names an id no answer shows under an id key, and an agent copies it."""
    a, b = _LINK_PARTS.split(rec), _LINK_PARTS.split(live)
    if len(a) != len(b):
        return []
    pairs = []
    for x, y in zip(a, b):
        if x == y:
            continue
        if not (_opaque(x) and _opaque(y)):
            return []
        pairs.append((x, y))
    return pairs


def _aligned(rec: str, live: str, start: int, end: int) -> str | None:
    """The identifier `live` shows where `rec` shows rec[start:end]: found after the same text before it on its line
    (its n-th occurrence for the n-th), up to the same characters after it."""
    line_start = rec.rfind("\n", 0, start) + 1
    left = rec[max(line_start, start - _CONTEXT):start]
    star = max(left.rfind("*"), -1)  # another mask before it on the line is shown otherwise live
    left = left[star + 1:]
    if len(left.strip()) < 2:
        return None
    nth = sum(1 for m in re.finditer(re.escape(left), rec[:start]) if m.end() <= start) - 1
    places = [m.end() for m in re.finditer(re.escape(left), live)]
    if nth < 0 or nth >= len(places):
        return None
    at = places[nth]
    right = rec[end:end + 6].split("\n")[0]
    if right:
        stop = live.find(right, at)
        value = live[at:stop] if stop > at else None
    else:
        m = _IDENTIFIER.match(live, at)
        value = m[0] if m else None
    if value is None or "*" in value or not _IDENTIFIER.fullmatch(value):
        return None
    return value


def _keys(items: list, key: str) -> list | None:
    """Each item's value of `key`, where every item has one and no two share it."""
    values = []
    for item in items:
        v = item.get(key) if isinstance(item, dict) else None
        if not isinstance(v, (str, int)) or isinstance(v, bool):
            return None
        values.append(v)
    return values if len(set(values)) == len(values) else None


def _match_items(rec: list, cur: list) -> list[tuple[object, object]]:
    """Pairs of items that are the same object: by the first natural key that tells every item apart
    in both lists (a shuffled list's order is its own), else by position."""
    if rec and cur:
        for key in _NATURAL_KEYS:
            rk, ck = _keys(rec, key), _keys(cur, key)
            if rk is not None and ck is not None:
                index = dict(zip(ck, cur))
                return [(x, index[k]) for k, x in zip(rk, rec) if k in index]
    return list(zip(rec, cur))
