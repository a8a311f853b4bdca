"""`decathlon image build [--source CHECKOUT]`: the sandbox and runner images, and a checkout's on top."""
from __future__ import annotations

import argparse

from decathlon.checkout.checkout_image import build as build_checkout
from decathlon.checkout.image import build
from decathlon.checkout.tasks import resolve_source


def build_command(ns: argparse.Namespace) -> int:
    tag = build(ns.base_image, ns.tag)
    if ns.source:
        tag = build_checkout(resolve_source(ns.source), tag)
    print(tag)
    return 0
