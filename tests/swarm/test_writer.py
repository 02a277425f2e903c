"""The store writer: every write once, in order, however many callers write at once."""

from __future__ import annotations

import asyncio

from swarm._writer import StoreWriter


async def test_concurrent_writes_are_each_done_once_in_order() -> None:
    """A gateway's turn recorder is one writer for every call: two flushes at once both
    wrote the queue's head and then both popped ("pop from empty list" under load)."""
    done: list[int] = []

    async def write(n: int) -> None:
        await asyncio.sleep(0)  # the database call: other callers run meanwhile
        done.append(n)

    writer = StoreWriter("*", lambda exc: None)
    await asyncio.gather(*(writer.write(write, n) for n in range(50)))
    assert done == list(range(50)) and writer.pending == 0


async def test_a_failed_write_stays_queued_and_goes_first_next_time() -> None:
    done: list[int] = []
    failing = {1}
    failures: list[Exception] = []

    async def write(n: int) -> None:
        if n in failing:
            raise ConnectionError("database away")
        done.append(n)

    writer = StoreWriter("c", failures.append, attempts=1)
    await writer.write(write, 0)
    await writer.write(write, 1)  # fails: kept
    assert writer.pending == 1 and len(failures) == 1
    failing.clear()
    await writer.write(write, 2)
    assert done == [0, 1, 2] and writer.pending == 0
