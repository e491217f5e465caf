"""schemathesis hooks for the live gateway: NDJSON streams are checked
line by line (every line must be a JSON object; the first is validated
against the operation's schema, as a stream has one message per line)."""

import json

import schemathesis


@schemathesis.deserializer("application/x-ndjson")
def ndjson(ctx, response):
    lines = [line for line in response.content.decode().splitlines() if line.strip()]
    items = [json.loads(line) for line in lines]
    if not all(isinstance(i, dict) for i in items):
        raise ValueError("an NDJSON line is not a JSON object")
    return items[0] if items else {}
