"""uvicorn's process model, without waking ten times a second when nothing happens.

Measured on an idle server (issue 15, README "Cost that grows with change"): of its CPU,
two fifths were uvicorn's own timers, not memoryui. Each worker's main loop woke every
0.1 s (to refresh the `Date` header once a second and to look at its exit flag), and the
supervisor woke every 0.5 s to ping every worker over a pipe, which woke a thread in each.
On a small VM a wakeup costs about 0.3 ms of CPU. Here:

- a worker's loop wakes once a second (the `Date` header still changes every second) and
  at once when a signal asks it to stop (`QuietServer`);
- the supervisor checks its workers every HEALTH_EVERY seconds, and at once when a signal
  arrives: SIGTERM/SIGINT, or SIGCHLD when a worker dies, so a dead worker is replaced
  as quickly as before (`QuietMultiprocess`).

Each worker also keeps to one CPU (`MEMORYUI_PIN_WORKERS`, on by default where there are
two or more): its event loop and request threads hand Python's GIL to each other at every
system call, and between two cores each hand-over is a cross-core wakeup. Measured on the
2-core VM (issue 15): four busy threads of one process spent 1.3x (an agent's `remember`)
to 2x (`/healthz`) the CPU per call of one thread, and no more than one once kept to one
core; over HTTP with 4 workers, 15-30 % more `remember` calls a second. A dead worker's
replacement takes the CPU with the fewest live workers. Only the loop and the request
threads keep to it: a worker's background threads and the programs it starts (git) may
run on any CPU (`store/affinity.py`), and so may the supervisor, which commits, indexes
and runs git's housekeeping. While the workers are busy the supervisor moves one from a
CPU whose workers do more to one whose workers do less (`cpubalance.py`).

Everything else is uvicorn's: its `Server` and `Multiprocess` classes, with these
loops replaced. A uvicorn whose supervisor differs from the one this was written against
(0.54) is run as it is (`run`).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import select
import signal
import socket
import sys
import time
from collections.abc import Callable
from types import FrameType

import uvicorn
from uvicorn.config import STARTUP_FAILURE
from uvicorn.supervisors import multiprocess

from memoryui import cpubalance, handoff
from memoryui.store import affinity

log = logging.getLogger("memoryui.serving")

TICK = 1.0  # seconds between a worker's main-loop ticks (uvicorn: 0.1)
HEALTH_EVERY = 5.0  # seconds between the supervisor's pings of its workers (uvicorn: 0.5)


class QuietServer(uvicorn.Server):
    """uvicorn's worker server, ticking once a second; a stop signal wakes it at once.

    With an `adopter` it has no listening socket: it serves the connections its supervisor
    hands it (`handoff.py`)."""

    adopter: handoff.Adopter | None = None

    async def startup(self, sockets: list | None = None) -> None:
        if self.adopter is None:
            await super().startup(sockets)
            return
        await super().startup(sockets=[])  # the lifespan, and no listener of its own
        config = self.config
        self.adopter.on_gone = functools.partial(setattr, self, "should_exit", True)
        self.adopter.start(functools.partial(
            config.http_protocol_class, config=config, server_state=self.server_state,
            app_state=self.lifespan.state))

    async def shutdown(self, sockets: list | None = None) -> None:
        if self.adopter is not None:
            self.adopter.stop()
        await super().shutdown(sockets)

    async def main_loop(self) -> None:
        loop = self._loop = asyncio.get_running_loop()
        counter = 0  # uvicorn refreshes the Date header when counter % 10 == 0: every tick
        should_exit = await self.on_tick(counter)
        while not should_exit:
            # A bare future and a timer: `asyncio.wait_for` made a task at every tick and
            # cost four times as much CPU as the wait itself.
            self._ticker = loop.create_future()
            timer = loop.call_later(TICK, _wake, self._ticker)
            await self._ticker
            timer.cancel()
            should_exit = await self.on_tick(counter)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        loop, tick = getattr(self, "_loop", None), getattr(self, "_ticker", None)
        if loop is not None and tick is not None and not loop.is_closed():
            loop.call_soon_threadsafe(_wake, tick)


def _wake(tick: asyncio.Future) -> None:
    if not tick.done():
        tick.set_result(None)


def pick_cpu(allowed: list[int], taken: list[int]) -> int:
    """The allowed CPU the fewest live workers keep to (the first of those on a tie)."""
    return min(allowed, key=lambda cpu: (taken.count(cpu), allowed.index(cpu)))


def cpus_to_pin() -> list[int]:
    """The CPUs workers are spread over, in the order they are handed out: the ones this
    process may use, starting at one its pid picks (so that several servers on one host,
    or containers that all see the host's CPUs, do not all start at CPU 0). Empty (no
    pinning) when there is only one, when this system cannot pin, or when
    MEMORYUI_PIN_WORKERS is off."""
    from django.conf import settings

    if not settings.MEMORYUI_PIN_WORKERS or not hasattr(os, "sched_setaffinity"):
        return []
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        return []
    start = os.getpid() % len(allowed)
    return allowed[start:] + allowed[:start]


class QuietProcess(multiprocess.Process):
    """A worker process whose server is a QuietServer, kept to the CPU its supervisor
    picked (`placer`, set by QuietMultiprocess; None: not pinned), and served the
    connections its supervisor hands it (`dispatcher`; None: it accepts them itself)."""

    placer: Callable[[], int | None] | None = None
    dispatcher: handoff.Dispatcher | None = None

    def __init__(self, config: uvicorn.Config, sockets: list) -> None:
        self.handed = QuietProcess.dispatcher is not None
        self._end = QuietProcess.dispatcher.pair() if QuietProcess.dispatcher else None
        super().__init__(config, [self._end] if self._end else sockets)
        self.cpu = QuietProcess.placer() if QuietProcess.placer else None

    def __getstate__(self) -> dict:
        """What goes to the worker: its end of the pair goes as its `sockets`, once."""
        return {**self.__dict__, "_end": None}

    def start(self) -> None:
        super().start()
        if self._end is not None:  # the worker has its own copy now
            self._end.close()

    def target(self, sockets: list | None = None) -> None:  # in the worker, before its threads
        if self.cpu is not None:
            try:
                affinity.keep_to(self.cpu)
            except OSError as exc:  # a CPU taken away since (cgroups): run anywhere
                log.warning("worker %s not kept to CPU %s: %s", os.getpid(), self.cpu, exc)
        if self.handed and sockets:
            self.server.adopter = handoff.Adopter(sockets[0])
            sockets = None
        super().target(sockets)

    @property
    def server(self) -> uvicorn.Server:
        if self._server is None:
            self._server = QuietServer(config=self.config)
        return self._server


class QuietMultiprocess(multiprocess.Multiprocess):
    """uvicorn's supervisor, checking its workers every HEALTH_EVERY seconds instead of
    twice a second, and woken by any signal it handles or by a child's exit.

    The signal handler only writes a byte to a pipe the loop waits on: a handler runs in
    the main thread between two bytecodes, possibly while that thread holds a lock (an
    Event's), so it must not take one."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.cpus = cpus_to_pin()
        QuietProcess.placer = self._place if self.cpus else None
        self.balancer = cpubalance.Balancer(self.cpus) if self.cpus else None
        self.dispatcher = handoff.Dispatcher(self.sockets[0], self.config.backlog) if spread(self.sockets) else None
        QuietProcess.dispatcher = self.dispatcher
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        for sig in (*multiprocess.SIGNALS, signal.SIGCHLD):
            signal.signal(sig, self._on_signal)

    def _on_signal(self, sig: int, frame: FrameType | None) -> None:
        if sig != signal.SIGCHLD:
            self.signal_queue.append(sig)
        try:
            os.write(self._wake_w, b"!")
        except BlockingIOError:
            pass  # the pipe is full: the loop is woken anyway

    def _place(self) -> int:
        """A new worker's CPU: the live workers' are counted (a dead one's is free)."""
        taken = [p.cpu for p in self.processes
                 if getattr(p, "cpu", None) is not None and p.process.is_alive()]
        return pick_cpu(self.cpus, taken)

    def _balance(self) -> None:
        """Move a worker to the other CPU when the CPUs' workers are uneven (cpubalance)."""
        if self.balancer is None:
            return
        placed = {p.pid: p.cpu for p in self.processes
                  if getattr(p, "cpu", None) is not None and p.pid is not None}
        moved = self.balancer.look(placed, time.monotonic())
        if moved is not None:
            pid, cpu = moved
            for p in self.processes:
                if p.pid == pid:
                    p.cpu = cpu  # (a replacement counts it where it is now)
            log.debug("worker %s moved to CPU %s", pid, cpu)

    def _wait(self) -> None:
        """Until a signal came or HEALTH_EVERY seconds passed (BALANCE_EVERY while the
        workers are busy); what woke it is read out."""
        busy = self.balancer is not None and self.balancer.busy
        select.select([self._wake_r], [], [], cpubalance.BALANCE_EVERY if busy else HEALTH_EVERY)
        try:
            while os.read(self._wake_r, 512):
                pass
        except BlockingIOError:
            pass

    def run(self) -> None:
        log.info("started parent process, checking workers every %.0f s%s", HEALTH_EVERY,
                 ", handing connections out" if self.dispatcher else "")
        if self.dispatcher is not None:
            self.dispatcher.start()
        self.init_processes()
        while not self.should_exit.is_set():
            self._wait()
            self.handle_signals()
            self.keep_subprocess_alive()
            self._balance()
        if self.dispatcher is not None:
            self.dispatcher.stop()  # before the workers go: none is handed a connection late
        self.terminate_all()
        self.join_all()
        log.info("stopping parent process")


def spread(sockets: list) -> bool:
    """The supervisor hands connections out (MEMORYUI_SPREAD_CONNECTIONS, on a system that
    can, listening on one TCP socket)."""
    from django.conf import settings

    return settings.MEMORYUI_SPREAD_CONNECTIONS and handoff.supported() and len(sockets) == 1 \
        and sockets[0].family in (socket.AF_INET, socket.AF_INET6)


def _fits() -> bool:
    """This uvicorn's supervisor is the one these classes extend."""
    return all(hasattr(multiprocess, name) for name in ("Process", "Multiprocess", "SIGNALS")) \
        and isinstance(getattr(multiprocess.Process, "server", None), property) \
        and all(hasattr(multiprocess.Multiprocess, m)
                for m in ("init_processes", "handle_signals", "keep_subprocess_alive",
                          "terminate_all", "join_all"))


def run(app: str, *, host: str, port: int, workers: int, log_level: str) -> None:
    """Serve `app` (an import string) as `uvicorn.run` would, with the quiet loops."""
    options = dict(host=host, port=port, workers=workers, log_level=log_level,
                   lifespan="auto", proxy_headers=False)
    if not _fits():
        log.warning("uvicorn %s: its own process loops are used", uvicorn.__version__)
        uvicorn.run(app, **options)
        return
    config = uvicorn.Config(app, **options)
    if workers > 1:
        # uvicorn's supervisor makes its workers through this module's `Process` (start,
        # restart after a death, reload): in this process, that is the quiet one.
        multiprocess.Process = QuietProcess
        sock = config.bind_socket()
        try:
            QuietMultiprocess(config, sockets=[sock]).run()
        except KeyboardInterrupt:
            pass
    else:
        server = QuietServer(config)
        try:
            server.run()
        except KeyboardInterrupt:
            pass
        if not server.started:
            sys.exit(STARTUP_FAILURE)
