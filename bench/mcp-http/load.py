"""One load client for both servers, side by side in one run: keep-alive HTTP/1.1 over
asyncio streams (headers and body in one write, as most HTTP clients send them), MCP
sessions opened with `initialize`, `tools/call get_weather` answered as JSON or as
server-sent events. Only loopback addresses.

    python load.py OURS_PORT OURS_PID PEER_PORT PEER_PID

prints one table: each figure for ours and the peer and the ratio ours/peer."""

import asyncio
import json
import statistics
import sys
import time

DURATION = float(__import__("os").environ.get("LOAD_SECONDS", "4"))  # seconds of calls per throughput row
FLOOD = int(__import__("os").environ.get("LOAD_FLOOD", "2000"))  # sessions opened for the memory rows


class Connection:
    def __init__(self, port):
        self.port = port
        self.reader = None
        self.writer = None

    async def open(self):
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)

    async def request(self, method, headers, body=b""):
        if self.writer is None:
            await self.open()
        head = f"{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
        head += "Accept: application/json, text/event-stream\r\n"
        head += "Content-Type: application/json\r\n"
        head += f"Content-Length: {len(body)}\r\n"
        for name, value in headers.items():
            head += f"{name}: {value}\r\n"
        self.writer.write(head.encode() + b"\r\n" + body)
        status_line = await self.reader.readline()
        status = int(status_line.split()[1])
        response_headers = {}
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.decode().partition(":")
            response_headers[name.strip().lower()] = value.strip()
        if response_headers.get("transfer-encoding") == "chunked":
            data = b""
            while True:
                size = int((await self.reader.readline()).strip(), 16)
                if size == 0:
                    await self.reader.readline()
                    break
                data += await self.reader.readexactly(size)
                await self.reader.readline()
        else:
            data = await self.reader.readexactly(int(response_headers.get("content-length", "0")))
        if response_headers.get("connection") == "close":
            self.writer.close()
            self.writer = None
        return status, response_headers, data

    def close(self):
        if self.writer is not None:
            self.writer.close()
            self.writer = None


def messages(data):
    text = data.decode()
    found = []
    for line in text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            found.append(json.loads(line[5:]))
    if not found and text.strip():
        found.append(json.loads(text))
    return found


class Session:
    def __init__(self, port):
        self.connection = Connection(port)
        self.headers = {}

    async def open(self):
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "load", "version": "0"}}}
        status, headers, _ = await self.connection.request("POST", {}, json.dumps(init).encode())
        assert status == 200, status
        self.headers = {"Mcp-Session-Id": headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await self.connection.request("POST", self.headers, json.dumps(note).encode())

    async def call(self, id_):
        body = {"jsonrpc": "2.0", "id": id_, "method": "tools/call",
                "params": {"name": "get_weather", "arguments": {"city": "Paris"}}}
        status, _, data = await self.connection.request("POST", self.headers, json.dumps(body).encode())
        answer = [m for m in messages(data) if m.get("id") == id_]
        assert status == 200 and answer and "Paris: 18" in json.dumps(answer[0]), data[:300]

    async def delete(self):
        await self.connection.request("DELETE", self.headers)
        self.connection.close()


async def throughput(port, sessions):
    opened = [Session(port) for _ in range(sessions)]
    await asyncio.gather(*(s.open() for s in opened))
    latencies = []
    deadline = time.perf_counter() + DURATION

    async def run(session, base):
        n = 0
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            await session.call(base + n)
            latencies.append(time.perf_counter() - started)
            n += 1

    started = time.perf_counter()
    await asyncio.gather(*(run(s, i * 1_000_000 + 1) for i, s in enumerate(opened)))
    elapsed = time.perf_counter() - started
    await asyncio.gather(*(s.delete() for s in opened))
    latencies.sort()
    return len(latencies) / elapsed, latencies[len(latencies) // 2] * 1000, latencies[int(len(latencies) * 0.99)] * 1000


async def in_flight(port, calls):
    """`calls` calls at once on one session (each on its own connection)."""
    first = Session(port)
    await first.open()
    sessions = [first] + [Session(port) for _ in range(calls - 1)]
    for s in sessions[1:]:
        s.headers = first.headers
    latencies = []
    started = time.perf_counter()

    async def one(session, id_):
        t = time.perf_counter()
        await session.call(id_)
        latencies.append(time.perf_counter() - t)

    rounds = 0
    while time.perf_counter() - started < DURATION:
        await asyncio.gather(*(one(s, rounds * calls + i + 1) for i, s in enumerate(sessions)))
        rounds += 1
    elapsed = time.perf_counter() - started
    for s in sessions:
        s.connection.close()
    await first.delete()
    latencies.sort()
    return len(latencies) / elapsed, latencies[len(latencies) // 2] * 1000, latencies[int(len(latencies) * 0.99)] * 1000


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


async def memory(port, pid):
    """RSS per session over a flood of sessions, and RSS after they are all closed."""
    await asyncio.sleep(0.5)
    before = rss_kib(pid)
    sessions = []
    for start in range(0, FLOOD, 100):
        batch = [Session(port) for _ in range(100)]
        await asyncio.gather(*(s.open() for s in batch))
        for s in batch:
            s.connection.close()
        sessions.extend(batch)
    await asyncio.sleep(0.5)
    flooded = rss_kib(pid)
    for start in range(0, FLOOD, 100):
        await asyncio.gather(*(s.delete() for s in sessions[start:start + 100]))
    await asyncio.sleep(1.0)
    closed = rss_kib(pid)
    return (flooded - before) / FLOOD, flooded / 1024, closed / 1024


def row(name, ours, peer, unit):
    ratio = ours / peer if peer else float("nan")
    print(f"| {name} | {ours:,.1f} {unit} | {peer:,.1f} {unit} | {ratio:.2f}× |")


async def main():
    ours_port, ours_pid, peer_port, peer_pid = (int(a) for a in sys.argv[1:5])
    print("| figure | ours (weather-mcp) | peer (Python SDK) | ours/peer |")
    print("| --- | --- | --- | --- |")
    for sessions in (1, 16, 128):
        o = await throughput(ours_port, sessions)
        p = await throughput(peer_port, sessions)
        row(f"calls/s, {sessions} session(s)", o[0], p[0], "")
        row(f"p50, {sessions} session(s)", o[1], p[1], "ms")
        row(f"p99, {sessions} session(s)", o[2], p[2], "ms")
    o = await in_flight(ours_port, 64)
    p = await in_flight(peer_port, 64)
    row("calls/s, 64 in flight on one session", o[0], p[0], "")
    row("p50, 64 in flight", o[1], p[1], "ms")
    row("p99, 64 in flight", o[2], p[2], "ms")
    o = await memory(ours_port, ours_pid)
    p = await memory(peer_port, peer_pid)
    row(f"RSS per session ({FLOOD} sessions)", o[0], p[0], "KiB")
    row(f"RSS with {FLOOD} sessions open", o[1], p[1], "MiB")
    row("RSS after they are closed", o[2], p[2], "MiB")


if __name__ == "__main__":
    asyncio.run(main())
