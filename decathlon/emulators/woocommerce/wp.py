"""WordPress' own REST API, `/wp/v2`: posts, pages, media, users, categories and tags.

Anonymous requests may read what is published, as on any WordPress site; writing needs the login
cookie with its nonce (see auth.py). Media is uploaded as WordPress takes it from scripts: the raw
file as the body with `Content-Disposition: attachment; filename="x.jpg"` (or a multipart `file`
field); the title is the file name without extension. Posts go to the trash unless `force=true`;
media cannot be trashed at all (501 without `force`), as upstream.
"""
from __future__ import annotations

import copy
import re
from typing import Any

from . import media, php
from .auth import can_edit_posts, can_manage
from .clock import parse_date, wp_date
from .errors import RestError
from .model import Post, Term
from .params import Schema
from .rest import CREATABLE, DELETABLE, EDITABLE, READABLE, Reply, Request, Router, auth_status
from .site import Site

_BLOCK_COMMENT = re.compile(r"<!--\s*/?wp:.*?-->\n?", re.DOTALL)
POST_LIST_ARGS: dict[str, Schema] = {
    "context": {"type": "string", "enum": ["view", "embed", "edit"], "default": "view"},
    "page": {"type": "integer", "default": 1, "minimum": 1, "sanitize": "absint"},
    "per_page": {"type": "integer", "default": 10, "minimum": 1, "maximum": 100, "sanitize": "absint"},
    "search": {"type": "string"},
    "after": {"type": "string"}, "before": {"type": "string"},
    "author": {"type": "array", "items": {"type": "integer"}, "default": [], "sanitize": "wp_parse_id_list", "validate": False},
    "exclude": {"type": "array", "items": {"type": "integer"}, "default": [], "sanitize": "wp_parse_id_list", "validate": False},
    "include": {"type": "array", "items": {"type": "integer"}, "default": [], "sanitize": "wp_parse_id_list", "validate": False},
    "offset": {"type": "integer", "sanitize": "absint"},
    "order": {"type": "string", "default": "desc", "enum": ["asc", "desc"]},
    "orderby": {"type": "string", "default": "date",
                "enum": ["author", "date", "id", "include", "modified", "parent", "relevance", "slug", "include_slugs", "title"]},
    "slug": {"type": "array", "items": {"type": "string"}, "sanitize": "wp_parse_slug_list"},
    "status": {"type": "array", "items": {"type": "string"}, "default": "publish"},
    "categories": {"type": "array", "items": {"type": "integer"}, "sanitize": "wp_parse_id_list", "validate": False},
    "tags": {"type": "array", "items": {"type": "integer"}, "sanitize": "wp_parse_id_list", "validate": False},
    "parent": {"type": "array", "items": {"type": "integer"}, "sanitize": "wp_parse_id_list", "validate": False},
    "sticky": {"type": "boolean"},
}
POST_ARGS: dict[str, Schema] = {
    "date": {"type": ["string", "null"]}, "date_gmt": {"type": ["string", "null"]}, "slug": {"type": "string"},
    "status": {"type": "string", "enum": ["publish", "future", "draft", "pending", "private"]},
    "password": {"type": "string"}, "title": {"type": ["object", "string"]}, "content": {"type": ["object", "string"]},
    "excerpt": {"type": ["object", "string"]}, "author": {"type": "integer"}, "featured_media": {"type": "integer"},
    "comment_status": {"type": "string", "enum": ["open", "closed"]},
    "ping_status": {"type": "string", "enum": ["open", "closed"]},
    "format": {"type": "string", "enum": ["standard", "aside", "chat", "gallery", "link", "image", "quote", "status",
                                          "video", "audio"]},
    "sticky": {"type": "boolean"}, "template": {"type": "string"},
    "categories": {"type": "array", "items": {"type": "integer"}}, "tags": {"type": "array", "items": {"type": "integer"}},
    "parent": {"type": "integer"}, "menu_order": {"type": "integer"}, "meta": {"type": "object"},
}


def render(text: str) -> str:
    """`the_content`: blocks rendered (their comments dropped), texturized, paragraphs added."""
    return php.wpautop(php.wptexturize(_BLOCK_COMMENT.sub("", text))).replace("<p></p>\n", "")


def auto_excerpt(post: Post) -> str:
    if post.excerpt:
        return php.wpautop(php.wptexturize(post.excerpt))
    words = php.strip_all_tags(_BLOCK_COMMENT.sub("", post.content)).split()
    if not words:
        return ""
    text = " ".join(words[:55]) + (" [&hellip;]" if len(words) > 55 else "")
    return f"<p>{text}</p>\n"


def post_link(site: Site, scheme: str, post: Post) -> str:
    home = site.home(scheme)
    if post.post_type == "attachment":
        return f"{home}/?attachment_id={post.id}"
    if post.status in ("publish", "private") and post.slug:
        if post.post_type == "page":
            return f"{home}/{post.slug}/"
        return f"{home}/{post.date.strftime('%Y/%m/%d')}/{post.slug}/"
    kind = "page_id" if post.post_type == "page" else "p"
    return f"{home}/?{kind}={post.id}"


def _links(request: Request, post: Post, base: str) -> dict[str, Any]:
    return {"self": [{"href": request.rest_url(f"/wp/v2/{base}/{post.id}"),
                      "targetHints": {"allow": ["GET", "POST", "PUT", "PATCH", "DELETE"]
                                      if can_edit_posts(request.user, request.site) else ["GET"]}}],
            "collection": [{"href": request.rest_url(f"/wp/v2/{base}")}],
            "about": [{"href": request.rest_url(f"/wp/v2/types/{post.post_type}")}],
            "author": [{"embeddable": True, "href": request.rest_url(f"/wp/v2/users/{post.author}")}],
            "replies": [{"embeddable": True, "href": request.rest_url(f"/wp/v2/comments?post={post.id}")}]}


def post_json(request: Request, post: Post, context: str | None = None) -> dict[str, Any]:
    site = request.site
    edit = (context or request.context) == "edit"
    base = {"post": "posts", "page": "pages", "attachment": "media"}[post.post_type]
    data: dict[str, Any] = {
        "id": post.id, "date": wp_date(post.date), "date_gmt": wp_date(post.date),
        "guid": {"rendered": f"{site.home('http')}/?{'page_id' if post.post_type == 'page' else 'p'}={post.id}"},
        "modified": wp_date(post.modified), "modified_gmt": wp_date(post.modified), "slug": post.slug,
        "status": post.status, "type": post.post_type, "link": post_link(site, request.scheme, post),
        "title": {"rendered": php.wptexturize(post.title)},
    }
    if edit:
        data["guid"]["raw"] = data["guid"]["rendered"]
        data["title"] = {"raw": post.title, "rendered": php.wptexturize(post.title)}
    if post.post_type != "attachment":
        data["content"] = {"rendered": render(post.content), "protected": bool(post.password)}
        data["excerpt"] = {"rendered": auto_excerpt(post), "protected": bool(post.password)}
        if edit:
            data["content"] = {"raw": post.content, **data["content"], "block_version": 1 if "<!-- wp:" in post.content else 0}
            data["excerpt"] = {"raw": post.excerpt, **data["excerpt"]}
    data["author"] = post.author
    if post.post_type != "attachment":
        data["featured_media"] = php.php_int(media.meta_value(post.meta, "_thumbnail_id", 0))
    else:
        data["featured_media"] = 0
    if post.post_type == "page":
        data["parent"] = post.parent
        data["menu_order"] = post.menu_order
    data["comment_status"] = post.comment_status
    data["ping_status"] = post.ping_status
    if post.post_type == "post":
        data["sticky"] = post.sticky
    data["template"] = post.template
    if post.post_type == "post":
        data["format"] = post.format
    data["meta"] = {"_acf_changed": False, "footnotes": ""} if post.post_type != "attachment" else {}
    if post.post_type == "post":
        data["categories"] = list(post.categories)
        data["tags"] = list(post.tags)
    data["class_list"] = [f"post-{post.id}", post.post_type, f"type-{post.post_type}", f"status-{post.status}"]
    if edit:
        data["permalink_template"] = f"{site.home(request.scheme)}/%postname%/" if post.post_type != "attachment" \
            else f"{site.home(request.scheme)}/?attachment_id={post.id}"
        data["generated_slug"] = post.slug or php.sanitize_title(post.title)
    if post.post_type == "attachment":
        data.update(attachment_fields(request, post, edit))
    data["_links"] = _links(request, post, base)
    return data


def attachment_fields(request: Request, post: Post, edit: bool) -> dict[str, Any]:
    site = request.site
    source = media.file_url(site, request.scheme, post)
    kind = post.mime_type.split("/", 1)[0]
    media_type = "image" if kind == "image" else ("file" if kind not in ("video", "audio") else kind)
    details: dict[str, Any] = {"filesize": post.filesize}
    if post.mime_type in media.IMAGE_TYPES:
        sizes = {size.name: {"file": size.file, "width": size.width, "height": size.height, "filesize": post.filesize,
                             "mime_type": post.mime_type, "source_url": media.file_url(site, request.scheme, post, size.file)}
                 for size in media.sub_sizes(post)}
        sizes["full"] = {"file": post.file.rsplit("/", 1)[-1], "width": post.width, "height": post.height,
                         "mime_type": post.mime_type, "source_url": source}
        details = {"width": post.width, "height": post.height, "file": post.file, "filesize": post.filesize,
                   "sizes": sizes, "image_meta": media.attachment_metadata(post)["image_meta"]}
    caption = media.meta_value(post.meta, "_caption", post.excerpt)
    out: dict[str, Any] = {
        "description": ({"rendered": render(post.content)} if not edit
                        else {"raw": post.content, "rendered": render(post.content)}),
        "caption": {"rendered": php.wpautop(caption)} if not edit else {"raw": caption, "rendered": php.wpautop(caption)},
        "alt_text": media.alt_text(post), "media_type": media_type, "mime_type": post.mime_type,
        "media_details": details, "post": post.parent or None, "source_url": source,
    }
    if edit:
        out["missing_image_sizes"] = []
    return out


# --- posts and pages -------------------------------------------------------------------------


class PostController:
    def __init__(self, post_type: str, base: str) -> None:
        self.post_type = post_type
        self.base = base

    def find(self, request: Request) -> Post:
        post = request.site.post(request.id_param(), self.post_type)
        if post is None:
            raise RestError("rest_post_invalid_id", "Invalid post ID.", 404)
        return post

    def _visible(self, request: Request, post: Post) -> bool:
        if post.status == "publish" or (self.post_type == "attachment" and post.status == "inherit"):
            return True
        return can_edit_posts(request.user, request.site)

    def list_items(self, request: Request) -> Reply:
        site, p = request.site, request.params
        if request.context == "edit" and not can_edit_posts(request.user, site):
            raise RestError("rest_forbidden_context", "Sorry, you are not allowed to edit posts in this post type.",
                            auth_status(request))
        statuses = [php.php_string(s) for s in php.wp_parse_list(p.get("status", "publish"))]
        if self.post_type == "attachment" and statuses == ["publish"]:
            statuses = ["inherit"]
        for status in statuses:
            if status not in ("publish", "inherit") and not can_edit_posts(request.user, site):
                raise RestError("rest_forbidden_status", "Status is forbidden.", auth_status(request))
        posts = [r for r in site.posts.values() if isinstance(r, Post) and r.post_type == self.post_type]
        if "any" in statuses:
            posts = [r for r in posts if r.status not in ("trash", "auto-draft")]
        else:
            posts = [r for r in posts if r.status in statuses]
        if p.get("include"):
            posts = [r for r in posts if r.id in p.get("include")]
        if p.get("exclude"):
            posts = [r for r in posts if r.id not in p.get("exclude")]
        if p.get("author"):
            posts = [r for r in posts if r.author in p.get("author")]
        if p.get("slug"):
            posts = [r for r in posts if r.slug in p.get("slug")]
        if p.get("categories"):
            posts = [r for r in posts if set(r.categories) & set(p.get("categories"))]
        if p.get("tags"):
            posts = [r for r in posts if set(r.tags) & set(p.get("tags"))]
        if p.get("parent"):
            posts = [r for r in posts if r.parent in p.get("parent")]
        if isinstance(p.get("sticky"), bool):
            posts = [r for r in posts if r.sticky == p.get("sticky")]
        if p.get("search"):
            words = php.php_string(p.get("search")).lower().split()
            posts = [r for r in posts if all(w in f"{r.title}\n{r.excerpt}\n{r.content}".lower() for w in words)]
        if self.post_type == "attachment":
            if p.get("media_type"):
                wanted = php.php_string(p.get("media_type"))
                posts = [r for r in posts if (r.mime_type.split("/")[0] if r.mime_type.split("/")[0] in
                                              ("image", "video", "audio", "text") else "application") == wanted]
            if p.get("mime_type"):
                posts = [r for r in posts if r.mime_type == p.get("mime_type")]
        for key, after in (("after", True), ("before", False)):
            moment = parse_date(p.get(key)) if p.get(key) else None
            if moment is not None:
                posts = [r for r in posts if (r.date > moment if after else r.date < moment)]
        orderby = p.get("orderby", "date")
        keys = {"date": lambda r: (r.date, r.id), "modified": lambda r: (r.modified, r.id), "id": lambda r: r.id,
                "title": lambda r: (r.title.lower(), r.id), "slug": lambda r: (r.slug, r.id),
                "author": lambda r: (r.author, r.id), "parent": lambda r: (r.parent, r.id)}
        if orderby == "include" and p.get("include"):
            position = {pid: i for i, pid in enumerate(p.get("include"))}
            posts.sort(key=lambda r: position.get(r.id, 0))
        else:
            posts.sort(key=keys.get(orderby, keys["date"]), reverse=p.get("order", "desc") == "desc")
        page, per_page = php.php_int(p.get("page", 1)), php.php_int(p.get("per_page", 10))
        total = len(posts)
        pages = -(-total // max(per_page, 1))
        if page > pages and total > 0:
            raise RestError("rest_post_invalid_page_number",
                            "The page number requested is larger than the number of pages available.", 400)
        from .rest import paginate
        chunk, headers = paginate(posts, request, page, per_page, f"/wp/v2/{self.base}")
        return Reply([post_json(request, r) for r in chunk], headers=headers)

    def get_item(self, request: Request) -> Reply:
        post = self.find(request)
        if not self._visible(request, post):
            raise RestError("rest_forbidden", "Sorry, you are not allowed to do that.", auth_status(request))
        return Reply(post_json(request, post))

    def _require(self, request: Request, code: str, message: str) -> None:
        if not can_edit_posts(request.user, request.site):
            raise RestError(code, message, auth_status(request))

    def create_item(self, request: Request) -> Reply:
        self._require(request, "rest_cannot_create", f"Sorry, you are not allowed to create {self.base} as this user.")
        if not php.php_empty(request.params.get("id")):
            raise RestError("rest_post_exists", "Cannot create existing post.", 400)
        site = request.site
        now = site.now()
        post = Post(0, self.post_type, now, now, status="draft", author=request.user.id if request.user else 1,
                    comment_status="open" if self.post_type == "post" else "closed",
                    ping_status="open" if self.post_type == "post" else "closed")
        self._apply(request, post, creating=True)
        post.id = site.next_id("post")
        self._finish(site, post)
        return Reply(post_json(request, post, "edit"), 201,
                     [("Location", request.rest_url(f"/wp/v2/{self.base}/{post.id}"))])

    def update_item(self, request: Request) -> Reply:
        existing = self.find(request)
        self._require(request, "rest_cannot_edit", "Sorry, you are not allowed to edit this post.")
        post = copy.deepcopy(existing)
        self._apply(request, post, creating=False)
        self._finish(request.site, post)
        return Reply(post_json(request, post, "edit"))

    def _apply(self, request: Request, post: Post, creating: bool) -> None:
        p, site = request.params, request.site
        for key in ("title", "content", "excerpt"):
            value = p.values.get(key)
            if isinstance(value, dict):
                value = value.get("raw")
            if value is not None:
                setattr(post, key, php.kses_post(value))
        if p.isset("status"):
            post.status = p.get("status")
        if p.isset("slug"):
            post.slug = php.sanitize_title(p.get("slug"))
        if p.isset("password"):
            post.password = php.php_string(p.get("password"))
        if p.isset("author"):
            author = site.user(php.php_int(p.get("author")))
            if author is None:
                raise RestError("rest_invalid_author", "Invalid author ID.", 400)
            post.author = author.id
        for key in ("comment_status", "ping_status", "format", "template"):
            if p.isset(key):
                setattr(post, key, php.php_string(p.get(key)))
        if p.isset("sticky"):
            post.sticky = php.rest_sanitize_boolean(p.get("sticky"))
        if p.isset("parent"):
            post.parent = php.absint(p.get("parent"))
        if p.isset("menu_order"):
            post.menu_order = php.php_int(p.get("menu_order"))
        if p.isset("date") or p.isset("date_gmt"):
            moment = parse_date(p.get("date") or p.get("date_gmt"))
            if moment is None:
                raise RestError("rest_invalid_date", "Invalid date.", 400)
            post.date = moment
        if self.post_type == "post":
            for key in ("categories", "tags"):
                if p.isset(key):
                    ids = php.wp_parse_id_list(p.get(key))
                    taxonomy = "category" if key == "categories" else "post_tag"
                    for term_id in ids:
                        if site.term(term_id, taxonomy) is None:
                            raise RestError("rest_invalid_term_id", "Invalid term ID.", 400)
                    setattr(post, key, ids)
            if creating and not post.categories:
                post.categories = [1]
        if p.isset("featured_media"):
            from .catalog import update_meta
            media_id = php.absint(p.get("featured_media"))
            if media_id and site.post(media_id, "attachment") is None:
                raise RestError("rest_invalid_featured_media", "Invalid featured media ID.", 400)
            update_meta(site, post.meta, "_thumbnail_id", media_id or None)

    def _finish(self, site: Site, post: Post) -> None:
        post.modified = site.now()
        if not post.slug and post.status not in ("draft", "pending", "auto-draft") and post.title:
            post.slug = php.sanitize_title(post.title, str(post.id))
        media.unique_slug(site, post)
        site.posts[post.id] = post

    def delete_item(self, request: Request) -> Reply:
        post = self.find(request)
        self._require(request, "rest_cannot_delete", "Sorry, you are not allowed to delete this post.")
        site = request.site
        force = php.php_bool(request.params.get("force"))
        if self.post_type == "attachment" and not force:
            raise RestError("rest_trash_not_supported",
                            "The post does not support trashing. Set 'force=true' to delete.", 501)
        if force:
            previous = post_json(request, post, "edit")
            if self.post_type == "attachment":
                media.delete_attachment(site, post)
            else:
                site.posts.pop(post.id, None)
            return Reply({"deleted": True, "previous": previous})
        if post.status == "trash":
            raise RestError("rest_already_trashed", "The post has already been deleted.", 410)
        post.status = "trash"
        if post.slug and not post.slug.endswith("__trashed"):
            post.slug += "__trashed"
        post.modified = site.now()
        return Reply(post_json(request, post, "edit"))

    def upload(self, request: Request) -> Reply:
        site = request.site
        if not can_edit_posts(request.user, site):
            raise RestError("rest_cannot_create", "Sorry, you are not allowed to upload media on this site.", 400)
        data, filename, declared = _upload_payload(request)
        mime = media.mime_for(filename, declared)
        if mime is None:
            raise RestError("rest_upload_sideload_error", "Sorry, you are not allowed to upload this file type.", 500)
        post = media.create_attachment(site, filename, data, mime, request.user.id if request.user else 1,
                                       php.absint(request.params.get("post")))
        p = request.params
        for key in ("title", "caption", "description"):
            value = p.values.get(key)
            if isinstance(value, dict):
                value = value.get("raw")
            if value is not None:
                if key == "title":
                    post.title = php.php_string(value)
                elif key == "description":
                    post.content = php.php_string(value)
                else:
                    post.excerpt = php.php_string(value)
        if p.isset("alt_text"):
            from .catalog import update_meta
            update_meta(site, post.meta, "_wp_attachment_image_alt", php.sanitize_text_field(p.get("alt_text")))
        return Reply(post_json(request, post, "edit"), 201, [("Location", request.rest_url(f"/wp/v2/media/{post.id}"))])

    def update_media(self, request: Request) -> Reply:
        post = self.find(request)
        self._require(request, "rest_cannot_edit", "Sorry, you are not allowed to edit this post.")
        p = request.params
        from .catalog import update_meta
        if p.isset("alt_text"):
            update_meta(request.site, post.meta, "_wp_attachment_image_alt", php.sanitize_text_field(p.get("alt_text")))
        for key, attr in (("title", "title"), ("caption", "excerpt"), ("description", "content")):
            value = p.values.get(key)
            if isinstance(value, dict):
                value = value.get("raw")
            if value is not None:
                setattr(post, attr, php.php_string(value))
        if p.isset("post"):
            post.parent = php.absint(p.get("post"))
        post.modified = request.site.now()
        return Reply(post_json(request, post, "edit"))

    def register(self, router: Router) -> None:
        base = f"/wp/v2/{self.base}"
        item = base + r"/(?P<id>[\d]+)"
        list_args = dict(POST_LIST_ARGS)
        if self.post_type == "attachment":
            list_args["status"] = {"type": "array", "items": {"type": "string"}, "default": "inherit"}
            list_args["media_type"] = {"type": "string", "enum": ["image", "video", "text", "application", "audio"]}
            list_args["mime_type"] = {"type": "string"}
        router.add(base, READABLE, self.list_items, list_args)
        if self.post_type == "attachment":
            router.add(base, CREATABLE, self.upload, {})
            router.add(item, EDITABLE, self.update_media, {"alt_text": {"type": "string"}, "post": {"type": "integer"}})
        else:
            router.add(base, CREATABLE, self.create_item, POST_ARGS)
            router.add(item, EDITABLE, self.update_item, POST_ARGS)
        router.add(item, READABLE, self.get_item, {"context": {"type": "string", "enum": ["view", "embed", "edit"],
                                                               "default": "view"}})
        router.add(item, DELETABLE, self.delete_item, {"force": {"type": "boolean", "default": False}})


def _upload_payload(request: Request) -> tuple[bytes, str, str | None]:
    """The file of a media upload: a raw body named by Content-Disposition, or a multipart `file`."""
    files = getattr(request, "files", None) or {}
    if "file" in files:
        filename, declared, data = files["file"]
        if not data:
            raise RestError("rest_upload_no_data", "No data supplied.", 400)
        return data, filename, declared
    if not request.body:
        raise RestError("rest_upload_no_data", "No data supplied.", 400)
    disposition = request.headers.get("content-disposition", "")
    if not disposition:
        raise RestError("rest_upload_no_content_disposition", "No Content-Disposition supplied.", 400)
    match = re.search(r"filename\*?=(?:UTF-8'')?\"?([^\";]+)\"?", disposition, re.IGNORECASE)
    if not match or not match.group(1).strip():
        raise RestError("rest_upload_invalid_disposition",
                        "Invalid Content-Disposition supplied. Content-Disposition needs to be formatted as "
                        "`attachment; filename=\"image.png\"` or similar.",
                        400)
    filename = match.group(1).strip().rsplit("/", 1)[-1]
    declared = request.content_type.split(";", 1)[0].strip() or None
    return request.body, filename, declared


# --- users -----------------------------------------------------------------------------------


def user_json(request: Request, user: Any, edit: bool = False) -> dict[str, Any]:
    from .customers import avatar_url
    site = request.site
    data: dict[str, Any] = {"id": user.id, "name": user.display_name, "url": user.url, "description": user.description,
                            "link": f"{site.home(request.scheme)}/author/{user.nicename}/", "slug": user.nicename,
                            "avatar_urls": {size: avatar_url(user.email).replace("s=96", f"s={size}")
                                            for size in ("24", "48", "96")}}
    if edit:
        data.update({"username": user.login, "first_name": user.first_name, "last_name": user.last_name,
                     "email": user.email, "locale": "en_US", "nickname": user.login,
                     "registered_date": user.registered.strftime("%Y-%m-%dT%H:%M:%S+00:00"),
                     "roles": [user.roles.get(site.blog_id, "")] if user.roles.get(site.blog_id) else [],
                     "capabilities": {}, "extra_capabilities": {}})
    data["meta"] = []
    data["_links"] = {"self": [{"href": request.rest_url(f"/wp/v2/users/{user.id}")}],
                      "collection": [{"href": request.rest_url("/wp/v2/users")}]}
    return data


def users_me(request: Request) -> Reply:
    if request.user is None:
        raise RestError("rest_not_logged_in", "You are not currently logged in.", 401)
    return Reply(user_json(request, request.user, request.context == "edit"))


def list_users(request: Request) -> Reply:
    site, p = request.site, request.params
    if can_manage(request.user, site):
        users = site.members()
    else:
        authors = {r.author for r in site.posts.values() if isinstance(r, Post) and r.status == "publish"
                   and r.post_type in ("post", "page")}
        users = [u for u in site.members() if u.id in authors]
    users.sort(key=lambda u: (u.display_name.lower(), u.id), reverse=p.get("order") == "desc")
    from .rest import paginate
    chunk, headers = paginate(users, request, php.php_int(p.get("page", 1)), php.php_int(p.get("per_page", 10)),
                              "/wp/v2/users")
    return Reply([user_json(request, u, request.context == "edit" and can_manage(request.user, site)) for u in chunk],
                 headers=headers)


def get_user(request: Request) -> Reply:
    user = request.site.user(request.id_param())
    if user is None or request.site.blog_id not in user.roles:
        raise RestError("rest_user_invalid_id", "Invalid user ID.", 404)
    return Reply(user_json(request, user, request.context == "edit" and can_manage(request.user, request.site)))


# --- post categories and tags ----------------------------------------------------------------


def wp_term_json(request: Request, term: Term, base: str) -> dict[str, Any]:
    site = request.site
    count = sum(1 for r in site.posts.values() if isinstance(r, Post) and r.status == "publish"
                and term.id in (r.categories if term.taxonomy == "category" else r.tags))
    prefix = "category" if term.taxonomy == "category" else "tag"
    data = {"id": term.id, "count": count, "description": term.description,
            "link": f"{site.home(request.scheme)}/{prefix}/{term.slug}/", "name": term.name, "slug": term.slug,
            "taxonomy": term.taxonomy}
    if term.taxonomy == "category":
        data["parent"] = term.parent
    data["meta"] = []
    data["_links"] = {"self": [{"href": request.rest_url(f"/wp/v2/{base}/{term.id}")}],
                      "collection": [{"href": request.rest_url(f"/wp/v2/{base}")}]}
    return data


def term_routes(router: Router, base: str, taxonomy: str) -> None:
    def list_terms(request: Request) -> Reply:
        p = request.params
        terms = sorted(request.site.terms_of(taxonomy), key=lambda t: (t.name.lower(), t.id),
                       reverse=p.get("order") == "desc")
        if p.get("search"):
            needle = php.php_string(p.get("search")).lower()
            terms = [t for t in terms if needle in t.name.lower() or needle in t.slug]
        from .rest import paginate
        chunk, headers = paginate(terms, request, php.php_int(p.get("page", 1)), php.php_int(p.get("per_page", 10)),
                                  f"/wp/v2/{base}")
        return Reply([wp_term_json(request, t, base) for t in chunk], headers=headers)

    def get_term(request: Request) -> Reply:
        term = request.site.term(request.id_param(), taxonomy)
        if term is None:
            raise RestError("rest_term_invalid", "Term does not exist.", 404)
        return Reply(wp_term_json(request, term, base))

    def create_term(request: Request) -> Reply:
        if not can_edit_posts(request.user, request.site):
            raise RestError("rest_cannot_create", "Sorry, you are not allowed to create terms in this taxonomy.",
                            auth_status(request))
        from .terms import insert_term
        p = request.params
        term = insert_term(request.site, taxonomy, php.php_string(p.get("name", "")), php.php_string(p.get("slug", "")),
                           php.php_int(p.get("parent", 0)), php.php_string(p.get("description", "")))
        return Reply(wp_term_json(request, term, base), 201)

    router.add(f"/wp/v2/{base}", READABLE, list_terms,
               {"page": {"type": "integer", "default": 1, "minimum": 1}, "per_page": {"type": "integer", "default": 10,
                                                                                       "minimum": 1, "maximum": 100},
                "order": {"type": "string", "default": "asc", "enum": ["asc", "desc"]}, "search": {"type": "string"}})
    router.add(f"/wp/v2/{base}", CREATABLE, create_term, {"name": {"type": "string", "required": True}})
    router.add(f"/wp/v2/{base}" + r"/(?P<id>[\d]+)", READABLE, get_term, {})


def register(router: Router) -> None:
    PostController("post", "posts").register(router)
    PostController("page", "pages").register(router)
    PostController("attachment", "media").register(router)
    router.add("/wp/v2/users/me", READABLE, users_me, {"context": {"type": "string", "default": "view"}})
    router.add("/wp/v2/users", READABLE, list_users,
               {"context": {"type": "string", "enum": ["view", "embed", "edit"], "default": "view"},
                "page": {"type": "integer", "default": 1, "minimum": 1},
                "per_page": {"type": "integer", "default": 10, "minimum": 1, "maximum": 100},
                "order": {"type": "string", "default": "asc", "enum": ["asc", "desc"]}})
    router.add(r"/wp/v2/users/(?P<id>[\d]+)", READABLE, get_user, {"context": {"type": "string", "default": "view"}})
    term_routes(router, "categories", "category")
    term_routes(router, "tags", "post_tag")
