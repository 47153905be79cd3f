"""`git http-backend` as a CGI subprocess, with both bodies streamed through pipes.

The request body goes to git's stdin chunk by chunk as the server receives it (each write
waits for the pipe to drain), and git's output goes out chunk by chunk as git writes it:
a push of any size never sits whole in the server's memory. git inflates a gzip request
body itself (`HTTP_CONTENT_ENCODING`). When the client goes away, git is stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from starlette.types import Receive, Send

log = logging.getLogger("memoryui.gitserve")

CHUNK = 64 * 1024
MAX_HEADER_BYTES = 64 * 1024


async def _feed(proc: asyncio.subprocess.Process, receive: Receive,
                gone: asyncio.Event) -> None:
    """The request body into git's stdin; sets `gone` when the client disconnects."""
    assert proc.stdin is not None
    try:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                gone.set()
                return
            body = message.get("body", b"")
            if body:
                proc.stdin.write(body)
                await proc.stdin.drain()
            if not message.get("more_body", False):
                break
    except (BrokenPipeError, ConnectionResetError):
        pass  # git stopped reading (it refused the request): its answer says why
    finally:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError, OSError):
            proc.stdin.close()


async def _headers(stdout: asyncio.StreamReader) -> tuple[int, list[tuple[bytes, bytes]]]:
    """The CGI header block: the status and the headers to send."""
    status, headers = 200, list[tuple[bytes, bytes]]()
    size = 0
    while True:
        line = await stdout.readline()
        size += len(line)
        if not line or size > MAX_HEADER_BYTES:
            raise ValueError("git http-backend sent no complete header")
        line = line.rstrip(b"\r\n")
        if not line:
            return status, headers
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"status":
            status = int(value.strip().split(b" ", 1)[0])
        else:
            headers.append((name.strip().lower(), value.strip()))


async def run_cgi(env: dict[str, str], receive: Receive, send: Send,
                  done: Callable[[int], Awaitable[None]] | None = None) -> None:
    """Run `git http-backend` for one request and stream its answer."""
    proc = await asyncio.create_subprocess_exec(
        "git", "http-backend", env=env, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, limit=CHUNK)
    assert proc.stdout is not None and proc.stderr is not None
    gone = asyncio.Event()
    feeding = asyncio.create_task(_feed(proc, receive, gone))
    errors = asyncio.create_task(proc.stderr.read())
    started = False
    try:
        status, headers = await _headers(proc.stdout)
        await send({"type": "http.response.start", "status": status,
                    "headers": headers + [(b"cache-control", b"no-cache")]
                    if not any(k == b"cache-control" for k, _ in headers) else headers})
        started = True
        while True:
            chunk = await proc.stdout.read(CHUNK)
            if not chunk:
                break
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await feeding
        code = await proc.wait()
        if done is not None:
            await done(code)
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    except (OSError, ValueError, asyncio.CancelledError) as exc:
        if not isinstance(exc, asyncio.CancelledError):
            log.warning("git http-backend failed: %s", exc)
        if proc.returncode is None:
            proc.terminate()  # git cleans its quarantine on SIGTERM
        if not started and not gone.is_set() and not isinstance(exc, asyncio.CancelledError):
            await send({"type": "http.response.start", "status": 502,
                        "headers": [(b"content-type", b"text/plain; charset=utf-8")]})
            await send({"type": "http.response.body",
                        "body": b"git could not answer this request; see the server log\n"})
        if isinstance(exc, asyncio.CancelledError):
            raise
    finally:
        feeding.cancel()
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
            await proc.wait()
        stderr = (await errors).decode("utf-8", "replace").strip()
        if stderr:
            log.info("git http-backend: %s", stderr[-2000:])
