"""A call's two-track recording, on a clock the test moves."""

from __future__ import annotations

import wave

import numpy as np

from voice.frames import AudioFrame
from voice.recording import RATE, Recording


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def tone(seconds: float, rate: int, level: int = 8000) -> AudioFrame:
    return AudioFrame.from_samples(np.full(int(seconds * rate), level), rate)


def loud_seconds(track: np.ndarray) -> list[tuple[float, float]]:
    """Where a track holds sound, as (start, end) seconds."""
    on = np.abs(track) > 1000
    edges = np.flatnonzero(np.diff(np.concatenate([[0], on.astype(int), [0]])))
    return [
        (round(a / RATE, 2), round(b / RATE, 2))
        for a, b in zip(edges[::2], edges[1::2], strict=True)
    ]


def tracks(recording: Recording, path) -> np.ndarray:
    recording.save(path)
    with wave.open(str(path)) as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (2, 2, RATE)
        return np.frombuffer(w.readframes(w.getnframes()), "<i2").reshape(-1, 2)


def test_each_side_is_placed_where_it_happened_and_jitter_leaves_no_gaps(tmp_path) -> None:
    clock = Clock()
    with Recording(clock=clock, folder=tmp_path) as recording:
        placed(recording, clock, tmp_path)


def placed(recording: Recording, clock: Clock, tmp_path) -> None:
    # The caller talks for a second, in 20 ms packets at 8 kHz that arrive a little late.
    for n in range(50):
        clock.now = 0.02 * (n + 1) + (0.03 if n % 7 == 0 else 0.0)
        recording.heard(tone(0.02, 8000))
    # Silence (push-to-talk released), then the reply: 1.5 s at 16 kHz from t = 2 s,
    # sent 0.1 s ahead of when it plays.
    for n in range(75):
        clock.now = 2.0 + 0.02 * n - 0.1 + 0.02
        recording.said(tone(0.02, 16000))
    both = tracks(recording, tmp_path / "call.wav")
    [(a, b)] = loud_seconds(both[:, 0])
    assert a < 0.03 and abs(b - a - 1.0) < 0.03  # one unbroken second
    [(c, d)] = loud_seconds(both[:, 1])
    assert abs(c - 1.9) < 0.05 and abs(d - c - 1.5) < 0.03


def test_a_barge_in_cuts_what_the_caller_never_heard() -> None:
    clock = Clock()
    with Recording(clock=clock) as recording:
        clock.now = 3.0
        recording.said(tone(3.0, 16000))  # queued well ahead of playback
        clock.now = 1.0
        recording.interrupted()  # the caller spoke over it one second in
        assert abs(recording.assistant.cursor - 1.0) < 0.01
        recording.said(tone(0.5, 16000))  # what is said next follows the cut
        assert abs(recording.assistant.cursor - 1.5) < 0.01


def test_tracks_stop_at_their_limit_and_live_on_disk_not_in_memory(tmp_path) -> None:
    clock = Clock()
    recording = Recording(max_s=1.0, clock=clock, folder=tmp_path)
    clock.now = 2.0
    recording.heard(tone(2.0, 16000))
    assert recording.caller.cursor == 1.0
    # The tracks are unnamed temporary files: nothing to clean up after a crash.
    assert list(tmp_path.iterdir()) == []
    both = tracks(recording, tmp_path / "call.wav")
    assert len(both) == RATE and (both[:, 0] == 8000).all() and (both[:, 1] == 0).all()
    recording.close()
    assert [p.name for p in tmp_path.iterdir()] == ["call.wav"]  # no .part left
