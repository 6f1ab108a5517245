#!/usr/bin/env python3
"""Writes the seed corpus under fuzz/corpus/ (run from anywhere; it replaces the seeds it
makes and leaves other files alone).

The provider and SSE seeds are the response bodies of the conformance fixtures
(conformance/providers/fixtures/, recorded from pi-ai), so the fuzzer starts from what
real servers send; the others are small hand-written cases of the issue-11 kinds (wrong
types, deep nesting, unicode, lone surrogates, 1e400, not-an-object, extra properties).
"""
import base64
import glob
import json
import os

ROOT = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(ROOT, "..", "conformance", "providers", "fixtures")
CORPUS = os.path.join(ROOT, "corpus")
MAX_BODY = 6000

# As in src/provider.rs: Api::providers() and STATUSES.
PROVIDERS = {
    "anthropic-messages": ["anthropic", "github-copilot"],
    "openai-completions": ["openai", "openrouter", "deepseek", "zai", "llama-cpp", "xai"],
    "openai-responses": ["openai", "github-copilot", "openrouter", "xai"],
}
STATUS_BITS = {200: 0, 400: 4, 429: 5, 500: 6, 529: 7}
TARGETS = {
    "anthropic-messages": "anthropic_stream",
    "openai-completions": "openai_completions_stream",
    "openai-responses": "openai_responses_stream",
}


def write(target, name, data):
    folder = os.path.join(CORPUS, target)
    os.makedirs(folder, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def body_of(response):
    body = b""
    for chunk in response.get("chunks", []):
        body += chunk.encode() if isinstance(chunk, str) else base64.b64decode(chunk["base64"])
    return body


def provider_seeds():
    for api, target in TARGETS.items():
        for i, path in enumerate(sorted(glob.glob(os.path.join(FIXTURES, api, "*.json")))):
            fixture = json.load(open(path))
            response = fixture.get("response") or {}
            body = body_of(response)
            if len(body) > MAX_BODY:
                continue
            model = fixture.get("model") or {}
            names = PROVIDERS[api]
            provider = model.get("provider", "")
            pick = names.index(provider) if provider in names else 0
            pick |= STATUS_BITS.get(response.get("status") or 200, 0) << 3
            if model.get("reasoning"):
                pick |= 0x80
            # Half the seeds in one chunk, half cut into pieces of up to 48 bytes.
            cuts = bytes([0, 0]) if i % 2 == 0 else bytes([48, i & 0xFF])
            name = os.path.splitext(os.path.basename(path))[0]
            write(target, name, bytes([pick]) + cuts + body)
            if api != "anthropic-messages":
                write("sse", f"{api}-{name}", cuts + body)


ARGUMENTS = {
    "weather": {"city": "Tokyo"},
    "weather_unit": {"city": "Paris", "unit": "fahrenheit"},
    "weather_extra": {"city": "Paris", "country": "FR"},
    "weather_null_unit": {"city": "Oslo", "unit": None},
    "search": {"query": "rust", "limit": "5", "sites": ["a.example"], "lang": "en-GB",
               "range": {"from": "2024-01-01", "to": None},
               "filters": {"k": {"op": "between", "low": 1, "high": "2"}},
               "min_score": 0.5, "offset": 3.0, "verbose": 1},
    "validations": {"query": "q", "limit": 5, "temperature": 0.2, "slug": "abc",
                    "email": "a@b.example", "url": "https://a.example", "tags": ["t"],
                    "extended": "e", "titled": "t"},
    "ints": {"a": 255, "b": 65535, "c": 4294967295, "d": 18446744073709551615, "e": 1,
             "f": -128, "g": -1, "h": -9007199254740993, "j": 1.5, "k": 2.5, "l": 1,
             "m": 340282366920938463463374607431768211455, "n": "x", "loose": 10,
             "narrow": -5},
    "times": {"at": "2024-01-01T00:00:00Z", "day": "2024-02-30", "local": "2024-01-01T00:00:00",
              "id": "67e55044-10b1-426f-9247-bb680e5fe0c8", "ip": "::1"},
    "tagged": {"external": {"Tuple": [1, True]}, "shape": {"type": "circle", "radius": 1},
               "adjacent": {"t": "B", "c": {"x": 1}}, "untagged": {"k": "v"},
               "shapes": [{"type": "empty"}, {"type": "wrapped", "x": 1, "y": 2}]},
    "recursive": {"name": "a", "children": [{"name": "b", "children": []}]},
    "mutual": {"a": {"name": "x", "b": {"items": [{"name": "y"}], "weight": "7"}}},
    "tuples": {"pair": ["a", 1], "rgb": [1, 2, 300], "scored": [["x", 1]], "same": [1, 2]},
    "root_internal": {"kind": "id", "id": 5, "limit": None},
    "maps": {"map": {"a": "1"}, "bmap": {"k": {"x": 1, "y": 2}}, "free": {}, "by_unit": {"A": "a"}},
    "not_object": [1, 2, 3],
    "string": "just text",
    "number": 1e300,
    "negative_zero": {"city": -0.0},
    "schema_pair": [{"type": "object", "properties": {"n": {"type": "integer", "minimum": 1},
                     "s": {"type": "string", "pattern": "^a+$", "maxLength": 3},
                     "u": {"anyOf": [{"type": "number"}, {"type": "boolean"}]},
                     "l": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}},
                     "required": ["n"], "additionalProperties": False},
                    {"n": "2", "s": "aa", "u": "true", "l": ["a", "a"]}],
    "schema_ref": [{"type": "object", "properties": {"t": {"$ref": "#/$defs/T"}},
                    "$defs": {"T": {"type": "object", "properties": {"t": {"$ref": "#/$defs/T"}}}}},
                   {"t": {"t": {"t": {}}}}],
}


def argument_seeds():
    for name, value in ARGUMENTS.items():
        write("arguments", name, json.dumps(value))
    write("arguments", "unicode", '{"city": "\\u0000\\u202e\\u0301\\ud83d\\ude00 T\\u00f6ky\\u014d"}')
    write("arguments", "lone_surrogate", '{"city": "\\ud800"}')
    write("arguments", "huge_number", '{"city": "Tokyo", "limit": 1e400}')
    write("arguments", "duplicate_keys", '{"city": "a", "city": "b"}')
    # Amplified (src/input.rs): `[` 128 times and `{"a":` 128 times.
    write("arguments", "deep_array", bytes([0xFA, 1, 1]) + b"[")
    write("arguments", "deep_object", bytes([0xFA, 1, 5]) + b'{"a":' + b"1}")
    write("arguments", "long_array", bytes([0xFA, 20, 2]) + b'1,' + b"1]")


PARTIAL = {
    "complete": '{"city": "Tokyo", "days": 3, "tags": ["a", "b"], "ok": true, "n": null}',
    "unfinished_string": '{"city": "To',
    "unfinished_number": '{"n": -1.5e',
    "unfinished_literal": '{"ok": tr',
    "raw_control": '{"text": "line\nnext\ttab"}',
    "bad_escape": '{"path": "C:\\dir\\file"}',
    "lone_surrogate": '{"s": "\\ud800"}',
    "big_numbers": '[1e400, -0, 18446744073709551616, 12345678901234567890, 0.1]',
    "index_keys": '{"b": 1, "2": 2, "a": 3, "1": 4}',
    "infinity_words": '[Infinity, -Infinity, NaN',
    "trailing_garbage": '{"a": 1} xyz',
    "empty": "",
    "blank": "  \n",
}


def partial_seeds():
    for i, (name, text) in enumerate(PARTIAL.items()):
        write("partial_json", name, bytes([1 + i % 7, i]) + text.encode())
    write("partial_json", "deep_array", bytes([3, 1, 0xFA, 4, 1]) + b"[")
    write("partial_json", "deep_object", bytes([3, 1, 0xFA, 4, 5]) + b'{"a":')
    write("partial_json", "long_string", bytes([0, 0, 0xFA, 40, 4]) + b'abcd' + b'"}')
    write("partial_json", "long_string_open", bytes([9, 9, 0xFA, 40, 1]) + b'x')


LINES = [
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}',
    '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    '{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
    '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Tokyo"}}}',
    '{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"get_weather","arguments":[1]}}',
    '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":"text"}',
    '{"jsonrpc":"2.0","id":5,"method":"tools/call"}',
    '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":7}}',
    '{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"x":1}}',
    '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"a","arguments":{"n":1e400}}}',
    '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"a","arguments":{"s":"\\ud800"}}}',
    '{"jsonrpc":"1.0","id":10,"method":"ping"}',
    '{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
    '[{"jsonrpc":"2.0","id":11,"method":"ping"}]',
    '{"jsonrpc":"2.0","id":12,"result":{}}',
    '{"id":13,"method":"tools/call","params":{"name":"x"',
    '\ufeff{"jsonrpc":"2.0","id":14,"method":"ping"}',
]


def framing_seeds():
    for i, line in enumerate(LINES):
        # limit 64*4 bytes, a 7-byte buffer, reads of up to 13 bytes.
        write("mcp_framing", f"line{i:02}", bytes([64, 7, 13, i]) + line.encode() + b"\r\n")
    write("mcp_framing", "session", bytes([255, 64, 100, 1]) + "\n".join(LINES).encode())
    write("mcp_framing", "oversized", bytes([4, 3, 5, 2]) + LINES[3].encode() + b"\n" + LINES[2].encode())
    write("mcp_framing", "deep", bytes([255, 16, 16, 3, 0xFA, 200, 1]) + b"[")


def sse_seeds():
    write("sse", "line_endings", bytes([3, 7]) + b"data: a\r\ndata: b\r\rdata: c\n\nevent: x\rdata: {}\r\n\r\n: comment\n\ndata: [DONE]\n\n")
    write("sse", "split_utf8", bytes([1, 1]) + "data: {\"t\": \"\u00e9\u6f22\U0001f600\"}\n\n".encode() + b"data: \xff\xfe\n\n")
    write("sse", "error_member", bytes([5, 5]) + b'data: {"error": {"message": "overloaded"}}\n\n')
    write("sse", "long_line", bytes([200, 3, 0xFA, 100, 10]) + b"data: xxxx" + b"\n\n")


provider_seeds()
argument_seeds()
partial_seeds()
framing_seeds()
sse_seeds()
