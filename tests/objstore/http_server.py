#!/usr/bin/env python3
"""A static HTTP server for recite's object-store tests (tests/it/objstore.rs).

Serves the files of one folder on 127.0.0.1 only, on an ephemeral port it prints as the first
line of its standard output, with what object_store's HTTP client needs: HEAD, byte ranges
(`bytes=A-B`, `bytes=A-`, `bytes=-N`, answered 206 with Content-Range), a strong ETag (the
content's MD5, so new bytes get a new one) and Last-Modified. Standard library only.

    python3 tests/objstore/http_server.py FOLDER
"""
import email.utils
import hashlib
import http.server
import os
import re
import sys
import urllib.parse

ROOT = os.path.realpath(sys.argv[1] if len(sys.argv) > 1 else ".")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_HEAD(self):
        self.serve(head=True)

    def do_GET(self):
        self.serve(head=False)

    def empty(self, status, headers=()):
        self.send_response(status)
        self.send_header("Content-Length", "0")
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()

    def serve(self, head):
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path).lstrip("/")
        full = os.path.realpath(os.path.join(ROOT, path))
        if not full.startswith(ROOT + os.sep) or not os.path.isfile(full):
            return self.empty(404)
        with open(full, "rb") as f:
            data = f.read()
        size = len(data)
        status, start, end = 200, 0, size - 1
        wanted = self.headers.get("Range")
        if wanted is not None:
            m = re.fullmatch(r"\s*bytes=(\d*)-(\d*)\s*", wanted)
            if not m or (m.group(1) == "" and m.group(2) == ""):
                return self.empty(416, [("Content-Range", f"bytes */{size}")])
            first, last = m.groups()
            if first == "":
                start, end = max(0, size - int(last)), size - 1
            else:
                start = int(first)
                end = min(int(last), size - 1) if last else size - 1
            if start >= size or start > end:
                return self.empty(416, [("Content-Range", f"bytes */{size}")])
            status = 206
        body = data[start : end + 1]
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("ETag", '"%s"' % hashlib.md5(data).hexdigest())
        mtime = os.stat(full).st_mtime
        self.send_header("Last-Modified", email.utils.formatdate(mtime, usegmt=True))
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.end_headers()
        if not head:
            self.wfile.write(body)


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
