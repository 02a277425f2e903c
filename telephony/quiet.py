"""When no packets on a line is silence, and when it is packets held up.

A phone that suppresses silence sends nothing while its caller is quiet, and the voice
loop must hear that quiet as silence or no turn ever ends. A phone that sends all the
time can also go quiet for a moment: the network holds its packets back, or this
machine is too busy to read them, and then they come in a burst. Heard as silence,
that moment cuts the caller's words in two: with 0.1-0.3 s of silence put into
"Do you have any sourdough bread?", Whisper wrote "sardl bread" or "sardio bread" in 3
of 27 places, and the bakery offered every loaf but the one asked for.

The RTP timestamps tell the two apart once packets come again. A phone that was quiet
on purpose moves its clock on over the gap (RFC 3551 §4.1); a late packet carries on
where the last one stopped. So a line fills a gap with silence quickly only once its
phone has been seen to skip like that, and waits longer before then. Nothing here
reads a clock: the call passes the time in, and tests pass their own.
"""

from __future__ import annotations

SUPPRESSED_S = 0.1  # quiet this long on a line seen to suppress silence: silence
# Quiet this long on any other line: silence. Held-up packets within it are heard as
# sent; the longer, the later a phone that goes quiet unannounced has its turn end.
# Below `voice.vad.VadConfig.done_ms` (0.4 s), so no turn on such a line ends later
# than it would have: all the quiet is filled in at once when the wait is over.
LATE_S = 0.3
SKIP_S = 0.1  # a timestamp this far from where the last packet stopped: not continuous
FRAME_S = 0.02  # silence is filled in whole frames, as a phone would send it


class LineQuiet:
    """How much silence a call's inbound audio is owed: one per call, on its event loop.

    `packet` for each audio packet as it arrives, `due` when none has come for a while;
    `restart` when the quiet so far means nothing (the caller resumed from hold)."""

    def __init__(self, rate: int, now: float) -> None:
        self._rate = rate
        self._frame = round(rate * FRAME_S)
        self._heard = now  # when the last packet arrived, or the line (re)started
        self._next: int | None = None  # where the last packet's timestamp left off
        self._filled = 0  # samples of silence given since the last packet
        self.suppresses = False  # the phone has been seen to go quiet on purpose
        self.stalls = 0  # quiet filled in that the packets then showed was not silence
        self.stalled_s = 0.0  # how much silence was filled in that way

    def quiet_s(self, now: float) -> float:
        return now - self._heard

    def due(self, now: float) -> int:
        """Samples of silence to give the voice loop now (whole frames): the line's
        quiet since its last packet, less what was already given, once it has lasted."""
        quiet = now - self._heard
        if quiet < (SUPPRESSED_S if self.suppresses else LATE_S):
            return 0
        owed = round(quiet * self._rate) // self._frame * self._frame - self._filled
        if owed <= 0:
            return 0
        self._filled += owed
        return owed

    def packet(self, now: float, timestamp: int, samples: int) -> float:
        """An audio packet arrived at `now`; the silence (s) filled in before it that it
        shows was packets held up, not quiet: 0.0 when there was none."""
        stalled = 0.0
        if self._next is not None:
            # Signed, modulo 2^32: timestamps wrap, and a new source may start anywhere.
            skipped = (timestamp - self._next + 2**31) % 2**32 - 2**31
            if abs(skipped) >= SKIP_S * self._rate:
                self.suppresses = True
            elif self._filled > max(skipped, 0):
                stalled = (self._filled - max(skipped, 0)) / self._rate
                self.stalls += 1
                self.stalled_s += stalled
        self._next = (timestamp + samples) % 2**32
        self._heard = now
        self._filled = 0
        return stalled

    def restart(self, now: float) -> None:
        """Forget the quiet so far and where the timestamps were (a hold is over): the
        phone's clock ran on meanwhile, and the hold was no silence of the caller's."""
        self._heard = now
        self._next = None
        self._filled = 0
