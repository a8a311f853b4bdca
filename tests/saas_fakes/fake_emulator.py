"""Stands in for an emulator behind the SaaS front in its tests: `python fake_emulator.py -m
decathlon.emulators.NAME --root R` (the argv the front gives its emulators' interpreter) answers every GET
with the service, Host and path it saw. FAKE_FAIL=NAME makes that one fail to start; FAKE_SILENT=NAME makes
it never say ready."""
from __future__ import annotations

import http.server
import json
import os
import sys
import time

name = sys.argv[2].rsplit(".", 1)[1]
if os.environ.get("FAKE_FAIL") == name:
    print(f"{name}: cannot start (told to fail)", file=sys.stderr)
    sys.exit(2)
if os.environ.get("FAKE_SILENT") == name:
    time.sleep(3600)


class Echo(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        body = json.dumps({"service": name, "host": self.headers.get("Host"), "path": self.path}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Echo)
print(f"ready {name} " + json.dumps({"http": server.server_address[1]}), flush=True)
server.serve_forever()
