"""WordPress multisite with WooCommerce, as upstream's deployment runs it."""
from decathlon.emulators.vendor import System, Vendor

VENDOR = Vendor(
    name="woocommerce",
    title="the WooCommerce emulator (10003)",
    reach="service",
    protocol="REST",
    ports=(10003,),
    servers=("woocommerce",),
    systems=(System("woocommerce", "WooCommerce", modules=("woocommerce",),
                    hosts=(r"(?:localhost|127\.0\.0\.1):10003\b", r"/wp-json/wc/"), service="woocommerce"),),
    surface="WooCommerce REST wc/v3 and WordPress wp/v2 per store /storeN",
)
