"""The memory rows of load.py against one server alone, with a second flood to show
whether the memory of closed sessions is reused or given back. Loopback only.

    python flood.py PORT PID [SESSIONS [IDLE_SECONDS]]

prints the server's VmRSS before, with SESSIONS sessions open (and per session), after
they are all closed with DELETE, and with a second flood of SESSIONS open and closed.
With IDLE_SECONDS (the server's idle session timeout), a third flood is left open, never
closed, and the RSS is read again once the timeout has passed and the sessions expired."""

import asyncio
import sys

from load import Session, rss_kib


async def flood(port, count):
    sessions = []
    for start in range(0, count, 100):
        batch = [Session(port) for _ in range(min(100, count - start))]
        await asyncio.gather(*(s.open() for s in batch))
        for s in batch:
            s.connection.close()
        sessions.extend(batch)
    return sessions


async def close(sessions):
    for start in range(0, len(sessions), 100):
        await asyncio.gather(*(s.delete() for s in sessions[start:start + 100]))


async def main():
    port, pid = int(sys.argv[1]), int(sys.argv[2])
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    idle = float(sys.argv[4]) if len(sys.argv) > 4 else None
    # A warm-up session, so one-time allocations are not counted per session.
    await close(await flood(port, 1))
    await asyncio.sleep(0.5)
    before = rss_kib(pid)
    sessions = await flood(port, count)
    await asyncio.sleep(0.5)
    flooded = rss_kib(pid)
    await close(sessions)
    await asyncio.sleep(1.0)
    closed = rss_kib(pid)
    await close(await flood(port, count))
    await asyncio.sleep(1.0)
    again = rss_kib(pid)
    print(f"RSS before: {before / 1024:.1f} MiB")
    print(f"RSS with {count} sessions open: {flooded / 1024:.1f} MiB "
          f"({(flooded - before) / count:.1f} KiB per session)")
    print(f"RSS after they are closed: {closed / 1024:.1f} MiB")
    print(f"RSS after a second flood, closed: {again / 1024:.1f} MiB")
    if idle is not None:
        await flood(port, count)
        opened = rss_kib(pid)
        # The timeout runs from each session's last request, the last of them at the
        # flood's end; the trim follows within two seconds.
        await asyncio.sleep(idle + 3.0)
        expired = rss_kib(pid)
        print(f"RSS with a third flood of {count} open, never closed: {opened / 1024:.1f} MiB")
        print(f"RSS after they expired ({idle:g} s idle): {expired / 1024:.1f} MiB")


if __name__ == "__main__":
    asyncio.run(main())
