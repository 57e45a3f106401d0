"""check's trial slots: at most n at once, long waiters first, no slot lost to a cancelled waiter."""

from __future__ import annotations

import asyncio

from orharbor.check.slots import Slots


def _run(coro):
    return asyncio.run(coro)


def test_at_most_n_run_at_once_and_every_one_runs():
    async def body():
        slots, running, most, done = Slots(2), 0, 0, []

        async def trial(i):
            nonlocal running, most
            async with slots.slot(long=i % 3 == 0):
                running += 1
                most = max(most, running)
                await asyncio.sleep(0.01)
                running -= 1
                done.append(i)

        await asyncio.gather(*(trial(i) for i in range(12)))
        return most, sorted(done)

    most, done = _run(body())
    assert most == 2 and done == list(range(12))


def test_long_waiters_start_before_short_ones_that_asked_first():
    async def body():
        slots, started = Slots(1), []
        gate = asyncio.Event()

        async def trial(name, long):
            async with slots.slot(long=long):
                started.append(name)
                if name == "first":
                    await gate.wait()

        first = asyncio.create_task(trial("first", False))
        await asyncio.sleep(0)
        waiters = [
            asyncio.create_task(trial(name, long))
            for name, long in (("short-1", False), ("long-1", True), ("short-2", False), ("long-2", True))
        ]
        await asyncio.sleep(0)
        gate.set()
        await asyncio.gather(first, *waiters)
        return started

    assert _run(body()) == ["first", "long-1", "long-2", "short-1", "short-2"]


async def _cancel_a_waiter(as_its_turn_comes: bool) -> str:
    """One slot held; a waiter cancelled while it waits, or in the very step in which the holder's release hands it
    the slot (before it can resume); then whether a new waiter still gets the slot."""
    slots = Slots(1)
    gate = asyncio.Event()
    waiting: list[asyncio.Task] = []

    async def holder():
        async with slots.slot():
            await gate.wait()
        if as_its_turn_comes:  # the same step as the release: the waiter's turn is set, it has not run yet
            waiting[0].cancel()

    async def waiter():
        async with slots.slot():
            return "ran"

    first = asyncio.create_task(holder())
    await asyncio.sleep(0)
    waiting.append(asyncio.create_task(waiter()))
    await asyncio.sleep(0)
    if not as_its_turn_comes:
        waiting[0].cancel()
        await asyncio.sleep(0)
    gate.set()
    await first
    [outcome] = await asyncio.gather(waiting[0], return_exceptions=True)
    assert isinstance(outcome, asyncio.CancelledError)  # it never ran
    return await asyncio.wait_for(waiter(), timeout=5)


def test_a_cancelled_waiter_loses_no_slot():
    assert _run(_cancel_a_waiter(as_its_turn_comes=False)) == "ran"


def test_a_waiter_cancelled_as_its_turn_comes_passes_the_slot_on():
    assert _run(_cancel_a_waiter(as_its_turn_comes=True)) == "ran"
