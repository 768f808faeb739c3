#!/usr/bin/env python3
"""A TCP proxy that can make one client's API server slow, or cut it off.

    fault_proxy.py LISTEN_PORT_FILE UPSTREAM_HOST:PORT SLOW_FILE [CUT_FILE]

Listens on a free 127.0.0.1 port (written to LISTEN_PORT_FILE) and forwards
bytes both ways to UPSTREAM. TLS passes through untouched (the client's
kubeconfig names 127.0.0.1, which the lab's serving certificate covers).

- While SLOW_FILE exists, every chunk is held for the number of seconds
  written in it before it is passed on, in order: the client just sees a
  slow server (the test of a leader whose renews outlast its deadline).
- While CUT_FILE exists, every open connection is reset (RST, as a dead
  middlebox or a restarted NAT does) and each new one is reset as soon as
  it is accepted: the client sees its API server unreachable while the
  server itself goes on (the fault tests: watches broken mid-burst).
"""
import asyncio
import os
import socket
import struct
import sys
import time


def delay(slow_file):
    try:
        with open(slow_file) as f:
            return float(f.read().strip() or 0)
    except (OSError, ValueError):
        return 0.0


def reset(writer):
    """Close with SO_LINGER 0: the peer gets an RST, not a clean FIN."""
    sock = writer.get_extra_info("socket")
    try:
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()
    except OSError:
        pass


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
    cut_file = sys.argv[4] if len(sys.argv) > 4 else None
    host, port = upstream.rsplit(":", 1)
    live = set()  # (client writer, upstream writer) of every open connection

    def is_cut():
        return cut_file is not None and os.path.exists(cut_file)

    async def handle(cr, cw):
        if is_cut():
            reset(cw)
            return
        try:
            ur, uw = await asyncio.open_connection(host, int(port))
        except OSError:
            cw.close()
            return
        pair = (cw, uw)
        live.add(pair)
        try:
            await asyncio.gather(pump(cr, uw, slow_file), pump(ur, cw, slow_file))
        finally:
            live.discard(pair)

    async def cutter():
        while True:
            if is_cut():
                for cw, uw in list(live):
                    reset(cw)
                    reset(uw)
            await asyncio.sleep(0.05)

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.sockets[0].getsockname()[1]))
    os.rename(tmp, port_file)
    async with server:
        await asyncio.gather(server.serve_forever(), cutter())


if __name__ == "__main__":
    asyncio.run(main())
