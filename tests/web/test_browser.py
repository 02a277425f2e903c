"""The push-to-talk page in Debian's chromium, its microphone fed from synthesised WAVs.

One browser per utterance: chromium's fake microphone plays one file, and a new
browser holding the caller's cookie is also a reconnect that must resume the session.
"""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Browser, Page, Playwright, async_playwright
from sqlmodel import Session, select

from models.shop import Order, OrderLine, OrderStatus, Product
from tests.voice.speech import piper, silence
from voice.wavio import write_wav

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--use-fake-ui-for-media-stream",
    "--use-fake-device-for-media-stream",
]


async def with_microphone(p: Playwright, wav: Path) -> Browser:
    """Chromium whose microphone plays `wav` once."""
    return await p.chromium.launch(
        executable_path=CHROMIUM,
        args=[*FLAGS, f"--use-file-for-fake-audio-capture={wav}%noloop"],
    )


async def hold_and_say(page: Page, seconds: float) -> None:
    """Hold the talk button with the mouse until the page has sent the whole utterance."""
    button = page.get_by_role("button", name="Hold to talk")
    box = await button.bounding_box()
    assert box is not None
    await page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    await page.mouse.down()
    await page.wait_for_function(f"window.callswarm.sentSeconds >= {seconds}", timeout=30_000)
    await page.mouse.up()


async def one_utterance(
    browser_factory, url: str, wav: Path, seconds: float, cookies: dict | None
) -> tuple[dict, dict]:
    """One utterance through the page, in a browser holding `cookies` (the storage state
    of the caller's browser before); returns what the page showed, and the cookies."""
    browser = await browser_factory(wav)
    try:
        context = await browser.new_context(storage_state=cookies)
        page = await context.new_page()
        await page.goto(url)
        await page.wait_for_function("window.callswarm.status === 'ready'", timeout=30_000)
        replies_before = await page.locator("#conversation li.assistant").count()
        await hold_and_say(page, seconds)
        # The reply was received and played through Web Audio, and the page is ready again.
        await page.wait_for_function(
            "window.callswarm.transcripts.length >= 1 && window.callswarm.playedSeconds > 1"
            " && window.callswarm.status === 'ready'",
            timeout=120_000,
        )
        state = await page.evaluate("window.callswarm")
        state["said"] = await page.locator("#conversation li.user").last.inner_text()
        state["replies"] = await page.locator("#conversation li.assistant").count() - replies_before
        state["agent"] = await page.locator("#agent").inner_text()
        state["status_role"] = await page.get_by_role("status").inner_text()
        return state, await context.storage_state()
    finally:
        await browser.close()


async def test_an_order_placed_by_voice_through_the_page(gateway, tts, tmp_path) -> None:
    lines = [
        "I would like two boxes of paracetamol please.",
        "That's all, thank you.",
        "Yes, please confirm the order.",
    ]
    async with async_playwright() as p:

        async def launch(wav: Path) -> Browser:
            return await with_microphone(p, wav)

        # A browser per line (each plays its own microphone file), carrying the caller's
        # cookie from one to the next as one browser would: the same caller, resumed.
        states, cookies = [], None
        for n, line in enumerate(lines):
            pcm = silence(0.4) + piper(line) + silence(0.3)
            wav = tmp_path / f"caller-{n}.wav"
            write_wav(wav, pcm, 16000)
            state, cookies = await one_utterance(
                launch, gateway.url, wav, len(pcm) / 32000, cookies
            )
            states.append(state)

    first = states[0]
    assert "paracetamol" in first["said"].lower()  # the transcript is on the page
    assert first["agent"] == "sales" and first["replies"] >= 1
    assert first["receivedSeconds"] >= first["playedSeconds"] > 1
    assert not first["errors"]
    assert "yes" in states[2]["said"].lower()
    # The order placed by voice is in the database, priced by the catalogue.
    with Session(gateway.services.db) as db:
        orders = db.exec(select(Order)).all()
        assert [o.status for o in orders] == [OrderStatus.CONFIRMED]
        ordered = db.exec(
            select(Product.name, OrderLine.quantity)
            .join(Product, Product.sku == OrderLine.sku)
            .where(OrderLine.order_id == orders[0].id)
        ).all()
    assert [tuple(row) for row in ordered] == [("Paracetamol", 2)]


async def test_touch_hold_and_a_blocked_microphone(gateway, tts, tmp_path) -> None:
    pcm = silence(0.4) + piper("Do you have any ibuprofen?") + silence(0.3)
    wav = tmp_path / "touch.wav"
    write_wav(wav, pcm, 16000)
    async with async_playwright() as p:
        browser = await with_microphone(p, wav)
        try:
            phone = await browser.new_context(
                viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True
            )
            page = await phone.new_page()
            await page.goto(gateway.url)
            await page.wait_for_function("window.callswarm.status === 'ready'", timeout=30_000)
            box = await page.get_by_role("button", name="Hold to talk").bounding_box()
            assert box is not None
            point = {"x": box["x"] + box["width"] / 2, "y": box["y"] + box["height"] / 2}
            # A finger held on the button: touch start, the utterance, touch end.
            cdp = await phone.new_cdp_session(page)
            await cdp.send(
                "Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [point]}
            )
            await page.wait_for_function(
                f"window.callswarm.sentSeconds >= {len(pcm) / 32000}", timeout=30_000
            )
            assert await page.get_attribute("#talk", "aria-pressed") == "true"
            await cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
            await page.wait_for_function(
                "window.callswarm.transcripts.length >= 1 && window.callswarm.playedSeconds > 1",
                timeout=120_000,
            )
            assert "ibuprofen" in (await page.evaluate("window.callswarm.transcripts"))[0].lower()
        finally:
            await browser.close()
        # Without the fake permission prompt and with the microphone denied, the page
        # says so instead of failing silently.
        browser = await p.chromium.launch(
            executable_path=CHROMIUM, args=[*FLAGS[:6], "--deny-permission-prompts"]
        )
        try:
            page = await (await browser.new_context(permissions=[])).new_page()
            await page.goto(gateway.url)
            # After the greeting has been sent, so nothing else changes the status line.
            await page.wait_for_function("window.callswarm.replies >= 1", timeout=30_000)
            await page.get_by_role("button", name="Hold to talk").hover()
            await page.mouse.down()
            await page.wait_for_function("window.callswarm.status === 'mic-denied'", timeout=30_000)
            assert "microphone is blocked" in await page.get_by_role("status").inner_text()
        finally:
            await browser.close()


async def test_a_second_browser_that_knows_the_callers_id_gets_its_own_conversation(
    gateway,
) -> None:
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            ready = "window.callswarm.status === 'ready' && window.callswarm.replies >= 1"
            mine = await (await browser.new_context()).new_page()
            await mine.goto(gateway.url)
            await mine.wait_for_function(ready, timeout=30_000)
            caller_id = await mine.evaluate("window.callswarm.clientId")
            assert caller_id.startswith("web-") and len(caller_id) == len("web-") + 32
            # The caller's own browser, reloaded, resumes: the greeting is not said again.
            await mine.reload()
            await mine.wait_for_function("window.callswarm.status === 'ready'", timeout=30_000)
            assert await mine.evaluate("window.callswarm.clientId") == caller_id
            assert await mine.locator("#conversation li.assistant").count() == 1
            # Another browser (no cookie of theirs) at a link naming that id (the page
            # once took `?client=` as its id) is a new caller.
            other = await (await browser.new_context()).new_page()
            await other.goto(f"{gateway.url}/?client={caller_id}")
            await other.wait_for_function(ready, timeout=30_000)
            assert await other.evaluate("window.callswarm.clientId") != caller_id
            assert await other.locator("#conversation li.assistant").count() == 1  # its greeting
        finally:
            await browser.close()
