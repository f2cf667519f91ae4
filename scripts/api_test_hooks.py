"""Schemathesis hooks for make api-test (scripts/api-test.sh): how a client writes pushtrace's upload bodies.

openapi.json describes an upload as what it decompresses to: an array of JSON values, the manifest first, each one
line of NDJSON. JSON Schema cannot say that the bytes on the wire are those lines compressed as Content-Encoding
says, so this serializer does what every client does: one line per value, then gzip or deflate when the request's
Content-Encoding names it.
"""
import gzip
import json
import zlib

import schemathesis


@schemathesis.serializer("application/x-ndjson")
def ndjson(ctx, value):
    if isinstance(value, bytes):
        data = value
    elif isinstance(value, str):
        data = value.encode()
    elif isinstance(value, list):
        data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in value).encode()
    else:
        data = (json.dumps(value, ensure_ascii=False) + "\n").encode()
    encoding = str((ctx.case.headers or {}).get("Content-Encoding", "")).strip().lower()
    if encoding in ("gzip", "x-gzip"):
        data = gzip.compress(data)
    elif encoding == "deflate":
        data = zlib.compress(data)
    return data
