"""The pool's scheduler: every slot busy, items pinned to an endpoint, faults retried.

- Every request of an item goes to one endpoint, and the item stays there across stages
  (`ServerPoolBackend.pins`), so its prompt is in that server's prefix cache when the
  F-block continues its chain. New items go to the endpoint with the least queued work per
  slot.
- Each endpoint runs as many requests at once as it has slots (`/props` `total_slots`,
  or `--server-concurrency`).
- An idle endpoint takes over whole items waiting on another: all of a dropped endpoint's,
  or the last waiting item of one that has more than one.
- A 4xx fails that request only (stored as status 'error', retried by the next run). A
  refused connection, time-out or 5xx drops the endpoint: its request goes back to the
  front of its item, the item moves to the least busy live endpoint that has not failed
  that request (else it waits for this one), and the endpoint is probed with back-off
  (1 s, 2 s, … 30 s) and re-admitted when it answers as the same kind, build and model. A
  request that failed `RETRIES` times is stored as an error naming how many endpoints and
  attempts. A line is reported when an endpoint is
  dropped or comes back.
- If every endpoint has been down for longer than the time-out, the run stops with
  `PoolDown`: nothing more is stored, the work left stays pending for the next run.

Rows are stored by the calling thread only, once per key.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from store.errors import UserError
from store.generations import NewGeneration
from workbench.models.endpoint import EndpointDown, RequestRefused, health, probe
from workbench.models.events import PoolNotice

RETRIES = 3
"""Attempts at a request before it is stored as an error (each on another live endpoint
where there is one that has not failed it)."""

BACKOFF_S = (1.0, 2.0, 4.0, 8.0, 16.0, 30.0)
"""Waits between probes of a dropped endpoint (the last one repeats)."""


class PoolDown(UserError):
    """Every endpoint of the pool stayed down for longer than the time-out."""


@dataclass
class _Group:
    item: Any
    toks: deque


@dataclass
class _Endpoint:
    url: str
    width: int
    up: bool
    groups: deque = field(default_factory=deque)
    in_flight: int = 0
    workers: int = 0
    probes: int = 0
    next_probe: float = 0.0
    down_since: float | None = None

    def queued(self) -> int:
        return sum(len(g.toks) for g in self.groups)


class Dispatcher:
    """Runs one batch of work across a `ServerPoolBackend`'s endpoints.

    Args:
        backend: the pool backend (its `serve`, `pins`, `infos`, `concurrency`).
        model_id: stored with each row.
        plan_of: the decode plan of a request.
        record: stores a row (called in the calling thread only).
        emit: receives `PoolNotice`s.
    """

    def __init__(self, backend: Any, model_id: int, plan_of: Callable[[Any], Any],
                 record: Callable[[Any, NewGeneration], None],
                 emit: Callable[[Any], None] | None) -> None:
        self.backend = backend
        self.model_id = model_id
        self.plan_of = plan_of
        self.record = record
        self.emit = emit or (lambda event: None)
        self.cond = threading.Condition()
        self.results: queue.Queue = queue.Queue()
        self.stop = False
        self.ended = False
        self.gave_up = False
        self.attempts: dict[int, int] = {}  # id(request) -> failed attempts
        self.tried: dict[int, set[str]] = {}  # id(request) -> endpoints it failed on
        self.timeout_s = backend.settings.timeout_s
        now = time.monotonic()
        self.eps: dict[str, _Endpoint] = {}
        for url in backend.settings.urls:
            up = url in backend.infos and url not in backend.down  # down in an earlier stage
            self.eps[url] = _Endpoint(url, backend.concurrency.get(url, 1), up,
                                      down_since=None if up else now)

    # ------------------------------------------------------------ public

    def run(self, work: Sequence[Any], should_stop: Callable[[], bool] | None) -> bool:
        """Run `work` (in its order); True when stopped early.

        Raises:
            PoolDown: every endpoint stayed down for longer than the time-out.
        """
        self._assign(work)
        for ep in self.eps.values():
            if not ep.up:
                why = self.backend.down_reasons.get(ep.url, ep.url)
                self._note(f"endpoint {ep.url} does not answer ({why}); probing it with "
                           "back-off")
        with self.cond:
            for ep in self.eps.values():
                if ep.up:
                    self._start_workers(ep)
        prober = threading.Thread(target=self._probe_loop, daemon=True)
        prober.start()
        stored: set[str] = set()
        try:
            while True:
                if should_stop is not None and not self.stop and should_stop():
                    with self.cond:
                        self.stop = True
                        self.cond.notify_all()
                try:
                    kind, payload = self.results.get(timeout=0.2)
                except queue.Empty:
                    if self._finished():
                        break
                    continue
                if kind == "notice":
                    self.emit(PoolNotice(payload))
                    continue
                tok, row = payload
                if row.key not in stored:  # never store one key twice
                    stored.add(row.key)
                    self.record(tok, row)
        finally:
            with self.cond:
                self.ended = True
                self.cond.notify_all()
        while not self.results.empty():  # notices queued last
            kind, payload = self.results.get()
            if kind == "notice":
                self.emit(PoolNotice(payload))
        if self.gave_up:
            left = sum(ep.queued() for ep in self.eps.values())
            raise PoolDown(f"every endpoint of the pool has been down for over "
                           f"{self.timeout_s:.0f} s ({', '.join(self.eps)}); {left} "
                           "generation(s) not made: start the servers and run the same "
                           "command again (what is stored is kept)")
        return self.stop

    # ------------------------------------------------------------ planning

    def _assign(self, work: Sequence[Any]) -> None:
        """Group work by item (in order) and queue each item on its pinned or least-busy
        endpoint."""
        groups: dict[Any, _Group] = {}
        for tok in work:
            item = tok.prepared.request.item.id
            group = groups.get(item)
            if group is None:
                group = groups[item] = _Group(item, deque())
            group.toks.append(tok)
        live = [ep for ep in self.eps.values() if ep.up]
        pins = self.backend.pins
        for group in groups.values():
            pinned = self.eps.get(pins.get(group.item, ""))
            ep = pinned if pinned is not None and pinned.up else \
                min(live, key=lambda e: (e.queued() / e.width, e.url))
            pins[group.item] = ep.url
            ep.groups.append(group)

    # ------------------------------------------------------------ workers

    def _note(self, text: str) -> None:
        self.results.put(("notice", text))

    def _start_workers(self, ep: _Endpoint) -> None:
        """Start threads until `ep` has `width` of them (caller holds the lock)."""
        while ep.workers < ep.width:
            ep.workers += 1
            threading.Thread(target=self._worker, args=(ep,), daemon=True).start()

    def _idle_everywhere(self) -> bool:
        return all(not ep.groups and not ep.in_flight for ep in self.eps.values())

    def _finished(self) -> bool:
        with self.cond:
            if any(ep.workers for ep in self.eps.values()):
                return False
            if self.stop or self.gave_up:
                return True
            return all(not ep.groups for ep in self.eps.values())

    def _take(self, ep: _Endpoint) -> Any | None:
        """The next request for `ep`: its own items first, else a whole item taken over."""
        if not ep.groups:
            victims = sorted((e for e in self.eps.values() if e is not ep and e.groups),
                             key=lambda e: (e.up, -e.queued()))
            for victim in victims:
                if victim.up and len(victim.groups) <= 1:
                    continue  # its last item stays (its prefix cache), unless it is down
                group = victim.groups.pop()
                self.backend.pins[group.item] = ep.url
                ep.groups.append(group)
                break
            else:
                return None
        group = ep.groups[0]
        tok = group.toks.popleft()
        if not group.toks:
            ep.groups.popleft()
        return tok

    def _worker(self, ep: _Endpoint) -> None:
        from workbench.models.execute import error_row

        while True:
            with self.cond:
                tok = None
                while tok is None:
                    if self.stop or self.ended or not ep.up or self._idle_everywhere():
                        ep.workers -= 1
                        self.cond.notify_all()
                        return
                    tok = self._take(ep)
                    if tok is None:
                        self.cond.wait(0.5)
                ep.in_flight += 1
                peak = self.backend.peak
                peak[ep.url] = max(peak.get(ep.url, 0), ep.in_flight)
            started = time.perf_counter()
            try:
                row = self.backend.serve(ep.url, tok, self.model_id, self.plan_of(tok))
            except EndpointDown as exc:
                self._failed(ep, tok, exc, started)
                continue
            except RequestRefused as exc:  # this request only
                row = error_row(tok, self.model_id, exc, started)
            except Exception as exc:  # noqa: BLE001 - a bug for this request only
                row = error_row(tok, self.model_id, exc, started)
            with self.cond:
                ep.in_flight -= 1
                self.results.put(("row", (tok, row)))
                self.cond.notify_all()

    def _failed(self, ep: _Endpoint, tok: Any, exc: EndpointDown, started: float) -> None:
        """Drop `ep`, put `tok` back at the front of its item (or store it as an error)."""
        from workbench.models.execute import error_row

        with self.cond:
            ep.in_flight -= 1
            tries = self.attempts.get(id(tok), 0) + 1
            self.attempts[id(tok)] = tries
            tried = self.tried.setdefault(id(tok), set())
            tried.add(ep.url)
            if tries >= RETRIES:
                self.results.put(("row", (tok, error_row(tok, self.model_id, EndpointDown(
                    f"failed on {len(tried)} endpoint(s) in {tries} attempt(s) "
                    f"(last: {exc})"), started))))
            else:
                self._requeue(ep, tok, tried)
            if ep.up:
                ep.up = False
                self.backend.down.add(ep.url)
                ep.down_since = time.monotonic()
                ep.probes = 0
                ep.next_probe = time.monotonic() + BACKOFF_S[0]
                self._note(f"endpoint {ep.url} dropped ({exc}); {ep.queued()} waiting "
                           "request(s) move to the other endpoints; probing it with back-off")
            self.cond.notify_all()

    def _requeue(self, ep: _Endpoint, tok: Any, tried: set[str]) -> None:
        """Put a failed request back at the front of its item, the item moved (with the
        rest of its waiting requests) to the least busy live endpoint that has not failed
        this request, else kept on `ep` for when it is back (caller holds the lock)."""
        item = tok.prepared.request.item.id
        group = ep.groups[0] if ep.groups and ep.groups[0].item == item else None
        if group is not None:
            ep.groups.popleft()
            group.toks.appendleft(tok)
        else:
            group = _Group(item, deque([tok]))
        others = [e for e in self.eps.values() if e.up and e is not ep and e.url not in tried]
        target = min(others, key=lambda e: (e.queued() / e.width, e.url)) if others else ep
        self.backend.pins[item] = target.url
        target.groups.appendleft(group)

    # ------------------------------------------------------------ re-admission

    def _probe_loop(self) -> None:
        while True:
            with self.cond:
                if self.ended:
                    return
                now = time.monotonic()
                due = [ep for ep in self.eps.values() if not ep.up and ep.next_probe <= now]
                downs = [ep.down_since for ep in self.eps.values() if not ep.up]
                if len(downs) == len(self.eps) and not self._idle_everywhere() and \
                        now - max(d or now for d in downs) > self.timeout_s:
                    self.gave_up = True
                    self.cond.notify_all()
                    return
            for ep in due:
                self._probe(ep)
            time.sleep(0.25)

    def _probe(self, ep: _Endpoint) -> None:
        backend = self.backend
        kind = backend.kind
        info = None
        if health(ep.url, backend.http, kind):
            try:
                info = probe(ep.url, backend.http)
                backend.admissible(info)
            except EndpointDown:
                info = None
            except UserError as exc:
                self._note(f"endpoint {ep.url} answers but cannot join the pool: {exc}")
                info = None
        with self.cond:
            if info is None:
                ep.probes += 1
                ep.next_probe = time.monotonic() + BACKOFF_S[min(ep.probes, len(BACKOFF_S) - 1)]
                return
            backend.infos[ep.url] = info
            serial = backend.serial
            ep.width = 1 if serial else backend.settings.concurrency or max(1, info.slots)
            backend.concurrency[ep.url] = ep.width
            ep.up, ep.down_since = True, None
            backend.down.discard(ep.url)
            self._note(f"endpoint {ep.url} is back; it takes work again")
            self._start_workers(ep)
            self.cond.notify_all()
