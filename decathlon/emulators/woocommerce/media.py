"""Attachments: the uploaded file, its pixel size, the sub-sizes WordPress would generate, its URLs.

Files live in memory under `wp-content/uploads/[sites/<blog>/]YYYY/MM/name.ext`. The sub-sizes are
computed, not rendered: WordPress generates them in a fixed order (medium, large, thumbnail,
medium_large, 1536x1536, 2048x2048, then WooCommerce's woocommerce_thumbnail, woocommerce_single,
woocommerce_gallery_thumbnail) and only when the image is larger than the size, and `srcset` lists
the full image then each new width with the same aspect ratio: a 400x400 JPEG gives
`... 400w, ...-300x300.jpg 300w, ...-150x150.jpg 150w, ...-100x100.jpg 100w`, as recorded runs show.
"""
from __future__ import annotations

import mimetypes
import re
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .clock import wp_date
from .errors import WcException
from .model import Meta, Post
from .php import sanitize_title
from .site import Site

if TYPE_CHECKING:
    from .rest import Request

# name, width, height, crop (WordPress core sizes first, in generation priority, then WooCommerce's).
SUB_SIZES = (("medium", 300, 300, False), ("large", 1024, 1024, False), ("thumbnail", 150, 150, True),
             ("medium_large", 768, 0, False), ("1536x1536", 1536, 1536, False), ("2048x2048", 2048, 2048, False),
             ("woocommerce_thumbnail", 300, 300, True), ("woocommerce_single", 600, 0, False),
             ("woocommerce_gallery_thumbnail", 100, 100, True))
IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
ALLOWED_TYPES = {"jpg": "image/jpeg", "jpeg": "image/jpeg", "jpe": "image/jpeg", "png": "image/png",
                 "gif": "image/gif", "webp": "image/webp", "pdf": "application/pdf", "txt": "text/plain",
                 "csv": "text/csv", "mp3": "audio/mpeg", "mp4": "video/mp4", "zip": "application/zip",
                 "doc": "application/msword", "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                 "xls": "application/vnd.ms-excel", "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                 "svg": "image/svg+xml", "json": "application/json"}


@dataclass(frozen=True)
class SubSize:
    name: str
    width: int
    height: int
    file: str


def image_dimensions(data: bytes) -> tuple[int, int, str] | None:
    """(width, height, mime) of a PNG, GIF, JPEG or WebP, from its header; None if it is not one."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        width, height = struct.unpack(">II", data[16:24])
        return width, height, "image/png"
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        width, height = struct.unpack("<HH", data[6:10])
        return width, height, "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP" and len(data) >= 30:
        chunk = data[12:16]
        if chunk == b"VP8 ":
            width, height = struct.unpack("<HH", data[26:30])
            return width & 0x3FFF, height & 0x3FFF, "image/webp"
        if chunk == b"VP8L":
            bits = int.from_bytes(data[21:25], "little")
            return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1, "image/webp"
        if chunk == b"VP8X":
            return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1, "image/webp"
    if data[:2] == b"\xff\xd8":
        return _jpeg_dimensions(data)
    return None


def _jpeg_dimensions(data: bytes) -> tuple[int, int, str] | None:
    index = 2
    while index + 9 < len(data):
        if data[index] != 0xFF:
            index += 1
            continue
        marker = data[index + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            index += 2
            continue
        length = struct.unpack(">H", data[index + 2:index + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[index + 5:index + 9])
            return width, height, "image/jpeg"
        index += 2 + length
    return None


def _fit(width: int, height: int, max_w: int, max_h: int, crop: bool) -> tuple[int, int] | None:
    """`image_resize_dimensions`: the new size, or None when no resize would happen."""
    if width <= 0 or height <= 0:
        return None
    if crop:
        new_w, new_h = min(width, max_w), min(height, max_h)
    else:
        ratios = [1.0]
        if max_w:
            ratios.append(max_w / width)
        if max_h:
            ratios.append(max_h / height)
        ratio = min(ratios)
        new_w, new_h = max(1, round(width * ratio)), max(1, round(height * ratio))
    if new_w >= width and new_h >= height:
        return None
    return new_w, new_h


def sub_sizes(post: Post) -> list[SubSize]:
    if post.mime_type not in IMAGE_TYPES or not post.width:
        return []
    stem, dot, ext = post.file.rpartition("/")[2].rpartition(".")
    out = []
    for name, max_w, max_h, crop in SUB_SIZES:
        fitted = _fit(post.width, post.height, max_w, max_h, crop)
        if fitted is not None:
            out.append(SubSize(name, fitted[0], fitted[1], f"{stem}-{fitted[0]}x{fitted[1]}.{ext}"))
    return out


def file_url(site: Site, scheme: str, post: Post, name: str | None = None) -> str:
    folder = post.file.rpartition("/")[0]
    relative = f"{folder}/{name}" if name else post.file
    return f"{site.home(scheme)}/wp-content/uploads/{site.upload_dir()}{relative}"


def srcset(site: Site, scheme: str, post: Post) -> str:
    if post.mime_type not in IMAGE_TYPES or not post.width:
        return ""
    entries = [f"{file_url(site, scheme, post)} {post.width}w"]
    widths = {post.width}
    for size in sub_sizes(post):
        same_ratio = abs(size.width / post.width * post.height - size.height) <= 1 if post.width else False
        if size.width in widths or not same_ratio or size.width > 2048:
            continue
        widths.add(size.width)
        entries.append(f"{file_url(site, scheme, post, size.file)} {size.width}w")
    return ", ".join(entries) if len(entries) > 1 else ""


def sizes_attr(post: Post) -> str:
    return f"(max-width: {post.width}px) 100vw, {post.width}px" if post.width else ""


def size_url(site: Site, scheme: str, post: Post, name: str) -> str:
    for size in sub_sizes(post):
        if size.name == name:
            return file_url(site, scheme, post, size.file)
    return file_url(site, scheme, post)


def alt_text(post: Post) -> str:
    for entry in post.meta:
        if entry.key == "_wp_attachment_image_alt":
            return str(entry.value)
    return ""


def is_image(site: Site, attachment_id: int) -> bool:
    post = site.post(attachment_id, "attachment")
    return post is not None and post.mime_type in IMAGE_TYPES


def wc_image(site: Site, scheme: str, post: Post, full: bool = True) -> dict[str, Any]:
    """A product image as the WC v3 products controller writes it (variations omit the srcset trio)."""
    image: dict[str, Any] = {
        "id": post.id,
        "date_created": wp_date(post.date),
        "date_created_gmt": wp_date(post.date),
        "date_modified": wp_date(post.modified),
        "date_modified_gmt": wp_date(post.modified),
        "src": file_url(site, scheme, post),
        "name": post.title,
        "alt": alt_text(post),
    }
    if full:
        image["srcset"] = srcset(site, scheme, post)
        image["sizes"] = sizes_attr(post)
        image["thumbnail"] = size_url(site, scheme, post, "woocommerce_thumbnail")
    return image


def mime_for(filename: str, declared: str | None) -> str | None:
    """The type WordPress allows for this name (by extension), or None when the type is not allowed."""
    ext = filename.rpartition(".")[2].lower() if "." in filename else ""
    if ext in ALLOWED_TYPES:
        return ALLOWED_TYPES[ext]
    guessed = declared or mimetypes.guess_type(filename)[0]
    return guessed if guessed in ALLOWED_TYPES.values() else None


def create_attachment(site: Site, filename: str, data: bytes, mime: str, author: int, parent: int = 0,
                      title: str | None = None) -> Post:
    now = site.now()
    folder = now.strftime("%Y/%m")
    stem, dot, ext = filename.rpartition(".")
    if not dot:
        stem, ext = filename, ""
    safe_stem = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-") or "file"
    ext = ext.lower()
    name = f"{safe_stem}.{ext}" if ext else safe_stem
    counter = 1
    while f"{site.upload_dir()}{folder}/{name}" in site.uploads:
        name = f"{safe_stem}-{counter}.{ext}" if ext else f"{safe_stem}-{counter}"
        counter += 1
    path = f"{folder}/{name}"
    site.uploads[f"{site.upload_dir()}{path}"] = data
    dimensions = image_dimensions(data) if mime in IMAGE_TYPES else None
    post = Post(site.next_id("post"), "attachment", now, now, title=title if title is not None else safe_stem,
                status="inherit", slug=sanitize_title(safe_stem), author=author, parent=parent, mime_type=mime,
                comment_status="open", ping_status="closed", file=path, filesize=len(data))
    if dimensions is not None:
        post.width, post.height = dimensions[0], dimensions[1]
    site.add_meta(post.meta, "_wp_attached_file", path)
    site.add_meta(post.meta, "_wp_attachment_metadata", attachment_metadata(post))
    unique_slug(site, post)
    site.posts[post.id] = post
    for size in sub_sizes(post):
        site.uploads.setdefault(f"{site.upload_dir()}{folder}/{size.file}", data)
    return post


def attachment_metadata(post: Post) -> dict[str, Any]:
    if post.mime_type not in IMAGE_TYPES:
        return {"filesize": post.filesize}
    return {
        "width": post.width, "height": post.height, "file": post.file, "filesize": post.filesize,
        "sizes": {size.name: {"file": size.file, "width": size.width, "height": size.height,
                              "mime-type": post.mime_type, "filesize": post.filesize} for size in sub_sizes(post)},
        "image_meta": {"aperture": "0", "credit": "", "camera": "", "caption": "", "created_timestamp": "0",
                       "copyright": "", "focal_length": "0", "iso": "0", "shutter_speed": "0", "title": "",
                       "orientation": "0", "keywords": []},
    }


def unique_slug(site: Site, post: Post) -> None:
    """`wp_unique_post_slug` for attachments and other flat post types: -2, -3 ... on clashes."""
    if not post.slug:
        return
    base = post.slug
    taken = {other.slug for other in site.posts.values()
             if isinstance(other, Post) and other.id != post.id and other.slug and
             (other.post_type == post.post_type or post.post_type == "attachment" or other.post_type == "attachment")}
    suffix = 2
    while post.slug in taken:
        post.slug = f"{base}-{suffix}"
        suffix += 1


def delete_attachment(site: Site, post: Post) -> None:
    site.posts.pop(post.id, None)
    folder = post.file.rpartition("/")[0]
    site.uploads.pop(f"{site.upload_dir()}{post.file}", None)
    for size in sub_sizes(post):
        site.uploads.pop(f"{site.upload_dir()}{folder}/{size.file}", None)


def meta_value(entries: list[Meta], key: str, default: Any = "") -> Any:
    for entry in entries:
        if entry.key == key:
            return entry.value
    return default


def sideload(request: Request, src: str, parent: int, error_code: str) -> int:
    """`wc_rest_upload_image_from_url`: only files already in this network's uploads can be fetched here."""
    site = request.site
    marker = "/wp-content/uploads/"
    if marker in src and site.network.host in src:
        relative = src.split(marker, 1)[1].split("?", 1)[0]
        for candidate_site in [site, site.network.root()]:
            data = candidate_site.uploads.get(relative)
            if data is not None:
                filename = relative.rsplit("/", 1)[-1]
                mime = mime_for(filename, None)
                if mime is None or mime not in IMAGE_TYPES:
                    break
                post = create_attachment(site, filename, data, mime, request.user.id if request.user else 1, parent)
                return post.id
    host = src.split("://", 1)[-1].split("/", 1)[0] or src
    raise WcException(error_code, f"Error getting remote image {src}. Error: cURL error 6: Could not resolve host: {host}", 400)
