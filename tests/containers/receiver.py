#!/usr/bin/python3
"""A webhook receiver for a container on the compose network (not wired into a test yet).
Answers every POST with 200 and appends a line per request to the file named by its
argument: the webhook-id header, the due time in ms the body carries ({"due": ms}) and the
arrival time in ms, from which a script can count ids and lateness."""
import http.server
import json
import sys
import threading
import time

lock = threading.Lock()
out = open(sys.argv[1], "a", buffering=1)


class Hook(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        now = int(time.time() * 1000)
        try:
            due = int(json.loads(body).get("due", -1))
        except (ValueError, AttributeError):
            due = -1
        with lock:
            out.write(f"{self.headers.get('webhook-id')} {due} {now}\n")
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("0.0.0.0", 8000), Hook).serve_forever()
