"""Whether a frame webrtcvad takes for voice is the caller or the room behind them.

webrtcvad takes a road, a mains hum and a television's talkers for voice. Under any of
them a turn never fell silent, so it ended only at `VadConfig.max_utterance_s`, 13 s
after the caller stopped, and the noise that went on then started the next turn and
cut the reply. `LineNoise` judges each frame the detector takes for voice:

- **steady noise** (a road, a hum): inside a turn, frames much quieter than the turn's
  voice, through a stretch webrtcvad held on through, are asked of a second model
  (the gauge, Silero); no speech to it is the room;
- **talkers** (a television): speech to Silero too, so told by level. When Silero hears
  speech in such a quiet stretch, its last 300 ms are the room if they are both far
  under the turn's voice and near the room's level, as heard outside any utterance,
  and the room itself is speech to Silero (a television, not a hum). A caller's quiet
  words in a quiet room are far above that level; a pause between them under a
  television is not. The end-of-turn model misjudges pauses under talkers, so a turn
  that had them ends only after the hold (`talkers_heard`). A television switched on
  between two turns opens the next itself; the turn's opening is then the room, if it
  was heard alone for 2.5 s and the turn never fell back to the quiet before;
- **after a turn**, the level of what was judged the room is kept: voice near it
  starts a turn only if the gauge hears speech (steady noise), or only well above it
  (talkers, which the gauge cannot tell from the caller).

Every figure is in docs/performance.md, "A turn under steady room noise", "Talkers
behind the caller" and "A television switched on between two turns".

Over 400 lines on purpose: the rules share the turn's loudness and the room's level,
and the checks that keep a caller's soft words from being taken for the room read
right only beside the rules they guard.
"""

from __future__ import annotations

import logging
from collections import deque

import numpy as np

from voice.voiced import LATEST_WINDOWS, WINDOW, SpeechGauge

log = logging.getLogger("voice.vad")

# What the gauge reads when a frame is in doubt: the latest 128 ms, Silero's last
# window after three more (`voice.voiced.silero_latest`).
GAUGE_WINDOW_BYTES = LATEST_WINDOWS * WINDOW * 2
# How many voiced frames tell the turn's loudness: 200 ms, as `min_speech_ms`.
LOUD_FRAMES_KNOWN = 10
GAUGE_EVERY = 4
# Quiet frames since the turn was last at its loudness before any is asked about: 300 ms.
QUIET_FIRST = 15
# Voice within this ratio (12 dB) of the line's steady noise needs the gauge to start a turn.
NEW_TURN_ABOVE = 4.0
# Talkers: 300 ms (in frames) under this share of the turn's loud frames (their 90th
# percentile), and within `FLOOR_WITHIN` of the room's level (200 ms levels,
# `FLOOR_FRAMES`; see `ROOM_HEARD`), is the room.
# Measured on 72 sentences under babble, both bands: 300 ms of a caller's words sat at 0.28 of
# their loudness or more (1st percentile); the talkers after them at 0.13 at most at
# 20 dB SNR and 0.22 (median) at 10 dB, and at twice the room's level or less 99 % of
# the time. At 5 times it, words a few dB over a hum were taken for the room
# (`tests/voice/test_vad.py`).
ROOM_FRAMES = 15
ROOM_BELOW = 0.27
FLOOR_FRAMES = 10
FLOOR_WITHIN = 2.0
# Voice this far (8 dB) over the talkers' level is the caller: after a turn over them,
# it starts a turn, and inside one it is never taken for them. A 20 ms frame of babble
# rose above twice its median 1 % of the time.
TALKERS_ABOVE = 2.5
# A turn has had talkers behind it after this many frames in one quiet stretch (300 ms).
# Not fewer: Silero hears the end of a caller's last word in the room after it, and
# one such verdict over a hum held that turn's end as long as a television's.
TALKERS_HEARD = 15
# How much each frame judged to be talkers moves their level: about a second's memory.
# With a fifth of a second (as for steady noise, `STEADY_MOVE`), a lull among them at
# the end of a turn set the level low, and their next words started a turn.
TALKERS_MOVE = 0.02
STEADY_MOVE = 0.1
# Frames well under the room's level, in a row, that tell it went quiet (500 ms): the
# lulls between a television's talkers are shorter, and drew its level down until its
# own words started turns.
QUIET_AGAIN = 25
# The room's level is the median 200 ms of the last second heard outside any utterance
# (in frames), once there are this many windows of it (380 ms of the room alone).
ROOM_HEARD = 50
ROOM_KNOWN = 10
# A line that began with sound has no such second: a television on from the start
# opens the first turn itself. Then the turn's 200 to 500 ms (`HEAD_FRAMES`) are the
# room if their level
# is this far under the turn's voice. Talkers 10 dB under a caller sat at 0.22 of the
# caller's loud frames (median, 300 ms); a caller's own words at 0.28 or more (1st
# percentile), so a caller who opens the line keeps the rule off.
HEAD_BELOW = 0.25
HEAD_FRAMES = 15
# A room switched on between two turns (a television) is the room of the next only
# after this many frames of it alone at its start (2.5 s): a caller's soft "hmmm" or
# "so what I was wondering was" ran to 1.9 s before their louder words. The room
# before it counts as at least this level (digital silence has none; -70 dBFS).
OPENING_FRAMES = 125
SILENCE_RMS = 10.0
# Nor if the turn's quiet stretches (the `LOW_SHARE` percentile of its 200 ms levels)
# fell back to the room before, or under this share of that opening: the talkers of a
# television sat at 0.49 of it; a caller's soft opening and soft last words, with
# their pauses, fell to 0.06.
NEVER_UNDER = 0.25
LOW_SHARE = 5
# The room's audio kept for the gauge to hear: four of its 128 ms windows. Asked of one,
# through the phone band it heard no speech in a television often enough that 82 of 108
# turns ran to the cap again; talkers are heard if any of the four is speech.
ROOM_CLIPS = 4
ROOM_CLIP_BYTES = ROOM_CLIPS * GAUGE_WINDOW_BYTES


class LineNoise:
    """One line's room noise, judged frame by frame for the turn detector: its state
    runs from turn to turn, as the room does."""

    def __init__(self, gauge: SpeechGauge, *, quieter_than: float, noise_below: float) -> None:
        self._gauge: SpeechGauge | None = gauge
        self._quieter_than = quieter_than
        self._noise_below = noise_below
        self._recent: deque[bytes] = deque()  # the frames the gauge reads
        self._recent_bytes = 0
        self._powers: deque[float] = deque(maxlen=max(ROOM_FRAMES, FLOOR_FRAMES))
        self._room_levels: deque[float] = deque(maxlen=ROOM_HEARD)  # 200 ms levels, the room alone
        self._room_clip = bytearray()  # and its latest audio
        self._outside = 0  # frames in a row outside any utterance
        self._inside = 0  # and inside the one under way
        self._noise_rms = 0.0  # the room's level, as judged under the last turns
        self._talkers = False  # the line has had talkers behind a turn, and is not quiet since
        self._quiet_run = 0  # frames in a row well under the room's level, outside a turn
        self.turn_over()

    @property
    def active(self) -> bool:
        """False once the gauge failed: the detector is webrtcvad alone, as before."""
        return self._gauge is not None

    def turn_over(self) -> None:
        """The detector's turn ended; what was learnt of the room is kept."""
        self._loud: list[float] = []  # the turn's voiced frames at its loudness
        self._loud_p90 = 0.0
        self._loud_known = 0  # how many of `_loud` the 90th percentile was read off
        self._since_loud = 0  # frames since one at the turn's loudness
        self._quiet_voiced = 0  # of those, taken for voice by webrtcvad or sustained
        self._verdict: bool | None = None  # the gauge's last: the room, through quiet frames
        self._verdict_age = 0
        self._head: list[float] = []  # the utterance's levels from 200 to 500 ms in
        self._head_clip = bytearray()  # and its audio, from 200 ms in
        # Whether the room under this turn is speech to the gauge, by where it was heard:
        # outside any utterance, or in this turn's opening (`_room_level`).
        self._room_talks: dict[bool, bool] = {}
        self._room_in_head = False  # the room's level was read off this turn's opening
        self._levels: list[float] = []  # the turn's 200 ms levels
        self._low: tuple[int, float] = (0, 0.0)  # their `LOW_SHARE` percentile, of how many
        # The turn's frames until its head is known, then the level far over its head,
        # and the first frame of the turn at it.
        self._opening: list[float] = []
        self._far_over: float | None = None
        self._first_loud: int | None = None
        # `_voice_over`'s last, for how many loud frames and over what room; the head's
        # median, for how many of its levels (both read on every voiced frame).
        self._voice_p90: tuple[int, float, float] = (0, 0.0, 0.0)
        self._head_median: tuple[int, float] = (0, 0.0)
        # The room's level under this turn, once read: `_room_levels` does not change
        # during it.
        self._floor: float | None = None
        self._room_run = 0  # frames of this quiet stretch judged the room
        self._talkers_seen = False  # and one of them by level, the gauge hearing speech
        self.talkers_heard = False  # this turn had `TALKERS_HEARD` of them in one stretch

    def judge(
        self,
        frame: bytes,
        rms: float,
        *,
        voiced: bool,
        sustained: bool,
        echo: bool,
        started: bool,
        confirmed: bool,
    ) -> bool:
        """Whether `frame` is the caller: `voiced` is webrtcvad's opinion, `sustained`
        that the frame is loud enough to hold a turn open, `echo` that it was the reply
        coming back (and so neither); `started` that an utterance is under way, and
        `confirmed` that it is a turn. Called for every frame, in order."""
        level = self._remember(frame, rms)
        caller = self._decide(rms, voiced, voiced or sustained, confirmed)
        # The room's level is learnt only from the room: not from the frame that starts
        # an utterance, nor from the reply's echo (`echo`), silence to the detector.
        outside = not (started or caller or echo)
        self._outside = self._outside + 1 if outside else 0
        self._inside = self._inside + 1 if started else 0
        if outside:
            self._room_clip += frame
            del self._room_clip[:-ROOM_CLIP_BYTES]
        if level is not None and self._outside >= FLOOR_FRAMES:
            self._room_levels.append(level)
        elif self._inside >= FLOOR_FRAMES and level is not None:
            # Digital silence (a phone that sends zeros while its caller is quiet) is the
            # quietest a turn can fall back to, not a level unknown.
            self._levels.append(level)
            if len(self._head) < HEAD_FRAMES and level:
                self._head.append(level)  # 200 ms of the utterance alone
                if len(self._head_clip) < ROOM_CLIP_BYTES:
                    self._head_clip += frame
        if started and self._first_loud is None:
            if self._far_over is None:
                self._opening.append(rms)
                if len(self._head) == HEAD_FRAMES:
                    self._far_over = self._head_level() / HEAD_BELOW
                    loud = (i for i, r in enumerate(self._opening) if r >= self._far_over)
                    self._first_loud, self._opening = next(loud, None), []
            elif rms >= self._far_over:
                self._first_loud = self._inside - 1
        return caller

    def _decide(self, rms: float, voiced: bool, voice: bool, confirmed: bool) -> bool:
        if confirmed:
            self._since_loud += 1
            if not voice:
                self._verdict = None  # a verdict holds only while frames are in doubt
                return False
            steady = self._steady_noise(rms)
            if steady or self._talkers_behind():
                # Silero takes a stretch of talkers for no speech now and then: once it
                # heard them in this stretch, a frame either rule judged the room counts.
                self._room_run += 1
                self._talkers_seen = self._talkers_seen or not steady
                talkers = (
                    self._talkers_seen
                    and self._room_run >= TALKERS_HEARD
                    and self._room_is_talkers()
                )
                self.talkers_heard = self.talkers_heard or talkers
                self._heard_room(rms, talkers=self.talkers_heard)
                return False
            if voiced and rms >= self._quieter_than * self._loud_p90:
                self._loud.append(rms)  # the turn's loudness, never its noise
            return True
        if not voice:
            self._quiet_run = self._quiet_run + 1 if 4 * rms < self._noise_rms else 0
            if self._quiet_run >= QUIET_AGAIN:
                # The room went quiet (the television off): its level falls toward it.
                self._noise_rms = 0.9 * self._noise_rms + 0.1 * rms
                self._talkers = False
            self._verdict = None
            return False
        self._quiet_run = 0
        if voiced and self._noise_rms and rms < NEW_TURN_ABOVE * self._noise_rms:
            # The room a turn was heard over goes on after it: near its level, voice
            # starts a turn only if it is the caller, or the room would start the next
            # turn the moment this one ends, and cut the reply.
            if self._talkers:
                return rms >= TALKERS_ABOVE * self._noise_rms
            return not self._gauge_hears_noise()
        self._verdict = None
        return True

    def _remember(self, frame: bytes, rms: float) -> float | None:
        """Keep the frame; the level of the last 200 ms, once there are 200 ms."""
        self._recent.append(frame)
        self._recent_bytes += len(frame)
        while self._recent_bytes - len(self._recent[0]) >= GAUGE_WINDOW_BYTES:
            self._recent_bytes -= len(self._recent.popleft())
        self._powers.append(rms * rms)
        if len(self._powers) < FLOOR_FRAMES:
            return None
        return self._level(FLOOR_FRAMES)

    def _level(self, frames: int) -> float:
        """The RMS of the last `frames` frames (as many as there are, if fewer)."""
        last = list(self._powers)[-frames:]
        return float(np.sqrt(sum(last) / len(last)))

    def _heard_room(self, rms: float, *, talkers: bool) -> None:
        if talkers and not self._talkers:
            # From the last 300 ms, not one frame: the frame may be a lull among them.
            self._noise_rms = self._level(ROOM_FRAMES)
        elif not self._noise_rms:
            self._noise_rms = rms
        move = TALKERS_MOVE if talkers or self._talkers else STEADY_MOVE
        self._noise_rms = (1 - move) * self._noise_rms + move * rms
        # Kept until the room goes quiet: through the phone band Silero sometimes took a
        # stretch of talkers for no speech, and then heard their next words as a turn.
        self._talkers = self._talkers or talkers

    def _loudness_known(self) -> bool:
        if len(self._loud) < LOUD_FRAMES_KNOWN:
            return False
        if len(self._loud) >= self._loud_known + LOUD_FRAMES_KNOWN // 2:
            # Read again every few voiced frames, not each: a percentile per frame was
            # 15 ms of the loop's CPU over the reference turn.
            self._loud_p90 = float(np.percentile(self._loud, 90))
            self._loud_known = len(self._loud)
        return True

    def _steady_noise(self, rms: float) -> bool:
        """Much quieter than the turn's voice, in a quiet stretch of `QUIET_FIRST` frames
        or more that webrtcvad took for voice at least half of, and no speech to the
        gauge."""
        if not self._loudness_known():
            return False
        if rms >= self._quieter_than * self._voice_level():
            self._verdict, self._since_loud, self._quiet_voiced = None, 0, 0
            self._room_run, self._talkers_seen = 0, False  # a new quiet stretch
            return False
        # Steady noise holds webrtcvad on through most of a quiet stretch; a caller's
        # own pause ("Hello, | I would like") has a stray voiced frame or two. Judged at
        # once, such frames gave the reference line a pause, and every turn a
        # speculative decode: +0.2 CPU-s a turn.
        self._quiet_voiced += 1
        if self._since_loud < QUIET_FIRST or 2 * self._quiet_voiced < self._since_loud:
            return False
        return self._gauge_hears_noise()

    def _talkers_behind(self) -> bool:
        """The gauge heard speech in a quiet stretch, its last 300 ms are far under the
        turn's voice and near the room's level, and the room is speech to the gauge.
        Only when the gauge hears speech: steady noise is its to judge. And only in a
        room of talkers: by level alone a caller's quiet words a few dB over a hum, or
        their next word after a pause in it, would be taken for the room."""
        if self._verdict is not False or len(self._powers) < ROOM_FRAMES:
            return False
        room = self._room_level()
        level = self._level(ROOM_FRAMES)
        return (
            level < ROOM_BELOW * self._voice_level()
            and level < FLOOR_WITHIN * room
            and self._room_is_talkers()
        )

    def _room_is_talkers(self) -> bool:
        """The room itself, where its level was read, is speech to the gauge in any of
        its last four windows: a television, not a hum. Asked once a turn for each place
        the room was read (between turns, or the turn's opening), when first needed.
        Without it, a caller's quiet words a few dB over a hum were taken for talkers,
        and the turn held 1.6 s (`tests/voice/test_vad.py`)."""
        where = self._room_in_head
        if where not in self._room_talks:
            room = bytes(self._head_clip if where else self._room_clip)
            self._room_talks[where] = False
            for end in range(len(room), 0, -GAUGE_WINDOW_BYTES):
                heard = self._ask(room[max(0, end - GAUGE_WINDOW_BYTES) : end])
                if heard is None or heard >= self._noise_below:
                    self._room_talks[where] = heard is not None
                    break
        return self._room_talks[where]

    def _room_level(self) -> float:
        """The room's level under this turn: as heard outside any utterance, else the
        turn's own opening if far under its voice; 0 when not known, which keeps the
        rule off. An opening far under the turn's voice and well over the room heard
        before is the room now: a television switched on between two turns opens the
        next one itself, and the room heard before it was quiet."""
        if self._floor is None and len(self._room_levels) >= ROOM_KNOWN:
            self._floor = float(np.median(self._room_levels))
        head = self._head_level()
        if self._floor is None:
            # Not kept: the turn's loudness is still being learnt.
            self._room_in_head = head < HEAD_BELOW * self._loud_p90
            return head if self._room_in_head else 0.0
        # The room changed only if it never fell back to what it was (a caller's own
        # pauses do, a television does not), and it was heard alone for 2.5 s before the
        # turn grew loud: a soft "well, I'd like" that runs on into the caller's words,
        # with no pause to fall back in, is not a room switched on.
        changed = (
            self._first_loud is not None
            and self._first_loud >= OPENING_FRAMES
            and FLOOR_WITHIN * max(self._floor, SILENCE_RMS) <= head
            and self._quiet_stretches() >= max(FLOOR_WITHIN * self._floor, NEVER_UNDER * head)
        )
        self._room_in_head = changed and head < HEAD_BELOW * self._voice_over(head)
        return head if self._room_in_head else self._floor

    def _head_level(self) -> float:
        """The median of the turn's opening levels so far (0 before any)."""
        if self._head_median[0] != len(self._head):
            self._head_median = (len(self._head), float(np.median(self._head)))
        return self._head_median[1]

    def _quiet_stretches(self) -> float:
        """How quiet the turn got: the `LOW_SHARE` percentile of its 200 ms levels. Not
        the least: a television's talkers pause now and then, a caller more often."""
        if not self._levels:
            return 0.0
        if self._low[0] != len(self._levels):
            self._low = (len(self._levels), float(np.percentile(self._levels, LOW_SHARE)))
        return self._low[1]

    def _voice_level(self) -> float:
        """The turn's loudness: its loud frames' 90th percentile, of those well over the
        room when the room changed under the turn (`_voice_over`)."""
        room = self._room_level()
        # Read off the turn's opening on a line whose room was heard before it: the room
        # changed under the turn (on a line's first turn the opening is all there is).
        changed = self._room_in_head and self._floor is not None
        return self._voice_over(room) if changed else self._loud_p90

    def _voice_over(self, room: float) -> float:
        """The 90th percentile of the turn's loud frames well over `room`: a television
        switched on opens the turn, and its frames were the turn's loudest until the
        caller spoke."""
        if self._voice_p90[:2] != (len(self._loud), room):
            over = [rms for rms in self._loud if rms >= FLOOR_WITHIN * room]
            p90 = float(np.percentile(over, 90)) if len(over) >= LOUD_FRAMES_KNOWN else 0.0
            self._voice_p90 = (len(self._loud), room, p90)
        return self._voice_p90[2]

    def _gauge_hears_noise(self) -> bool:
        """The gauge's verdict on the latest 128 ms: no speech. Asked again every
        `GAUGE_EVERY` frames in doubt, not each: its window spans them, and each call is
        a third of a millisecond."""
        if self._gauge is None:
            return False
        if self._verdict is None or self._verdict_age >= GAUGE_EVERY:
            heard = self._ask(b"".join(self._recent)[-GAUGE_WINDOW_BYTES:])
            if heard is None:
                return False
            self._verdict = heard < self._noise_below
            self._verdict_age = 0
        self._verdict_age += 1
        return self._verdict

    def _ask(self, clip: bytes) -> float | None:
        """The gauge's speech probability at the end of `clip`; None once it failed."""
        if self._gauge is None:
            return None
        try:
            return self._gauge(clip)
        except Exception as error:  # a broken model must not end the call
            log.warning("vad_gauge_failed error=%r", error)
            self._gauge = None  # webrtcvad alone, as before, for this detector
            self._noise_rms, self._verdict = 0.0, None
            return None
