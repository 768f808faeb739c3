#!/usr/bin/env python3
"""A TCP proxy that can make one client's API server slow.

    slow_proxy.py LISTEN_PORT_FILE UPSTREAM_HOST:PORT SLOW_FILE

Listens on a free 127.0.0.1 port (written to LISTEN_PORT_FILE) and forwards
bytes both ways to UPSTREAM. While SLOW_FILE exists, every chunk is held
for the number of seconds written in it before it is passed on, in order:
TLS passes through untouched, the client just sees a slow server (for the
test of a leader whose renews take longer than its renew deadline).
"""
import asyncio
import os
import sys
import time


def delay(slow_file):
    try:
        with open(slow_file) as f:
            return float(f.read().strip() or 0)
    except (OSError, ValueError):
        return 0.0


async def pump(reader, writer, slow_file):
    # Chunks keep their order: each waits until its own arrival + delay.
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            due = time.monotonic() + delay(slow_file)
            now = time.monotonic()
            if due > now:
                await asyncio.sleep(due - now)
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        try:
            writer.close()
        except OSError:
            pass


async def main():
    port_file, upstream, slow_file = sys.argv[1:4]
    host, port = upstream.rsplit(":", 1)

    async def handle(cr, cw):
        try:
            ur, uw = await asyncio.open_connection(host, int(port))
        except OSError:
            cw.close()
            return
        await asyncio.gather(pump(cr, uw, slow_file), pump(ur, cw, slow_file))

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.sockets[0].getsockname()[1]))
    os.rename(tmp, port_file)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
