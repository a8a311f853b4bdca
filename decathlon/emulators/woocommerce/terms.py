"""Product taxonomies over REST: categories, tags, brands, shipping classes, attributes and their terms.

Terms share the site's one term-ID sequence (the first new one is 16 on a fresh store, after the
"Uncategorized" product category, 15). Lists are name-ordered and ascending by default; a term
cannot be trashed (501 "Resource does not support trashing." without `force`); the default product
category cannot be deleted at all (500 "The resource cannot be deleted."); a second term with the
same name under the same parent is refused with WordPress' `term_exists` and the existing id.
Attributes (`/products/attributes`) are WooCommerce's attribute taxonomies, listed without paging.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import media, php
from .clock import wp_date
from .errors import RestError, term_invalid
from .model import AttributeTaxonomy, Product, Term
from .params import Schema
from .rest import CREATABLE, DELETABLE, EDITABLE, READABLE, Reply, Request, Router, paginate, self_links
from .site import Site
from .wcbase import batch, context_param, require

TERM_LIST_ARGS: dict[str, Schema] = {
    "context": {"type": "string", "enum": ["view", "edit"], "default": "view"},
    "page": {"type": "integer", "default": 1, "minimum": 1, "sanitize": "absint"},
    "per_page": {"type": "integer", "default": 10, "minimum": 1, "maximum": 100, "sanitize": "absint"},
    "search": {"type": "string", "sanitize": "sanitize_text_field"},
    "exclude": {"type": "array", "items": {"type": "integer"}, "default": [], "sanitize": "wp_parse_id_list", "validate": False},
    "include": {"type": "array", "items": {"type": "integer"}, "default": [], "sanitize": "wp_parse_id_list", "validate": False},
    "offset": {"type": "integer", "sanitize": "absint"},
    "order": {"type": "string", "default": "asc", "enum": ["asc", "desc"]},
    "orderby": {"type": "string", "default": "name",
                "enum": ["id", "include", "name", "slug", "term_group", "description", "count"]},
    "hide_empty": {"type": "boolean", "default": False},
    "parent": {"type": "integer"},
    "product": {"type": "integer"},
    "slug": {"type": "string"},
}
_IMAGE = {"type": ["null", "object"], "properties": {"id": {"type": "integer"}, "src": {"type": "string"},
                                                     "name": {"type": "string"}, "alt": {"type": "string"}}}


@dataclass(frozen=True)
class Taxonomy:
    """A REST base and the WordPress taxonomy behind it."""

    rest_base: str  # "products/categories"
    name: str  # "product_cat"
    hierarchical: bool
    kind: str  # "category", "tag", "attribute_term", "shipping_class", "brand"


CATEGORIES = Taxonomy("products/categories", "product_cat", True, "category")
TAGS = Taxonomy("products/tags", "product_tag", False, "tag")
BRANDS = Taxonomy("products/brands", "product_brand", True, "category")
SHIPPING_CLASSES = Taxonomy("products/shipping_classes", "product_shipping_class", False, "shipping_class")


def term_schema(taxonomy: Taxonomy, creating: bool) -> dict[str, Schema]:
    args: dict[str, Schema] = {"name": {"type": "string", "required": creating}, "slug": {"type": "string"},
                               "description": {"type": "string"}}
    if taxonomy.hierarchical:
        args["parent"] = {"type": "integer"}
    if taxonomy.kind == "category":
        args["display"] = {"type": "string", "enum": ["default", "products", "subcategories", "both"]}
        if creating:
            args["display"]["default"] = "default"
        args["image"] = _IMAGE
        args["menu_order"] = {"type": "integer"}
    if taxonomy.kind == "attribute_term":
        args["menu_order"] = {"type": "integer"}
    return args


def term_count(site: Site, term: Term) -> int:
    count = 0
    for record in site.posts.values():
        if not isinstance(record, Product) or record.type == "variation" or record.status != "publish":
            continue
        if term.taxonomy == "product_cat":
            count += term.id in record.category_ids
        elif term.taxonomy == "product_tag":
            count += term.id in record.tag_ids
        elif term.taxonomy == "product_brand":
            count += term.id in record.brand_ids
        elif term.taxonomy == "product_shipping_class":
            count += term.id == record.shipping_class_id
        else:
            count += any(a.id and term.id in [php.php_int(o) for o in a.options] for a in record.attributes
                         if (site.attributes.get(a.id) and site.attributes[a.id].taxonomy == term.taxonomy))
    return count


def unique_term_slug(site: Site, taxonomy: str, slug: str, exclude: int = 0) -> str:
    taken = {term.slug for term in site.terms_of(taxonomy) if term.id != exclude}
    if slug not in taken:
        return slug
    suffix = 2
    while f"{slug}-{suffix}" in taken:
        suffix += 1
    return f"{slug}-{suffix}"


def insert_term(site: Site, taxonomy: str, name: str, slug: str = "", parent: int = 0, description: str = "") -> Term:
    """`wp_insert_term`."""
    name = php.sanitize_text_field(name)
    if name == "":
        raise RestError("empty_term_name", "A name is required for this term.", 400)
    for term in site.terms_of(taxonomy):
        if term.name.lower() == name.lower() and term.parent == parent:
            hierarchical = taxonomy in ("product_cat", "product_brand", "category")
            message = ("A term with the name provided already exists with this parent." if hierarchical
                       else "A term with the name provided already exists in this taxonomy.")
            raise RestError("term_exists", message, 400, resource_id=term.id)
    wanted = php.sanitize_title(slug or name) or php.sanitize_title(name)
    if slug and any(term.slug == wanted for term in site.terms_of(taxonomy)):
        raise RestError("duplicate_term_slug", f"The slug &#8220;{wanted}&#8221; is already in use by another term.", 400)
    term = Term(site.next_id("term"), taxonomy, name, unique_term_slug(site, taxonomy, wanted or str(site._next["term"])),
                description=php.kses_post(description), parent=parent)
    site.terms[term.id] = term
    return term


def image_json(site: Site, request: Request, image_id: int) -> dict[str, Any] | None:
    post = site.post(image_id, "attachment") if image_id else None
    if post is None:
        return None
    return {"id": post.id, "date_created": wp_date(post.date), "date_created_gmt": wp_date(post.date),
            "date_modified": wp_date(post.modified), "date_modified_gmt": wp_date(post.modified),
            "src": media.file_url(site, request.scheme, post), "name": post.title, "alt": media.alt_text(post)}


def term_json(request: Request, taxonomy: Taxonomy, term: Term, base: str) -> dict[str, Any]:
    site = request.site
    data: dict[str, Any] = {"id": term.id, "name": term.name, "slug": term.slug}
    if taxonomy.hierarchical:
        data["parent"] = term.parent
    data["description"] = term.description
    if taxonomy.kind == "category":
        data["display"] = term.display
        data["image"] = image_json(site, request, term.image_id)
        data["menu_order"] = term.menu_order
    if taxonomy.kind == "attribute_term":
        data["menu_order"] = term.menu_order
    data["count"] = term_count(site, term)
    extra = {"up": [{"href": request.rest_url(f"{base}/{term.parent}")}]} if taxonomy.hierarchical and term.parent else None
    data["_links"] = self_links(request, f"{base}/{term.id}", base, extra=extra)
    return data


class TermController:
    """One taxonomy's routes; attribute terms resolve their taxonomy from the URL's attribute id."""

    def __init__(self, taxonomy: Taxonomy | None) -> None:
        self.fixed = taxonomy

    def taxonomy(self, request: Request) -> Taxonomy:
        if self.fixed is not None:
            return self.fixed
        attribute = request.site.attributes.get(php.php_int(request.params.get("attribute_id")))
        if attribute is None:
            raise RestError("woocommerce_rest_taxonomy_invalid", "Taxonomy does not exist.", 404)
        return Taxonomy(f"products/attributes/{attribute.id}/terms", attribute.taxonomy, False, "attribute_term")

    def base(self, taxonomy: Taxonomy) -> str:
        return f"/wc/v3/{taxonomy.rest_base}"

    def permission(self, action: str):
        check = require(action)

        def permission(request: Request) -> None:
            taxonomy = self.taxonomy(request)
            if request.params.isset("id") and action in ("read", "edit", "delete"):
                if request.site.term(request.id_param(), taxonomy.name) is None:
                    raise term_invalid()
            check(request)

        return permission

    def find(self, request: Request) -> tuple[Taxonomy, Term]:
        taxonomy = self.taxonomy(request)
        term = request.site.term(request.id_param(), taxonomy.name)
        if term is None:
            raise term_invalid()
        return taxonomy, term

    def list_items(self, request: Request) -> Reply:
        taxonomy = self.taxonomy(request)
        site, p = request.site, request.params
        terms = site.terms_of(taxonomy.name)
        if p.get("include"):
            terms = [t for t in terms if t.id in p.get("include")]
        if p.get("exclude"):
            terms = [t for t in terms if t.id not in p.get("exclude")]
        if p.isset("search") and p.get("search") != "":
            needle = p.get("search").lower()
            terms = [t for t in terms if needle in t.name.lower() or needle in t.slug.lower()]
        if p.isset("parent") and taxonomy.hierarchical:
            terms = [t for t in terms if t.parent == php.php_int(p.get("parent"))]
        if p.isset("slug") and p.get("slug") != "":
            slugs = [php.sanitize_title(s) for s in php.wp_parse_list(p.get("slug"))]
            terms = [t for t in terms if t.slug in slugs]
        if p.isset("product"):
            product = site.product(php.php_int(p.get("product")))
            ids = _product_term_ids(site, product, taxonomy) if product else []
            terms = [t for t in terms if t.id in ids]
        counts = {t.id: term_count(site, t) for t in terms}
        if p.get("hide_empty"):
            terms = [t for t in terms if counts[t.id] > 0]
        orderby = p.get("orderby", "name")
        keys = {"id": lambda t: t.id, "name": lambda t: (t.name.lower(), t.id), "slug": lambda t: t.slug,
                "term_group": lambda t: t.id, "description": lambda t: t.description,
                "count": lambda t: (counts[t.id], t.id)}
        if orderby == "include" and p.get("include"):
            order = {tid: i for i, tid in enumerate(p.get("include"))}
            terms.sort(key=lambda t: order.get(t.id, 0))
        else:
            terms.sort(key=keys.get(orderby, keys["name"]), reverse=p.get("order") == "desc")
        page, per_page = php.php_int(p.get("page", 1)), php.php_int(p.get("per_page", 10))
        chunk, headers = paginate(terms, request, page, per_page, self.base(taxonomy))
        return Reply([term_json(request, taxonomy, t, self.base(taxonomy)) for t in chunk], headers=headers)

    def get_item(self, request: Request) -> Reply:
        taxonomy, term = self.find(request)
        return Reply(term_json(request, taxonomy, term, self.base(taxonomy)))

    def create_item(self, request: Request) -> Reply:
        taxonomy = self.taxonomy(request)
        p = request.params
        parent = self._parent(request, taxonomy)
        term = insert_term(request.site, taxonomy.name, php.php_string(p.get("name")),
                           php.php_string(p.get("slug", "")), parent, php.php_string(p.get("description", "")))
        self._extras(request, taxonomy, term)
        return Reply(term_json(request, taxonomy, term, self.base(taxonomy)), 201,
                     [("Location", request.rest_url(f"{self.base(taxonomy)}/{term.id}"))])

    def update_item(self, request: Request) -> Reply:
        taxonomy, term = self.find(request)
        site, p = request.site, request.params
        parent = self._parent(request, taxonomy) if p.isset("parent") else term.parent
        if p.isset("name"):
            name = php.sanitize_text_field(p.get("name"))
            if name == "":
                raise RestError("empty_term_name", "A name is required for this term.", 400)
            term.name = name
        if p.isset("slug"):
            slug = php.sanitize_title(p.get("slug")) or php.sanitize_title(term.name)
            if any(t.slug == slug and t.id != term.id for t in site.terms_of(taxonomy.name)):
                raise RestError("duplicate_term_slug", f"The slug &#8220;{slug}&#8221; is already in use by another term.", 400)
            term.slug = slug
        if p.isset("description"):
            term.description = php.kses_post(p.get("description"))
        term.parent = parent
        self._extras(request, taxonomy, term)
        return Reply(term_json(request, taxonomy, term, self.base(taxonomy)))

    def delete_item(self, request: Request) -> Reply:
        taxonomy, term = self.find(request)
        site = request.site
        if not php.php_bool(request.params.get("force")):
            raise RestError("woocommerce_rest_trash_not_supported", "Resource does not support trashing.", 501)
        data = term_json(request, taxonomy, term, self.base(taxonomy))
        if taxonomy.name == "product_cat" and term.id == php.php_int(site.option("default_product_cat", 15)):
            raise RestError("woocommerce_rest_cannot_delete", "The resource cannot be deleted.", 500)
        delete_term(site, term)
        return Reply(data)

    def batch_items(self, request: Request) -> Reply:
        taxonomy = self.taxonomy(request)
        url = {"attribute_id": request.params.get("attribute_id")} if self.fixed is None else None
        return batch(request, self.create_item, self.update_item, self.delete_item, term_schema(taxonomy, True),
                     term_schema(taxonomy, False), url)

    def _parent(self, request: Request, taxonomy: Taxonomy) -> int:
        p = request.params
        if not p.isset("parent"):
            return 0
        if not taxonomy.hierarchical:
            raise RestError("woocommerce_rest_taxonomy_not_hierarchical",
                            "Can not set resource parent, taxonomy is not hierarchical.", 400)
        parent = php.php_int(p.get("parent"))
        if parent and request.site.term(parent, taxonomy.name) is None:
            raise RestError("woocommerce_rest_term_invalid", "Parent resource does not exist.", 400)
        return parent

    def _extras(self, request: Request, taxonomy: Taxonomy, term: Term) -> None:
        p = request.params
        if taxonomy.kind in ("category", "attribute_term") and p.isset("menu_order"):
            term.menu_order = php.php_int(p.get("menu_order"))
        if taxonomy.kind != "category":
            return
        if p.isset("display"):
            term.display = php.php_string(p.get("display"))
        if p.sent("image"):
            image = p.values.get("image")
            if not isinstance(image, dict) or php.php_empty(image.get("id")) and php.php_empty(image.get("src")):
                term.image_id = 0
            else:
                image_id = php.absint(image.get("id"))
                if not image_id and image.get("src"):
                    image_id = media.sideload(request, php.php_string(image.get("src")), 0,
                                              "woocommerce_product_image_upload_error")
                if not media.is_image(request.site, image_id):
                    raise RestError("woocommerce_product_invalid_image_id", f"#{image_id} is an invalid image ID.", 400)
                term.image_id = image_id

    def register(self, router: Router, base: str) -> None:
        item = base + r"/(?P<id>[\d]+)"
        router.add(base, READABLE, self.list_items, TERM_LIST_ARGS, self.permission("list"))
        router.add(base, CREATABLE, self.create_item, term_schema(self.fixed or ATTR_TERM, True), self.permission("create"))
        router.add(base + "/batch", EDITABLE, self.batch_items, {}, self.permission("batch"))
        router.add(item, READABLE, self.get_item, context_param(), self.permission("read"))
        router.add(item, EDITABLE, self.update_item, term_schema(self.fixed or ATTR_TERM, False), self.permission("edit"))
        router.add(item, DELETABLE, self.delete_item, {"force": {"type": "boolean", "default": False}},
                   self.permission("delete"))


ATTR_TERM = Taxonomy("products/attributes/terms", "", False, "attribute_term")


def _product_term_ids(site: Site, product: Product, taxonomy: Taxonomy) -> list[int]:
    if taxonomy.name == "product_cat":
        return product.category_ids
    if taxonomy.name == "product_tag":
        return product.tag_ids
    if taxonomy.name == "product_brand":
        return product.brand_ids
    if taxonomy.name == "product_shipping_class":
        return [product.shipping_class_id]
    return [php.php_int(o) for a in product.attributes if a.id and site.attributes.get(a.id)
            and site.attributes[a.id].taxonomy == taxonomy.name for o in a.options]


def delete_term(site: Site, term: Term) -> None:
    from .catalog import touch
    touch(site)
    site.terms.pop(term.id, None)
    for record in site.posts.values():
        if not isinstance(record, Product):
            continue
        for attr in ("category_ids", "tag_ids", "brand_ids"):
            ids = getattr(record, attr)
            if term.id in ids:
                ids.remove(term.id)
        if record.shipping_class_id == term.id:
            record.shipping_class_id = 0
        for attribute in record.attributes:
            if attribute.id:
                attribute.options = [o for o in attribute.options if php.php_int(o) != term.id]
    for child in site.terms_of(term.taxonomy):
        if child.parent == term.id:
            child.parent = term.parent


# --- attributes ------------------------------------------------------------------------------

ATTRIBUTE_ARGS: dict[str, Schema] = {
    "name": {"type": "string", "required": True}, "slug": {"type": "string"},
    "type": {"type": "string", "default": "select", "enum": ["select"]},
    "order_by": {"type": "string", "default": "menu_order", "enum": ["menu_order", "name", "name_num", "id"]},
    "has_archives": {"type": "boolean", "default": False},
}
ATTRIBUTE_UPDATE_ARGS: dict[str, Schema] = {
    "name": {"type": "string"}, "slug": {"type": "string"}, "type": {"type": "string", "enum": ["select"]},
    "order_by": {"type": "string", "enum": ["menu_order", "name", "name_num", "id"]},
    "has_archives": {"type": "boolean"},
}
RESERVED = {"attachment", "author", "category", "comment", "day", "feed", "hour", "link", "minute", "month",
            "name", "order", "page", "paged", "post", "s", "search", "tag", "taxonomy", "term", "theme", "type",
            "year", "w", "p", "error", "m", "second", "cat", "static", "title"}


def attribute_json(request: Request, attribute: AttributeTaxonomy) -> dict[str, Any]:
    return {"id": attribute.id, "name": attribute.name, "slug": attribute.taxonomy, "type": attribute.type,
            "order_by": attribute.order_by, "has_archives": attribute.has_archives,
            "_links": self_links(request, f"/wc/v3/products/attributes/{attribute.id}", "/wc/v3/products/attributes")}


def _attribute_slug(site: Site, raw: str, name: str, exclude: int = 0) -> str:
    slug = php.sanitize_title(raw or name)
    if raw and slug.startswith("pa_"):
        slug = slug[3:]
    if len(slug) > 28:
        raise RestError("woocommerce_rest_cannot_create",
                        f'Slug "{slug}" is too long (28 characters max). Shorten it, please.', 400)
    if slug in RESERVED:
        raise RestError("woocommerce_rest_cannot_create",
                        f'Slug "{slug}" is not allowed because it is a reserved term. Change it, please.', 400)
    if any(a.slug == slug and a.id != exclude for a in site.attributes.values()):
        raise RestError("woocommerce_rest_cannot_create", f'Slug "{slug}" is already in use. Change it, please.', 400)
    return slug


def _find_attribute(request: Request) -> AttributeTaxonomy:
    attribute = request.site.attributes.get(request.id_param())
    if attribute is None:
        raise RestError("woocommerce_rest_attribute_invalid", "Resource does not exist.", 404)
    return attribute


def list_attributes(request: Request) -> Reply:
    items = sorted(request.site.attributes.values(), key=lambda a: a.name.lower())
    return Reply([attribute_json(request, a) for a in items])


def get_attribute(request: Request) -> Reply:
    return Reply(attribute_json(request, _find_attribute(request)))


def create_attribute(request: Request) -> Reply:
    site, p = request.site, request.params
    name = php.sanitize_text_field(p.get("name", ""))
    if name == "":
        raise RestError("woocommerce_rest_cannot_create", "Please, provide an attribute name.", 400)
    slug = _attribute_slug(site, php.php_string(p.get("slug", "")), name)
    attribute = AttributeTaxonomy(site.next_id("attribute"), name, slug, php.php_string(p.get("type", "select")),
                                  php.php_string(p.get("order_by", "menu_order")), php.php_bool(p.get("has_archives")))
    site.attributes[attribute.id] = attribute
    return Reply(attribute_json(request, attribute), 201,
                 [("Location", request.rest_url(f"/wc/v3/products/attributes/{attribute.id}"))])


def update_attribute(request: Request) -> Reply:
    attribute = _find_attribute(request)
    site, p = request.site, request.params
    if p.isset("name"):
        attribute.name = php.sanitize_text_field(p.get("name")) or attribute.name
    if p.isset("slug"):
        new_slug = _attribute_slug(site, php.php_string(p.get("slug")), attribute.name, attribute.id)
        if new_slug != attribute.slug:
            old, attribute.slug = attribute.taxonomy, new_slug
            for term in site.terms_of(old):
                term.taxonomy = attribute.taxonomy
    if p.isset("type"):
        attribute.type = php.php_string(p.get("type"))
    if p.isset("order_by"):
        attribute.order_by = php.php_string(p.get("order_by"))
    if p.isset("has_archives"):
        attribute.has_archives = php.php_bool(p.get("has_archives"))
    return Reply(attribute_json(request, attribute))


def delete_attribute(request: Request) -> Reply:
    attribute = _find_attribute(request)
    site = request.site
    if not php.php_bool(request.params.get("force")):
        raise RestError("woocommerce_rest_trash_not_supported", "Resource does not support trashing.", 501)
    data = attribute_json(request, attribute)
    for term in site.terms_of(attribute.taxonomy):
        delete_term(site, term)
    site.attributes.pop(attribute.id, None)
    for record in site.posts.values():
        if isinstance(record, Product):
            record.attributes = [a for a in record.attributes if a.id != attribute.id]
            record.variation_attributes.pop(attribute.taxonomy, None)
    return Reply(data)


def batch_attributes(request: Request) -> Reply:
    return batch(request, create_attribute, update_attribute, delete_attribute, ATTRIBUTE_ARGS, ATTRIBUTE_UPDATE_ARGS)


def register(router: Router) -> None:
    base = "/wc/v3/products/attributes"
    router.add(base, READABLE, list_attributes, context_param(), require("list"))
    router.add(base, CREATABLE, create_attribute, ATTRIBUTE_ARGS, require("create"))
    router.add(base + "/batch", EDITABLE, batch_attributes, {}, require("batch"))
    item = base + r"/(?P<id>[\d]+)"
    router.add(item, READABLE, get_attribute, context_param(), require("read"))
    router.add(item, EDITABLE, update_attribute, ATTRIBUTE_UPDATE_ARGS, require("edit"))
    router.add(item, DELETABLE, delete_attribute, {"force": {"type": "boolean", "default": False}}, require("delete"))
    TermController(None).register(router, base + r"/(?P<attribute_id>[\d]+)/terms")
    for taxonomy in (CATEGORIES, TAGS, BRANDS, SHIPPING_CLASSES):
        TermController(taxonomy).register(router, f"/wc/v3/{taxonomy.rest_base}")
