"""`serve`'s supervisor hands each connection to the worker holding the fewest, and asks a
worker holding more than its share to move some on: agents' keep-alive connections end up
spread over the workers, whenever they connected."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest
from django.test import override_settings

from memoryui import handoff, serving
from tests.api.realserver import RealServer

DEADLINE = 120.0  # bounds a hang only: CI is a loaded 2-core machine

pytestmark = pytest.mark.skipif(not handoff.supported(), reason="Linux passes connections")


def _worker(ready: bool = True, open_: int = 0, turn: int = 0) -> handoff.Worker:
    return handoff.Worker(end=None, ready=ready, open=open_, turn=turn)  # type: ignore[arg-type]


def test_a_connection_goes_to_the_ready_worker_with_the_fewest_then_the_longest_unused():
    busy, idle, starting = _worker(open_=3), _worker(open_=1, turn=5), _worker(False)
    assert handoff.pick([busy, idle, starting]) is idle
    older = _worker(open_=1, turn=2)
    assert handoff.pick([busy, idle, older]) is older
    assert handoff.pick([starting]) is None  # none ready: connections wait in the backlog


def test_a_worker_over_an_even_share_is_asked_to_shed_the_difference():
    workers = [_worker(open_=16), _worker(), _worker(), _worker(False)]
    assert handoff.excess(workers) == {0: 10, 1: 0, 2: 0}  # 16 over 3 ready: 6 each
    assert handoff.excess([_worker(open_=5), _worker(open_=4)]) == {0: 0, 1: 0}


class FakeWorker:
    """A worker's end of its pair, driven by the test: says what a worker says, keeps what
    it is handed (blocking reads: the supervisor's thread answers in its own time)."""

    def __init__(self, dispatcher: handoff.Dispatcher) -> None:
        self.end = dispatcher.pair()
        self.end.settimeout(DEADLINE)
        self.held: list[socket.socket] = []

    def say(self, what: bytes) -> None:
        self.end.send(what)

    def take(self) -> socket.socket:
        """The next connection handed here (shed requests before it are skipped)."""
        while True:
            message, fds, _, _ = socket.recv_fds(self.end, 16, 1)
            if fds:
                self.held.append(socket.socket(fileno=fds[0]))
                return self.held[-1]
            assert message.startswith(handoff.SHED), message

    def asked(self) -> int:
        message = self.end.recv(16)
        assert message.startswith(handoff.SHED), message
        return int(message[1:])

    def close_one(self) -> None:
        self.held.pop().close()
        self.say(handoff.CLOSED)


@pytest.fixture
def dispatcher():
    listener = socket.create_server(("127.0.0.1", 0))
    d = handoff.Dispatcher(listener)
    d.start()
    yield d
    d.stop()
    listener.close()


def _connect(dispatcher: handoff.Dispatcher) -> socket.socket:
    return socket.create_connection(dispatcher.listener.getsockname(), timeout=DEADLINE)


def test_connections_go_round_the_ready_workers_and_refill_the_one_that_lost_some(dispatcher):
    a, b = FakeWorker(dispatcher), FakeWorker(dispatcher)
    a.say(handoff.READY)
    b.say(handoff.READY)
    clients = []
    for worker in (a, b, a, b):  # fewest first, then the one handed a connection longest ago
        clients.append(_connect(dispatcher))
        served = worker.take()
        clients[-1].sendall(b"ping")
        assert served.recv(4) == b"ping"  # the very connection the client opened
    a.close_one()
    a.close_one()
    clients.append(_connect(dispatcher))
    a.take()  # a holds none now: the new one is a's, though b was handed one last
    for client in clients:
        client.close()


def test_a_listening_socket_numbered_over_1024_is_served(tmp_path: Path):
    """A process may hold more than 1,024 descriptors (`select` refuses those)."""
    import resource

    if resource.getrlimit(resource.RLIMIT_NOFILE)[0] <= HIGH_FD:
        pytest.skip("this process may not hold that many descriptors")
    low = socket.create_server(("127.0.0.1", 0))
    os.dup2(low.fileno(), HIGH_FD)
    low.close()
    d = handoff.Dispatcher(socket.socket(fileno=HIGH_FD))
    d.start()
    try:
        worker = FakeWorker(d)
        worker.say(handoff.READY)
        with _connect(d):
            worker.take()
    finally:
        d.stop()
        d.listener.close()


HIGH_FD = 1500


def test_a_failed_round_is_logged_and_connections_are_still_handed_out(dispatcher, caplog,
                                                                      monkeypatch):
    """The supervisor's thread is the server's only way in: an error must not end it."""
    failed = []
    even = dispatcher._even

    def even_once_failing() -> None:
        if not failed:
            failed.append(True)
            raise RuntimeError("a bad round")
        even()

    monkeypatch.setattr(dispatcher, "_even", even_once_failing)
    worker = FakeWorker(dispatcher)
    worker.say(handoff.READY)
    with caplog.at_level("ERROR", logger="memoryui.serving"), _connect(dispatcher):
        worker.take()
    assert failed
    assert any(r.exc_info and "a bad round" in str(r.exc_info[1]) for r in caplog.records)


def test_a_worker_ready_late_makes_the_first_shed_its_excess(dispatcher):
    first, late = FakeWorker(dispatcher), FakeWorker(dispatcher)
    first.say(handoff.READY)
    clients = [_connect(dispatcher) for _ in range(4)]
    for _ in clients:
        first.take()  # the only one ready takes all four
    late.say(handoff.READY)
    assert first.asked() == 2  # an even share is 2 of 4
    first.close_one()
    assert first.asked() == 1  # 3 held, share 2 (rounded up from 1.5)
    for client in clients:
        client.close()


def test_a_worker_asked_to_shed_closes_that_many_replies():
    """`closing` adds `Connection: close` to one reply per connection to shed."""
    adopter = handoff.Adopter(socket.socket())
    adopter.shed = 1
    handoff._adopter, before = adopter, handoff._adopter
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    def reply() -> None:
        """One reply's start through `closing` (nothing in it waits: driven without a loop,
        as the suite may run inside one)."""
        with pytest.raises(StopIteration):
            handoff.closing(send)({"type": "http.response.start", "status": 200,
                                   "headers": [(b"content-type", b"text/plain")]}).send(None)

    try:
        reply()
        reply()
    finally:
        handoff._adopter = before
        adopter.end.close()
    assert (b"connection", b"close") in sent[0]["headers"]
    assert (b"connection", b"close") not in sent[1]["headers"]
    assert adopter.shed == 0


def test_the_setting_leaves_the_workers_sharing_the_listening_socket():
    sock = socket.create_server(("127.0.0.1", 0))
    try:
        with override_settings(MEMORYUI_SPREAD_CONNECTIONS=True):
            assert serving.spread([sock])
        with override_settings(MEMORYUI_SPREAD_CONNECTIONS=False):
            assert not serving.spread([sock])
    finally:
        sock.close()


def _held(port: int, pids: set[int]) -> dict[int, int]:
    """How many established connections to `port` each process holds (from /proc)."""
    established = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if int(fields[1].split(":")[1], 16) == port and fields[3] == "01":
            established.add(fields[9])
    held = {}
    for pid in pids:
        inodes = set()
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                link = os.readlink(fd)
            except OSError:
                continue
            if link.startswith("socket:["):
                inodes.add(link[8:-1])
        held[pid] = len(inodes & established)
    return held


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads the socket table")
def test_agents_connections_end_up_spread_over_the_workers(tmp_path: Path) -> None:
    """Eight keep-alive connections, whichever workers were ready when they opened, end up
    four and four on two workers while they are used, and no call fails on the way."""
    server = RealServer(tmp_path, workers=2)
    server.migrate()
    with server:
        server.start(timeout=DEADLINE)
        token = server.token("billing-01")
        conns = [server.connection() for _ in range(8)]
        try:
            deadline = time.monotonic() + DEADLINE
            held: dict[int, int] = {}
            calls = 0
            while time.monotonic() < deadline and sorted(held.values()) != [4, 4]:
                for conn in conns:  # a round of real calls paces each look
                    status, body = server.call_tool(token, "billing-01", "recall", {},
                                                    conn=conn)
                    assert status == 200, body
                    calls += 1
                held = _held(server.port, server.worker_pids())
            assert sorted(held.values()) == [4, 4], held
            assert len(held) == 2
        finally:
            for conn in conns:
                conn.close()
