"""Turn-taking on real synthesised speech, with silences and noise mixed in."""

from __future__ import annotations

import pytest

from voice.vad import SpeechEnded, SpeechPaused, SpeechStarted, TurnDetector, VadConfig

from .speech import cough, espeak, frames, mix, noise, piper, silence, trim


def run(pcm: bytes, config: VadConfig | None = None) -> list:
    detector = TurnDetector(config)
    events = []
    for chunk in frames(pcm, 20):
        events += detector.feed(chunk)
    return events


def ended(events: list) -> list[SpeechEnded]:
    return [e for e in events if isinstance(e, SpeechEnded)]


@pytest.mark.parametrize("voice", ["piper", "en-us", "en-gb+f3", "en-us+m5"])
def test_two_utterances_between_silences_are_two_turns(tts, voice: str) -> None:
    say = (lambda t: piper(t)) if voice == "piper" else (lambda t: espeak(t, voice))
    first, second = say("Hello, I need some paracetamol."), say("Two boxes please.")
    audio = mix(silence(0.8) + first + silence(1.2) + second + silence(1.0), noise_level=150)
    turns = ended(run(audio))
    assert len(turns) == 2
    for turn, spoken in zip(turns, (first, second), strict=True):
        # The pre-roll keeps the first syllable; the turn is about as long as the speech.
        assert len(spoken) / 2 / 16000 - 0.2 <= turn.duration <= len(spoken) / 2 / 16000 + 0.9


def test_a_400_ms_pause_mid_sentence_does_not_end_the_turn(tts) -> None:
    # Piper pads its speech with silence: trim it, so the pause is exactly 400 ms.
    first, rest = trim(piper("I would like")), trim(piper("two boxes of ibuprofen."))
    assert len(ended(run(silence(0.5) + first + silence(0.4) + rest + silence(1.0)))) == 1
    # The same sentence with a real stop in it is two turns: the test can fail.
    assert len(ended(run(silence(0.5) + first + silence(0.9) + rest + silence(1.0)))) == 2


def test_a_cough_or_a_click_never_starts_a_turn() -> None:
    audio = silence(0.5) + cough(0.1) + silence(0.8) + noise(1.0, level=200) + silence(0.5)
    events = run(audio)
    assert [e for e in events if isinstance(e, SpeechStarted)] == []


def test_speech_start_is_reported_at_the_first_voiced_frame_and_end_after_the_stop_silence(
    tts,
) -> None:
    speech = piper("Hello there.")
    events = run(silence(1.0) + speech + silence(1.0))
    start = next(e for e in events if isinstance(e, SpeechStarted))
    end = ended(events)[0]
    assert 0.9 <= start.at <= 1.3
    assert end.at - end.last_voice == pytest.approx(0.5, abs=0.021)


def test_a_long_monologue_is_cut_at_the_maximum_utterance(tts) -> None:
    speech = piper("I am going to keep talking about many products for quite a while now.")
    turns = ended(run(speech + speech + silence(0.6), VadConfig(max_utterance_s=3.0)))
    assert turns and turns[0].duration == pytest.approx(3.0, abs=0.05)


def kinds(events: list) -> list[str]:
    """The events' kinds, in order, without the "Speech" every one starts with."""
    return [type(e).__name__.removeprefix("Speech") for e in events]


def test_a_pause_offers_the_utterance_so_far_and_voice_withdraws_it(tts) -> None:
    from voice.vad import SpeechResumed

    first, rest = trim(piper("I would like")), trim(piper("two boxes of ibuprofen."))
    events = run(silence(0.5) + first + silence(0.3) + rest + silence(1.0))
    assert kinds(events) == "Started Paused Resumed Paused Ended".split()
    last_pause = [e for e in events if isinstance(e, SpeechPaused)][-1]
    end = ended(events)[0]
    # What was offered for decoding is the utterance; only silence came after it.
    assert end.audio.startswith(last_pause.audio)
    assert all(not isinstance(e, SpeechResumed) for e in events[events.index(last_pause) :])


def test_a_pause_is_offered_again_once_at_the_recheck(tts) -> None:
    from voice.vad import SpeechStillPaused

    first = trim(piper("I would like"))
    config = VadConfig(stop_ms=2000, recheck_ms=500)
    events = run(silence(0.5) + first + silence(0.7) + first + silence(2.5), config)
    assert kinds(events) == "Started Paused StillPaused Resumed Paused StillPaused Ended".split()
    still = [e for e in events if isinstance(e, SpeechStillPaused)]
    assert len(still[0].audio) > len(first)
    with pytest.raises(ValueError, match="recheck_ms"):
        VadConfig(recheck_ms=100)


def _hum(seconds: float, rms: float) -> bytes:
    """Mains hum and its harmonics, as a cheap adapter puts on the line."""
    import numpy as np

    t = np.arange(int(16000 * seconds)) / 16000
    wave = sum(np.sin(2 * np.pi * 50 * k * t) / k for k in (1, 2, 3, 5))
    wave *= rms / float(np.sqrt(np.mean(wave * wave)))
    return wave.astype("<i2").tobytes()


def _under(speech: bytes, bed: bytes) -> bytes:
    import numpy as np

    a = np.frombuffer(bed, "<i2").astype(np.int32)
    b = np.frombuffer(speech, "<i2").astype(np.int32)
    a[: b.size] += b
    return np.clip(a, -32768, 32767).astype("<i2").tobytes()


def _ends(audio: bytes, gauge) -> list[SpeechEnded]:  # type: ignore[no-untyped-def]
    detector = TurnDetector(VadConfig(), gauge=gauge)
    events = []
    for chunk in frames(audio, 20):
        events += detector.feed(chunk)
    return ended(events)


def test_a_turn_said_over_a_steady_hum_ends_as_one_said_in_quiet(tts) -> None:
    from voice.voiced import silero_latest

    said = silence(0.5) + trim(piper("I need something for a headache."))
    last = len(said) / 2 / 16000
    # The hum 10 dB under the sentence: webrtcvad takes it for voice.
    audio = _under(said, _hum(last + 3.0, rms=0.3 * _rms(said)))
    (turn,) = _ends(audio, silero_latest)
    assert last + 0.45 <= turn.at <= last + 0.8
    # The hum that goes on is not the caller's next turn: nothing starts after this one
    # ended, so the reply is not cut by it.
    detector = TurnDetector(VadConfig(), gauge=silero_latest)
    events = [e for chunk in frames(audio, 20) for e in detector.feed(chunk)]
    assert [type(e).__name__ for e in events if isinstance(e, SpeechStarted | SpeechEnded)] == [
        "SpeechStarted",
        "SpeechEnded",
    ]
    # Without the second model the same line holds the turn open past its end: the
    # test can fail.
    assert _ends(audio, None) == []


def test_the_second_model_is_asked_only_inside_a_turn_and_of_quiet_frames(tts) -> None:
    asked: list[int] = []

    def speech(pcm: bytes) -> float:
        asked.append(len(pcm))
        return 1.0

    said = silence(0.5) + trim(piper("I need something for a headache.")) + silence(1.0)
    with_gauge, without = _ends(said, speech), _ends(said, None)
    # A gauge that hears speech changes nothing; it was asked, of 128 ms at most, and
    # far less often than once a frame.
    assert [t.at for t in with_gauge] == [t.at for t in without]
    assert asked and max(asked) <= 4096
    assert len(asked) < len(said) // 640 // 4
    # Silence alone never starts a turn, so never asks.
    asked.clear()
    assert _ends(silence(2.0), speech) == [] and asked == []


def _rms(pcm: bytes) -> float:
    import numpy as np

    samples = np.frombuffer(pcm, "<i2").astype(np.float64)
    voiced = samples[np.abs(samples) > 300]
    return float(np.sqrt(np.mean(voiced * voiced)))


def test_a_failing_second_model_leaves_the_turn_to_webrtcvad(tts, caplog) -> None:
    def broken(pcm: bytes) -> float:
        raise RuntimeError("no model")

    said = silence(0.5) + trim(piper("I need something for a headache."))
    last = len(said) / 2 / 16000
    audio = _under(said, _hum(last + 3.0, rms=0.3 * _rms(said)))
    # As webrtcvad alone: the hum holds the turn, and nothing is raised to the caller's
    # session; the failure is logged once.
    assert _ends(audio, broken) == _ends(audio, None) == []
    assert [r.message for r in caplog.records].count(
        "vad_gauge_failed error=RuntimeError('no model')"
    ) == 1


def _chatter(seconds: float) -> bytes:
    """A television's talkers: three voices at once, saying nothing a caller would."""
    from voice.degrade import babble

    lines = (
        ("Did you see the match on Saturday, it was a proper mess.", "en-gb+m3"),
        ("I told her the bus was late again and she just laughed.", "en-us+f2"),
        ("We're off to my sister's for the weekend if it stays dry.", "en-gb-x-rp+m2"),
    )
    return babble([espeak(text, voice) for text, voice in lines], seconds)


def test_a_turn_said_with_people_talking_behind_ends_and_they_start_none(tts) -> None:
    from voice.degrade import mix_at_snr
    from voice.voiced import silero_latest

    said = silence(0.5) + trim(piper("I need something for a headache."))
    last = len(said) / 2 / 16000
    # Talkers 10 dB under the caller, from before the first word to long after the last.
    audio = mix_at_snr(said + silence(6.0), _chatter(8.0), 10.0)
    detector = TurnDetector(VadConfig(), gauge=silero_latest)
    events = [e for chunk in frames(audio, 20) for e in detector.feed(chunk)]
    # One turn, ended after the hold an unfinished sentence gets (the end-of-turn model
    # misjudges pauses under talkers); the talkers who go on start none, so they would
    # not cut the reply.
    assert [type(e).__name__ for e in events if isinstance(e, SpeechStarted | SpeechEnded)] == [
        "SpeechStarted",
        "SpeechEnded",
    ]
    (turn,) = ended(events)
    hold = VadConfig().hold_ms / 1000
    assert last + hold <= turn.at <= last + hold + 0.6
    # webrtcvad alone takes the talkers for the caller: the turn never ends.
    assert _ends(audio, None) == []


def test_the_caller_is_heard_again_over_the_talkers_and_after_they_stop(tts) -> None:
    from voice.degrade import mix_at_snr
    from voice.voiced import silero_latest

    first = trim(piper("I need something for a headache."))
    second = trim(piper("Two boxes, please."))
    line = silence(0.5) + first + silence(3.0) + second + silence(3.0)
    talked_over = mix_at_snr(line, _chatter(12.0), 10.0)
    # The television goes off; the caller, now softer than the talkers were, says more.
    quiet = mix(silence(1.0) + _scaled(second, 0.2) + silence(2.0), noise_level=30)
    detector = TurnDetector(VadConfig(), gauge=silero_latest)
    events = [e for chunk in frames(talked_over + quiet, 20) for e in detector.feed(chunk)]
    turns = [e for e in events if isinstance(e, SpeechStarted | SpeechEnded)]
    assert [type(e).__name__ for e in turns] == ["SpeechStarted", "SpeechEnded"] * 3
    second_at = (len(line) - len(second)) / 2 / 16000 - 3.0
    third_at = len(talked_over) / 2 / 16000 + 1.0
    assert second_at - 0.35 <= turns[2].at <= second_at + 0.3
    assert third_at - 0.35 <= turns[4].at <= third_at + 0.3


def _scaled(pcm: bytes, gain: float) -> bytes:
    import numpy as np

    return (np.frombuffer(pcm, "<i2") * gain).astype("<i2").tobytes()


def test_a_sentence_that_falls_quiet_over_a_hum_is_one_turn(tts) -> None:
    from voice.degrade import hum, mix_at_snr
    from voice.voiced import silero_latest

    # This voice says "like" three times louder than the rest: the rest sits a few dB
    # over the hum, near the line's floor, and must still be the caller's.
    said = silence(0.5) + trim(piper("I'd like some loratadine for my hay fever."))
    last = len(said) / 2 / 16000
    audio = mix_at_snr(said + silence(3.0), hum(8.0), 10.0)
    (turn,) = _ends(audio, silero_latest)
    assert last <= turn.at <= last + 0.8


def test_a_caller_going_on_softly_after_a_pause_over_a_hum_is_not_cut(tts) -> None:
    from voice.degrade import hum, mix_at_snr
    from voice.voiced import silero_latest

    # The pause is judged over as soon as it can be (an end-of-turn model's "done"),
    # and the caller goes on, 10 dB softer, before the turn ends.
    head = trim(piper("I need something for my"))
    tail = _scaled(trim(piper("headache, and my son's cough.")), 0.3)
    said = silence(0.5) + head + silence(0.3) + tail
    last = len(said) / 2 / 16000
    audio = mix_at_snr(said + silence(3.0), hum(8.0), 10.0)
    detector = TurnDetector(VadConfig(), gauge=silero_latest)
    events = []
    for chunk in frames(audio, 20):
        for event in detector.feed(chunk):
            events.append(event)
            if isinstance(event, SpeechPaused):
                events += detector.stop_after(VadConfig().done_ms)
    (turn,) = ended(events)
    assert turn.at >= last


def test_a_caller_who_opens_and_trails_off_softly_is_heard_whole(tts) -> None:
    """A line's first turn has no room heard before it, and the turn's own opening
    stands for the room (`voice/linenoise.py`): a soft "Um," must not become the room
    that the caller's soft last words are then taken for."""
    from voice.voiced import silero_latest

    um = _scaled(trim(piper("Um,")), 0.1)
    tail = _scaled(trim(piper("and some plasters, please.")), 0.2)
    said = silence(0.6) + um + silence(0.35) + trim(piper("I'd like some paracetamol"))
    said += silence(0.35) + tail
    last = len(said) / 2 / 16000
    audio = mix(said + silence(3.0), noise_level=30)
    with_gauge = _ends(audio, silero_latest)
    assert [round(e.at, 2) for e in with_gauge] == [round(e.at, 2) for e in _ends(audio, None)]
    (turn,) = with_gauge
    assert last <= turn.at <= last + 0.6


def test_a_television_switched_on_between_two_turns_does_not_hold_the_next(tts) -> None:
    """The room heard between turns was quiet; then a television comes on, 10 dB under
    the caller, and opens the next turn itself. Its opening is the room now (it never
    falls back to the quiet before): the caller's sentence over it ends, and the
    television goes on without starting another."""
    import numpy as np

    first = trim(piper("I need something for a headache."))
    second = trim(piper("Two boxes, please."))
    before = silence(0.5) + first + silence(2.0)
    after = silence(3.0) + second + silence(10.0)
    line = np.frombuffer(before + after, "<i2").astype(np.float64)
    tv = np.frombuffer(_chatter(len(after) / 2 / 16000), "<i2").astype(np.float64)
    caller = np.frombuffer(first + second, "<i2").astype(np.float64)
    tv *= float(np.sqrt(np.mean(caller**2) / np.mean(tv**2))) / 10 ** (10 / 20)
    on = len(before) // 2
    line[on : on + tv.size] += tv[: line.size - on]
    audio = mix(np.clip(line, -32768, 32767).astype("<i2").tobytes(), noise_level=30)
    last = (len(before) + len(after)) / 2 / 16000 - 10.0
    from voice.voiced import silero_latest

    detector = TurnDetector(VadConfig(), gauge=silero_latest)
    events = [e for chunk in frames(audio, 20) for e in detector.feed(chunk)]
    turns = [e for e in events if isinstance(e, SpeechStarted | SpeechEnded)]
    assert [type(e).__name__ for e in turns] == ["SpeechStarted", "SpeechEnded"] * 2
    assert last + VadConfig().hold_ms / 1000 <= turns[3].at <= last + 2.0
    # webrtcvad alone takes the television for the caller: the second turn never ends.
    assert len(_ends(audio, None)) == 1


@pytest.mark.parametrize(
    ("opening", "gap", "end"), [(0.08, 0.0, 0.1), (0.15, 0.1, 0.2), (0.25, 0.35, 0.3)]
)
def test_a_soft_opening_after_a_quiet_turn_is_not_the_room(
    tts, opening: float, gap: float, end: float
) -> None:
    """A second turn in a quiet room that opens softly ("Um, well,") and ends softly
    falls back to the quiet between its words: its opening is not taken for a room
    switched on (`voice/linenoise.py`), and it ends as with webrtcvad alone."""
    from voice.voiced import silero_latest

    said = silence(0.5) + trim(piper("Hello, I need a bit of help, please.")) + silence(2.0)
    said += _scaled(trim(piper("Um, well,")), opening) + silence(gap)
    said += trim(piper("I'd like some paracetamol")) + silence(0.25)
    said += _scaled(trim(piper("and some plasters, please.")), end)
    # A quiet room, and digital silence (a phone that sends zeros while its caller is
    # quiet: a room of no level at all).
    for audio in (mix(said + silence(3.0), noise_level=30), said + silence(3.0)):
        with_gauge = [round(e.at, 2) for e in _ends(audio, silero_latest)]
        assert with_gauge == [round(e.at, 2) for e in _ends(audio, None)]
        assert len(with_gauge) == 2 and with_gauge[1] >= len(said) / 2 / 16000


def test_a_caller_who_runs_on_softly_without_a_pause_is_not_the_room(tts) -> None:
    """Nearly a second of soft opening and two seconds of soft last words, with no
    pause between: the turn fell back to the quiet room only in the caller's short
    gaps, and its opening is still not a room switched on."""
    import numpy as np

    from voice.voiced import silero_latest

    words = trim(piper("well I would like some paracetamol and some plasters and a box of tissues"))
    x = np.frombuffer(words, "<i2").astype(np.float64)
    x[: int(0.8 * 16000)] *= 0.12
    x[x.size - int(2.0 * 16000) :] *= 0.12
    said = silence(0.5) + trim(piper("Hello, I need a bit of help, please.")) + silence(2.0)
    said += x.astype("<i2").tobytes()
    audio = mix(said + silence(3.0), noise_level=30)
    last = len(said) / 2 / 16000
    (_, turn) = _ends(audio, silero_latest)
    assert last <= turn.at <= last + 0.6


def test_a_caller_who_hums_before_speaking_is_not_a_room_switched_on(tts) -> None:
    """A second turn opened by 1.9 s of a soft "hmmm", then the caller's words and,
    after a short pause, softer ones: one turn, ended after the last word. With a
    second of opening enough for a room switched on, the hum was taken for one and
    the turn split in the pause."""
    from voice.voiced import silero_latest

    hum = trim(piper("Hmmmmmmmmmmmm."))[: int(1.9 * 16000) * 2]
    said = silence(0.5) + trim(piper("Hello, I need a bit of help, please.")) + silence(2.0)
    said += _scaled(hum, 0.15) + silence(0.05) + trim(piper("I'd like some paracetamol"))
    said += silence(0.3) + _scaled(trim(piper("and some plasters, please.")), 0.15)
    last = len(said) / 2 / 16000
    audio = mix(said + silence(3.0), noise_level=30)
    (_, turn) = _ends(audio, silero_latest)
    assert last <= turn.at <= last + 0.6
