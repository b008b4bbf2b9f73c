#!/usr/bin/env python3
"""A fault-injecting HTTP/1.1 proxy for the remote tests, on loopback only.

    fault_proxy.py UPSTREAM_PORT

Listens on 127.0.0.1 (a free port), prints {"port": N} on stdout once it serves, and forwards each
request to 127.0.0.1:UPSTREAM_PORT, injecting the fault the current mode picks:

    none      forward as it is
    drop      close the connection without answering
    503, 429  answer that status (429 with Retry-After: 1)
    stall     send the headers and half the body, then nothing (the client must give up on its own)
    truncate  send the headers (full Content-Length) and half the body, then close
    badrange  shift Content-Range by one byte (same length), or change its total
    flip      flip one byte of the body (only the image's own checksums can catch that)
    mixed     one of drop, 503, 429, stall, truncate, badrange, at random
    delay     answer correctly after a pause of D milliseconds (a distant server)

Control requests (never forwarded):
    GET /__proxy/set?mode=M&p=P&n=N&seed=S&d=D   fault mode, probability per request (default 1), at
                                            most N faults (default unlimited), random seed, delay in ms
    GET /__proxy/stats                      {"requests": ..., "forwarded": ..., "faults": {...},
                                             "ranges": [...]} (the Range header of every request)
    GET /__proxy/reset                      zero the counters
"""
import asyncio
import json
import random
import sys
from urllib.parse import parse_qs, urlsplit

FAULTS = ["drop", "503", "429", "stall", "truncate", "badrange"]


class State:
    def __init__(self):
        self.mode = "none"
        self.p = 1.0
        self.left = -1  # faults still allowed; -1 = no limit
        self.rng = random.Random(1)
        self.delay_ms = 0
        self.reset()

    def reset(self):
        self.requests = 0
        self.forwarded = 0
        self.faults = {}
        self.ranges = []

    def pick(self):
        if self.mode == "none" or self.left == 0 or self.rng.random() >= self.p:
            return "none"
        if self.left > 0:
            self.left -= 1
        fault = self.rng.choice(FAULTS) if self.mode == "mixed" else self.mode
        self.faults[fault] = self.faults.get(fault, 0) + 1
        return fault


STATE = State()


def response(status, reason, body=b"", extra=()):
    head = [f"HTTP/1.1 {status} {reason}", f"Content-Length: {len(body)}",
            "Content-Type: application/json"] + list(extra)
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def control(target):
    url = urlsplit(target)
    q = {k: v[-1] for k, v in parse_qs(url.query).items()}
    if url.path == "/__proxy/set":
        STATE.mode = q.get("mode", "none")
        STATE.p = float(q.get("p", "1"))
        STATE.left = int(q.get("n", "-1"))
        STATE.rng = random.Random(int(q.get("seed", "1")))
        STATE.delay_ms = int(q.get("d", "0"))
        return response(200, "OK", b"{}")
    if url.path == "/__proxy/reset":
        STATE.reset()
        return response(200, "OK", b"{}")
    if url.path == "/__proxy/stats":
        body = json.dumps({"requests": STATE.requests, "forwarded": STATE.forwarded,
                           "faults": STATE.faults, "ranges": STATE.ranges}).encode()
        return response(200, "OK", body)
    return response(404, "Not Found")


def dechunk(data):
    out = bytearray()
    while True:
        line, _, data = data.partition(b"\r\n")
        size = int(line.split(b";")[0], 16)
        if size == 0:
            return bytes(out)
        out += data[:size]
        data = data[size + 2:]


async def forward(upstream, request_line, headers):
    ur, uw = await asyncio.open_connection("127.0.0.1", upstream)
    try:
        lines = [request_line] + [h for h in headers if not h.lower().startswith("connection:")]
        lines.append("Connection: close")
        uw.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        await uw.drain()
        raw = await ur.read()  # to EOF: Connection: close
    finally:
        uw.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    head_lines = head.decode("latin-1").split("\r\n")
    status_line, resp_headers = head_lines[0], head_lines[1:]
    head_only = request_line.split(" ", 1)[0] == "HEAD"
    if not head_only and any(h.lower().startswith("transfer-encoding:") and "chunked" in h.lower()
                             for h in resp_headers):
        body = dechunk(body)
    # A HEAD answer has no body but keeps the Content-Length a GET would have: keep nginx's.
    drop = ("transfer-encoding:", "connection:") if head_only else (
        "transfer-encoding:", "content-length:", "connection:")
    resp_headers = [h for h in resp_headers if not h.lower().startswith(drop)]
    return status_line, resp_headers, body


def serialize(status_line, headers, body, content_length=None):
    n = len(body) if content_length is None else content_length
    lines = [status_line] + headers
    if not any(h.lower().startswith("content-length:") for h in headers):  # HEAD keeps its own
        lines.append(f"Content-Length: {n}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def shift_range(headers, rng):
    out = []
    for h in headers:
        if h.lower().startswith("content-range:"):
            value = h.split(":", 1)[1].strip()
            unit, _, spec = value.partition(" ")
            span, _, total = spec.partition("/")
            first, _, last = span.partition("-")
            if rng.random() < 0.5:
                value = f"{unit} {int(first) + 1}-{int(last) + 1}/{total}"
            else:
                value = f"{unit} {first}-{last}/{int(total) + 4096}"
            h = "Content-Range: " + value
        out.append(h)
    return out


async def handle(reader, writer, upstream):
    try:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                return
            lines = head.decode("latin-1").split("\r\n")
            request_line = lines[0]
            headers = [h for h in lines[1:] if h]
            parts = request_line.split(" ")
            if len(parts) != 3:
                return
            target = parts[1]
            if target.startswith("/__proxy/"):
                writer.write(control(target))
                await writer.drain()
                continue
            STATE.requests += 1
            rng = next((h.split(":", 1)[1].strip() for h in headers if h.lower().startswith("range:")), "")
            STATE.ranges.append(rng)
            fault = STATE.pick()
            if fault == "drop":
                return
            if fault in ("503", "429"):
                extra = ["Retry-After: 1"] if fault == "429" else []
                writer.write(response(int(fault), "Injected", b"", extra))
                await writer.drain()
                continue
            if fault == "delay":
                await asyncio.sleep(STATE.delay_ms / 1000)
            status_line, resp_headers, body = await forward(upstream, request_line, headers)
            STATE.forwarded += 1
            if fault in ("stall", "truncate") and len(body) >= 2:
                writer.write(serialize(status_line, resp_headers, body) + body[: len(body) // 2])
                await writer.drain()
                if fault == "stall":
                    await asyncio.sleep(60)
                return
            if fault == "badrange":
                resp_headers = shift_range(resp_headers, STATE.rng)
            if fault == "flip" and body:
                i = STATE.rng.randrange(len(body))
                body = body[:i] + bytes([body[i] ^ 0x20]) + body[i + 1:]
            writer.write(serialize(status_line, resp_headers, body) + body)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def main():
    upstream = int(sys.argv[1])
    server = await asyncio.start_server(lambda r, w: handle(r, w, upstream), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    print(json.dumps({"port": port}), flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
