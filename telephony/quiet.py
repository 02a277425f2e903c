"""When no packets on a line is silence, and when it is packets held up.

A phone that suppresses silence sends nothing while its caller is quiet, and the voice
loop must hear that quiet as silence or no turn ever ends. A phone that sends all the
time can also go quiet for a moment: the network holds its packets back, or this
machine is too busy to read them, and then they come in a burst. Heard as silence,
that moment cuts the caller's words in two: with 0.1-0.3 s of silence put into
"Do you have any sourdough bread?", Whisper wrote "sardl bread" or "sardio bread" in 3
of 27 places, and the bakery offered every loaf but the one asked for.

The RTP headers tell the two apart once packets come again. A phone that was quiet on
purpose sent nothing, so its next packet's sequence number follows the last one's,
while its timestamp has moved on over the gap (RFC 3550 §5.1, RFC 3551 §4.1). A late
packet carries on where the last one stopped; a lost one leaves a gap in both. And a
phone stops sending only after its own detector has heard its caller fall quiet, so
its last packets are quiet ones. A line's quiet is silence quickly only when both say
so: the phone has been seen to skip, and its last 100 ms of audio were quiet.
Otherwise it waits longer first. Nothing here reads a clock: the call passes the time
in, and tests pass their own.
"""

from __future__ import annotations

import numpy as np

SUPPRESSED_S = 0.1  # quiet this long after a quiet end, on a line seen to skip: silence
# Quiet this long on any other line: silence, all of it at once. Packets held up for
# less are heard as sent. The cost falls on a phone that stops sending without saying
# so: its pause reaches the VAD's `early_ms` (and the speculative decode) up to about
# 0.25 s later than with the 100 ms rule. A phone that sends all the time pays nothing
# (its silence comes as packets), nor does one that suppresses silence once it has
# been seen to skip: from the caller's first words, if it sent anything before them.
LATE_S = 0.3
TAIL_S = 0.1  # a phone's last audio this long was quiet: it stopped sending on purpose
SKIP_S = 0.1  # a timestamp this far from where the last packet stopped: not continuous
FRAME_S = 0.02  # silence is filled in whole frames, as a phone would send it
# A packet this loud (RMS, PCM16) is the caller's voice, not a line's hiss or a phone's
# comfort noise: the level at which `voice.vad.VadConfig.sustain_rms` holds a turn open.
VOICE_RMS = 500.0


def is_loud(pcm: bytes) -> bool:
    """Whether a packet's audio is as loud as a voice."""
    samples = np.frombuffer(pcm, dtype=np.int16).astype(np.float32)
    return samples.size > 0 and float(np.sqrt(np.mean(samples * samples))) >= VOICE_RMS


class LineQuiet:
    """How much silence a call's inbound audio is owed: one per call, on its event loop.

    `packet` for each audio packet as it arrives, `due` when none has come for a while;
    `restart` when the quiet so far means nothing (the caller resumed from hold)."""

    def __init__(self, rate: int, now: float) -> None:
        self._rate = rate
        self._frame = round(rate * FRAME_S)
        self._heard = now  # when the last packet arrived, or the line (re)started
        # The source, sequence number and timestamp the next packet would carry.
        self._next: tuple[int, int, int] | None = None
        self._filled = 0  # samples of silence given since the last packet
        self._quiet_tail = 0  # samples of quiet audio since the last loud packet
        self.suppresses = False  # the phone has been seen to go quiet on purpose
        self.stalls = 0  # quiet filled in that the packets then showed was not silence
        self.stalled_s = 0.0  # how much silence was filled in that way

    def due(self, now: float) -> int:
        """Samples of silence to give the voice loop now (whole frames): the line's
        quiet since its last packet, less what was already given, once it has lasted."""
        quiet = now - self._heard
        meant = self.suppresses and self._quiet_tail >= TAIL_S * self._rate
        if quiet < (SUPPRESSED_S if meant else LATE_S):
            return 0
        owed = round(quiet * self._rate) // self._frame * self._frame - self._filled
        if owed <= 0:
            return 0
        self._filled += owed
        return owed

    def packet(
        self, now: float, *, ssrc: int, sequence: int, timestamp: int, samples: int, loud: bool
    ) -> float:
        """An audio packet arrived at `now` (`loud`: as loud as a voice); the silence (s)
        filled in before it that it shows was packets held up, not quiet: 0.0 when there
        was none."""
        stalled = 0.0
        if self._next is not None and self._next[0] == ssrc:
            _, next_sequence, next_timestamp = self._next
            # Signed, modulo 2^16 and 2^32: both wrap.
            lost = (sequence - next_sequence + 2**15) % 2**16 - 2**15
            skipped = (timestamp - next_timestamp + 2**31) % 2**32 - 2**31
            if lost == 0 and abs(skipped) >= SKIP_S * self._rate:
                # Nothing lost, yet the clock moved on (or was set back, as sipp does
                # between files): the phone was quiet on purpose.
                self.suppresses = True
            elif 0 <= skipped < self._filled:  # what was lost meanwhile was not quiet
                stalled = (self._filled - skipped) / self._rate
                self.stalls += 1
                self.stalled_s += stalled
        # A new source (a transfer, a re-INVITE) starts its clock anywhere: nothing to
        # compare with until its second packet.
        self._next = (ssrc, (sequence + 1) % 2**16, (timestamp + samples) % 2**32)
        self._heard = now
        self._filled = 0
        self._quiet_tail = 0 if loud else self._quiet_tail + samples
        return stalled

    def restart(self, now: float) -> None:
        """Forget the quiet so far and where the timestamps were (a hold is over): the
        phone's clock ran on meanwhile, and the hold was no silence of the caller's."""
        self._heard = now
        self._next = None
        self._filled = 0
        self._quiet_tail = 0
