#!/usr/bin/python3
"""A tiny webhook receiver for the demo: prints each POST with its arrival time."""
import datetime
import http.server
import sys


class Hook(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")
        print(f"{now} receiver got POST {self.path} webhook-id={self.headers.get('webhook-id')} "
              f"body={body.decode(errors='replace')}", flush=True)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hook)
with open(sys.argv[1], "w") as f:
    f.write(str(server.server_address[1]))
server.serve_forever()
