"""A call's inbound queue: the oldest audio goes when the loop is far behind; a key, a
hold and the end of the call never do."""

from __future__ import annotations

import asyncio

import pytest

from telephony.inbound import Hold, Inbound, Key, LineEnded


async def drain(inbound: Inbound[int]) -> list[object]:
    items: list[object] = []
    while not inbound.empty():
        items.append(await inbound.get())
    return items


async def test_audio_past_the_bound_drops_the_oldest_audio_and_counts_it() -> None:
    inbound: Inbound[int] = Inbound(most_audio=3)
    for packet in range(5):
        inbound.put(packet)
    assert await drain(inbound) == [2, 3, 4]
    assert inbound.dropped == 2


async def test_a_key_and_a_hold_behind_a_flood_of_audio_are_kept_in_their_place() -> None:
    inbound: Inbound[int] = Inbound(most_audio=3)
    inbound.put(Key("0"))  # pressed first: the oldest item when the audio overflows
    inbound.put(0)
    inbound.put(Hold(True))
    for packet in range(1, 6):
        inbound.put(packet)
    inbound.put(LineEnded())
    assert await drain(inbound) == [Key("0"), Hold(True), 3, 4, 5, LineEnded()]
    assert inbound.dropped == 3


async def test_only_audio_counts_towards_the_bound() -> None:
    inbound: Inbound[int] = Inbound(most_audio=2)
    for key in "0123456789":
        inbound.put(Key(key))
    inbound.put(1)
    inbound.put(2)
    assert inbound.dropped == 0
    assert len(await drain(inbound)) == 12


async def test_a_read_that_times_out_loses_nothing_and_the_next_one_gets_it() -> None:
    inbound: Inbound[int] = Inbound(most_audio=3)
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.01):
            await inbound.get()
    inbound.put(7)
    inbound.put(Key("#"))
    assert await inbound.get() == 7
    assert await inbound.get() == Key("#")
    assert inbound.empty()


async def test_a_waiting_reader_is_woken_by_a_put_from_the_loop() -> None:
    inbound: Inbound[int] = Inbound(most_audio=3)
    reader = asyncio.create_task(inbound.get())
    # Callbacks run in order: the reader finds the queue empty and waits, then the put.
    asyncio.get_running_loop().call_soon(inbound.put, LineEnded())
    assert await asyncio.wait_for(reader, 5) == LineEnded()
