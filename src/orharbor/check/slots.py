"""Trial slots: at most ``n`` trials at once; of those waiting, the long ones start first, then in the order they asked.

A check's wall time is its busiest slot's: a 12-second trial (a probe that waits
out a run's time limit) started last keeps the check waiting while the other
slots idle. Starting the trials marked long first (longest processing time
first, the classic rule for this) leaves the short ones to fill in at the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
from typing import AsyncIterator


class Slots:
    """Like ``asyncio.Semaphore(n)``, with long waiters first."""

    def __init__(self, n: int) -> None:
        self._free = n
        self._waiting: list[tuple[int, int, asyncio.Future]] = []
        self._order = itertools.count()

    @contextlib.asynccontextmanager
    async def slot(self, long: bool = False) -> AsyncIterator[None]:
        """Hold one slot for the ``async with`` body; ``long`` waiters are let in before the others."""
        if self._free > 0 and not self._waiting:
            self._free -= 1
        else:
            turn = asyncio.get_running_loop().create_future()
            heapq.heappush(self._waiting, (0 if long else 1, next(self._order), turn))
            try:
                await turn
            except asyncio.CancelledError:
                if turn.done() and not turn.cancelled():  # handed a slot as it was cancelled: pass it on
                    self._release()
                raise
        try:
            yield
        finally:
            self._release()

    def _release(self) -> None:
        while self._waiting:
            _, _, turn = heapq.heappop(self._waiting)
            if not turn.done():  # a cancelled waiter's turn is done already
                turn.set_result(None)
                return
        self._free += 1
