"""The console in Debian's chromium, watching a push-to-talk call in a second tab.

The caller's microphone is a synthesised WAV. The operator signs in, sees the call go
live, follows its transcript as it happens, takes it over and types a reply, which
the caller's page plays; then the call ends and moves to the past calls.
"""

from __future__ import annotations

import re

from playwright.async_api import async_playwright

from tests.voice.speech import piper, silence
from voice.wavio import write_wav

from .test_browser import hold_and_say, with_microphone

WORDS = "Hello, this is Sam, the pharmacist. I will put some aside for you."


async def test_a_web_call_live_in_the_console_with_an_operator_takeover(
    gateway, tts, tmp_path
) -> None:
    pcm = silence(0.4) + piper("Do you have any ibuprofen?") + silence(0.3)
    wav = tmp_path / "caller.wav"
    write_wav(wav, pcm, 16000)
    async with async_playwright() as p:
        browser = await with_microphone(p, wav)
        try:
            desk = await browser.new_context(viewport={"width": 1280, "height": 860})
            console = await desk.new_page()
            await console.goto(f"{gateway.url}/console")
            await console.get_by_label("Your name").fill("sam")
            await console.get_by_label("Token or password").fill("wrong")
            await console.get_by_role("button", name="Sign in").click()
            await console.get_by_role("alert").filter(has_text="wrong token").wait_for()
            await console.get_by_label("Token or password").fill(gateway.gateway.auth.token)
            await console.get_by_role("button", name="Sign in").click()
            await console.wait_for_function("window.consoleState.stream === 'live'")
            await console.locator("#login").wait_for(state="hidden")

            line = await browser.new_context()
            page = await line.new_page()
            await page.goto(gateway.url)
            await page.wait_for_function("window.callswarm.status === 'ready'", timeout=30_000)
            caller_id = await page.evaluate("window.callswarm.clientId")

            # The call appears among the live calls without a reload; its view opens.
            live = console.locator("#live li", has_text=caller_id)
            await live.wait_for()
            await live.click()
            transcript = console.locator(".transcript")
            await transcript.locator("li.assistant", has_text="Riverside Pharmacy").wait_for()

            # What the caller says streams in: their words, the hand-off, the tool, the
            # reply, and the turn's latency.
            await hold_and_say(page, len(pcm) / 32000)
            said = transcript.locator("li.user", has_text=re.compile("ibuprofen", re.I))
            await said.wait_for(timeout=120_000)
            await transcript.locator("li.note", has_text="triage → sales").wait_for()
            await transcript.locator("li.tool details").first.wait_for()
            await transcript.locator("li.assistant:not(.tool)", has_text="Ibuprofen").wait_for()
            await transcript.locator("li.latency", has_text="voice to voice").wait_for()
            await page.wait_for_function(
                "window.callswarm.status === 'ready' && window.callswarm.replies >= 2",
                timeout=120_000,
            )
            played = await page.evaluate("window.callswarm.playedSeconds")

            # Takeover: the typed words are spoken on the caller's page.
            await console.get_by_role("button", name="Take over").click()
            await transcript.locator("li.note", has_text="sam took over").wait_for()
            await console.get_by_label("Reply to the caller").fill(WORDS)
            await console.get_by_role("button", name="Say").click()
            await page.locator("#conversation li.assistant", has_text=WORDS).wait_for()
            await page.wait_for_function(
                f"window.callswarm.playedSeconds > {played + 2.5}", timeout=60_000
            )
            await transcript.locator("li.operator", has_text=WORDS).wait_for()
            await console.screenshot(path=tmp_path / "console.png")
            await console.get_by_role("button", name="Hand back").click()
            await transcript.locator("li.note", has_text="sam handed the call back").wait_for()

            # The caller hangs up: the call leaves the live list for the past calls,
            # with its recording.
            await line.close()
            await console.locator("#no-live").wait_for(state="visible")
            past = console.locator("#past li", has_text=caller_id)
            await past.wait_for()
            await console.locator(".facts", has_text="ended by caller").wait_for()
            assert await console.locator("audio.recording").get_attribute("src")
            # Search finds the call by what was said in it.
            await console.get_by_label("Search transcripts").fill("pharmacist")
            await console.get_by_role("button", name="Search").click()
            await console.locator("#hits li", has_text=WORDS).wait_for()
        finally:
            await browser.close()
    assert (tmp_path / "console.png").stat().st_size > 10_000
