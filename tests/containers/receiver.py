#!/usr/bin/python3
"""A webhook receiver for a container on the compose network (tests/containers/run.sh).
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


class Server(http.server.ThreadingHTTPServer):
    # socketserver's listen backlog is 5 by default: a burst of connections overflows it and
    # the kernel drops their SYNs, sent again 1, 3, 7 s later (300 connections at once in one
    # container: 1.46 s to the last answer with 5, 0.13 s with this), all of it counted in the
    # consumer's 10 s SENDAT_HTTP_TIMEOUT. The kernel caps it at net.core.somaxconn.
    request_queue_size = 4096


Server(("0.0.0.0", 8000), Hook).serve_forever()
