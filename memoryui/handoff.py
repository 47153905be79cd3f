"""Each new connection goes to the worker holding the fewest open ones.

With uvicorn's shared listening socket, whichever worker's loop wakes first accepts, and a
keep-alive connection stays with that worker for its life. Sixteen agents connecting at
once landed 8 / 3 / 1 / 4 on four workers (issue 15): one worker (and the CPU it keeps to)
did half the work while another idled, and an API bench round ran at 1,013 calls a second
against 1,350-1,480 in the others. Node's cluster module has its primary hand connections
out for the same reason.

Here the supervisor accepts (in a thread of its own, so that a slow health check of one
worker never holds up a connection) and passes the socket over a private socket pair to
the ready worker with the fewest open connections, the next one in turn on a tie. Each
worker says on that pair when it is ready (`+`) and each time a connection it holds closes
(`-`); its end closing (the worker died) takes it out of the turn. A worker adopts each
socket into its event loop (`Adopter`) as if its own server had accepted it.

Connections opened while only some workers were ready (right after a start: 16 on one
worker of four), or left uneven as others closed, would still stay where they are. So a
worker holding more than an even share is asked to shed the difference (`s<n>`): that
many of its next replies carry `Connection: close`, and their clients reconnect, which
lands them on the workers with the fewest. On the 2-core VM, 16 agents calling `recall`
over connections opened while one worker was ready: 297-340 calls a second as uvicorn
left them, 419-454 once spread.

Linux only (socket pairs that keep message boundaries, file descriptors passed between
processes); elsewhere, or with `MEMORYUI_SPREAD_CONNECTIONS=0`, the workers share the
listening socket as uvicorn has them do.
"""

from __future__ import annotations

import asyncio
import logging
import os
import select
import socket
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass

from starlette.types import Message, Send

from memoryui.store.threadnames import named

log = logging.getLogger("memoryui.serving")

READY, CLOSED, HANDED, SHED = b"+", b"-", b"c", b"s"
ACCEPT_PAUSE = 0.1  # seconds the supervisor waits after accept failed (no file descriptor left)


def supported() -> bool:
    """This system can pass connections between processes."""
    return sys.platform.startswith("linux") and hasattr(socket, "SOCK_SEQPACKET") \
        and hasattr(socket, "send_fds")


@dataclass(eq=False)
class Worker:
    """The supervisor's end of one worker's socket pair, and what it knows of the worker."""

    end: socket.socket
    ready: bool = False
    open: int = 0
    turn: int = 0  # when it was last handed a connection (ties go to the oldest)
    asked: int = 0  # connections it was last asked to shed


def excess(workers: list[Worker]) -> dict[int, int]:
    """How many connections each ready worker (by index) holds over an even share: the
    total over the ready workers, rounded up."""
    ready = [w for w in workers if w.ready]
    if not ready:
        return {}
    share = -(-sum(w.open for w in workers) // len(ready))
    return {i: max(0, w.open - share) for i, w in enumerate(workers) if w.ready}


def pick(workers: list[Worker]) -> Worker | None:
    """The ready worker with the fewest open connections; on a tie, the one handed a
    connection longest ago. None when no worker is ready."""
    ready = [w for w in workers if w.ready]
    return min(ready, key=lambda w: (w.open, w.turn)) if ready else None


class Dispatcher:
    """The supervisor's side: accepts on the listening socket and hands each connection on."""

    def __init__(self, listener: socket.socket, backlog: int = 2048) -> None:
        self.listener = listener
        self.backlog = backlog
        self.workers: list[Worker] = []
        self._turns = 0
        self._lock = threading.Lock()  # guards `workers` (the supervisor's thread adds)
        self._wake_r, self._wake_w = os.pipe()
        self._stop = False
        self._thread: threading.Thread | None = None

    def pair(self) -> socket.socket:
        """A new worker's end of its socket pair (the supervisor keeps the other)."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        ours.setblocking(False)
        with self._lock:
            self.workers.append(Worker(ours))
        self._wake()
        return theirs

    def start(self) -> None:
        self.listener.listen(self.backlog)  # (uvicorn's workers listen when they serve it)
        self.listener.setblocking(False)
        self._thread = threading.Thread(target=named(self._run), name="memoryui-handoff",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Accept no more connections (the backlog is left to the listening socket). The
        workers' ends stay open: a worker that sees its end close takes its supervisor for
        dead and stops, and these are about to be stopped gracefully."""
        self._stop = True
        self._wake()
        if self._thread is not None:
            self._thread.join()
        os.close(self._wake_r)
        os.close(self._wake_w)

    def _wake(self) -> None:
        try:
            os.write(self._wake_w, b"!")
        except (BlockingIOError, OSError):
            pass

    def _run(self) -> None:
        while not self._stop:
            try:
                self._round()
            except Exception:  # noqa: BLE001 - this thread is the server's only way in
                log.exception("handing out connections failed; trying again")
                _readable([self._wake_r], ACCEPT_PAUSE)

    def _round(self) -> None:
        """Wait for a worker's word or a connection, and act on it."""
        with self._lock:
            workers = list(self.workers)
        # Connections wait in the listening socket's backlog while no worker is ready.
        watch = [self._wake_r, *(w.end.fileno() for w in workers)]
        if pick(workers) is not None:
            watch.append(self.listener.fileno())
        readable = _readable(watch)
        if self._wake_r in readable:
            os.read(self._wake_r, 512)
        for worker in workers:
            if worker.end.fileno() in readable:
                self._hear(worker)
        if self.listener.fileno() in readable and not self._accept():
            _readable([self._wake_r], ACCEPT_PAUSE)
        self._even()

    def _even(self) -> None:
        """Ask each worker holding more than its share to shed the difference: it answers
        that many of its next replies with `Connection: close`, and each client reconnects
        (here, to the worker with the fewest). A keep-alive connection otherwise stays where
        it landed for its life: on the first worker ready after a start, say."""
        with self._lock:
            workers = list(self.workers)
        for i, over in excess(workers).items():
            worker = workers[i]
            if over != worker.asked:
                try:
                    worker.end.send(SHED + str(over).encode())
                    worker.asked = over
                except OSError:  # its queue is full or it is gone: asked again next time
                    pass

    def _hear(self, worker: Worker) -> None:
        """Read what a worker said; an end closed means the worker is gone."""
        while True:
            try:
                said = worker.end.recv(16)
            except BlockingIOError:
                return
            except OSError:
                said = b""
            if said == READY:
                worker.ready = True
            elif said == CLOSED:
                worker.open = max(0, worker.open - 1)
            elif not said:
                self._drop(worker)
                return

    def _drop(self, worker: Worker) -> None:
        with self._lock:
            if worker in self.workers:
                self.workers.remove(worker)
        worker.end.close()

    def _accept(self) -> bool:
        """Every connection waiting, each to the worker `pick` names. False when accepting
        failed (out of file descriptors): the caller pauses rather than spin."""
        while True:
            try:
                conn, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError, ConnectionAbortedError):
                return True
            except OSError as exc:
                log.warning("could not accept a connection: %s", exc)
                return False
            with conn:
                self._hand(conn)

    def _hand(self, conn: socket.socket) -> None:
        with self._lock:
            workers = list(self.workers)
        while (worker := pick(workers)) is not None:
            self._turns += 1
            worker.turn = self._turns
            try:
                socket.send_fds(worker.end, [HANDED], [conn.fileno()])
            except OSError:  # its queue is full, or it just died: the next one
                workers.remove(worker)
                continue
            worker.open += 1
            return
        log.warning("no worker could take a connection; it is closed")


class Adopter:
    """A worker's side: takes the connections its supervisor hands it into this loop."""

    def __init__(self, end: socket.socket) -> None:
        self.end = end
        self.on_gone: Callable[[], None] = lambda: None  # the supervisor went away
        self._loop: asyncio.AbstractEventLoop | None = None
        self._factory: Callable[[], asyncio.Protocol] | None = None
        self._tasks: set[asyncio.Task] = set()
        self.shed = 0  # connections to close after their next reply (the supervisor says)

    def start(self, factory: Callable[[], asyncio.Protocol]) -> None:
        """Begin adopting; `factory` makes the protocol of each connection."""
        global _adopter
        _adopter = self
        self._loop = asyncio.get_running_loop()
        self._factory = _counted(factory, self._closed)
        self.end.setblocking(False)
        self._loop.add_reader(self.end.fileno(), self._receive)
        self._say(READY)

    def stop(self) -> None:
        """Take no more: the supervisor sees this end close and hands to the others."""
        if self._loop is not None and self.end.fileno() >= 0:
            self._loop.remove_reader(self.end.fileno())
        self.end.close()

    def _say(self, what: bytes) -> None:
        try:
            self.end.send(what)
        except OSError:  # a full queue: the supervisor counts one connection too many
            pass  # here; a closed end: the supervisor is gone (`_receive` notices)

    def _closed(self) -> None:
        if self.end.fileno() >= 0:
            self._say(CLOSED)

    def _receive(self) -> None:
        assert self._loop is not None and self._factory is not None
        while True:
            try:
                message, fds, _flags, _addr = socket.recv_fds(self.end, 16, 4)
            except BlockingIOError:
                return
            except OSError:
                message, fds = b"", []
            if message.startswith(SHED) and message[1:].isdigit():
                self.shed = int(message[1:])
            elif not message and not fds:
                log.warning("the supervisor is gone: worker %s takes no more connections",
                            os.getpid())
                self.stop()
                self.on_gone()
                return
            for fd in fds:
                self._adopt(fd)

    def _adopt(self, fd: int) -> None:
        assert self._loop is not None and self._factory is not None
        try:
            conn = socket.socket(fileno=fd)
        except OSError:  # not a socket: nothing the supervisor sends
            os.close(fd)
            return
        if conn.type != socket.SOCK_STREAM:
            conn.close()
            return
        conn.setblocking(False)
        task = self._loop.create_task(self._connect(conn))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _connect(self, conn: socket.socket) -> None:
        assert self._loop is not None and self._factory is not None
        try:
            await self._loop.connect_accepted_socket(self._factory, conn)
        except OSError as exc:  # reset before it was adopted
            log.debug("a handed connection was lost before use: %s", exc)
            conn.close()
            self._closed()


def _readable(fds: list[int], timeout: float | None = None) -> set[int]:
    """Which of `fds` can be read, waiting up to `timeout` seconds (None: until one can).
    `poll`, not `select`: a process may hold over 1,024 descriptors."""
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)
    return {fd for fd, _ in poller.poll(None if timeout is None else timeout * 1000)}


_adopter: Adopter | None = None  # this worker's, once it serves


def closing(send: Send) -> Send:
    """`send`, with `Connection: close` added to the reply when this worker was asked to
    shed a connection (one reply per connection to shed)."""
    adopter = _adopter
    if adopter is None or adopter.shed <= 0:
        return send

    async def closing_send(message: Message) -> None:
        if message["type"] == "http.response.start" and adopter.shed > 0:
            adopter.shed -= 1
            message = {**message, "headers": [*message.get("headers", ()),
                                              (b"connection", b"close")]}
        await send(message)

    return closing_send


def _counted(factory: Callable[[], asyncio.Protocol], closed: Callable[[], None]
             ) -> Callable[[], asyncio.Protocol]:
    """`factory`'s protocols, each calling `closed` once its connection is lost."""

    def make() -> asyncio.Protocol:
        protocol = factory()
        lost = protocol.connection_lost

        def connection_lost(exc: Exception | None) -> None:
            try:
                lost(exc)
            finally:
                closed()

        protocol.connection_lost = connection_lost  # type: ignore[method-assign]
        return protocol

    return make
