"""Offline stand-in for the npm MCP server `@lockon0927/woocommerce-mcp` (1.0.6, the version Toolathlon pins).

Run as `python -m decathlon.standins.woocommerce` with WORDPRESS_SITE_URL (e.g.
http://localhost:10003/store85), WOOCOMMERCE_CONSUMER_KEY and WOOCOMMERCE_CONSUMER_SECRET; it serves
MCP over stdio with the reference's 55 `woo_*` tools, their descriptions and input schemas, and
talks to `<site>/wp-json/wc/v3` over HTTP with Basic auth, as the reference's axios client does.

Taken from recorded real runs (woo_products_list/get/update/batch_update, woo_orders_list,
woo_customers_list, woo_products_categories_list/create): the result text is
`JSON.stringify(data, null, 2)` with every backslash then removed (`"<p>...</p>n"` where the
description ended in a newline, unescaped quotes inside `price_html`).

Assumed from the reference's source where no recording shows the case: failures are `isError`
results reading `Error: <message>`, the message being the reference's own for 404 ("WooCommerce
API endpoint not found ... URL: /products/999"), 401, 403, other statuses ("WooCommerce API error:
<WordPress message> (Status: N)"), missing ids ("Product ID is required") and unknown tools
("Unknown tool: x"); list arguments go to WooCommerce through `toSnakeCase`, unknown ones included;
arguments are never validated against the schemas.

Deliberate differences: requests are bounded in time (see client.py) and go through httpx; the
reference's start-up lines go to stderr instead of corrupting stdout; the SDK orders each
inputSchema's top-level keys its own way.
"""
