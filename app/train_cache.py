"""Finished training runs, kept by their request: a repeat (a rehearsal, then the class) replays at once.

Only a run that streamed all the way to its `end` event is kept; a stopped, stale or failed run is not.
Training is seeded (weights by each config's seed, data by the request's seed), so a replay shows the very
numbers a new run would compute. In memory, per worker process, least recently used first out.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

CAPACITY = 32   # a 4-run, 300-step request keeps ~1,200 small events (~0.3 MB)


class FinishedRuns:
    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self._events: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0

    def get(self, key: str) -> list[dict[str, Any]] | None:
        with self._lock:
            events = self._events.get(key)
            if events is not None:
                self._events.move_to_end(key)
                self.hits += 1
            return events

    def keep(self, key: str, events: list[dict[str, Any]]) -> None:
        """Store `events` if they are a whole run: the last one must be the `end` event."""
        if not events or events[-1].get("type") != "end" or self.capacity <= 0:
            return
        with self._lock:
            self._events[key] = events
            self._events.move_to_end(key)
            while len(self._events) > self.capacity:
                self._events.popitem(last=False)

    def __len__(self) -> int:
        return len(self._events)


def replayed(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The stored events, with `cached: true` on the start and end events so a client can tell."""
    return [{**event, "cached": True} if event.get("type") in ("start", "end") else event for event in events]
