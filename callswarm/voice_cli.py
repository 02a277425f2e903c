"""`callswarm say`, `transcribe` and `talk`: the voice parts from the command line."""

from __future__ import annotations

import asyncio
from pathlib import Path

from callswarm.agency import load_agency
from callswarm.app import build_services, open_database
from callswarm.serve import end_of_turn, whisper_path
from callswarm.settings import Settings
from callswarm.voice_bridge import SwarmResponder, TurnRecorder
from models.redact import Redaction
from voice.events import ReplyAudioEvent, ReplyTextEvent, TranscriptEvent, TurnMetricsEvent
from voice.frames import AudioFrame
from voice.resample import resample
from voice.session import VoiceSession
from voice.stt import WhisperSTT
from voice.tts import PiperTTS, bundled_voice
from voice.voiced import load_silero
from voice.wavio import read_wav, write_wav


def say(text: str, out: Path, *, steady: bool = False) -> float:
    tts = PiperTTS(bundled_voice(), deterministic=steady)
    pcm = tts.synthesize_sync(text)
    write_wav(out, pcm, tts.sample_rate)
    return len(pcm) / 2 / tts.sample_rate


def speech_to_text(settings: Settings) -> WhisperSTT:
    agency = load_agency(settings.agency)
    db = open_database(settings, agency)
    vocabulary = agency.vocabulary(db)
    db.dispose()
    return WhisperSTT(whisper_path(settings), vocabulary=vocabulary)


def transcribe(settings: Settings, wav: Path) -> tuple[str, float]:
    pcm, rate = read_wav(wav)
    result = speech_to_text(settings).transcribe_sync(resample(pcm, rate, 16000))
    return result.text, result.confidence


async def talk(settings: Settings, wav: Path, out: Path) -> list[tuple[str, str]]:
    """Run one caller file through the whole loop; write what the gateway said back."""
    services = build_services(settings)
    stt, tts = speech_to_text(settings), PiperTTS(bundled_voice())
    load_silero()  # as `serve` does: an aside's second opinion must not wait for its load
    await services.warm_up()
    session = services.engine.session(f"talk-{wav.stem}", services.swarm)
    recorder = TurnRecorder(
        services.db, session.client_id, Redaction(services.settings.redact_transcripts)
    )
    voice = VoiceSession(
        session.client_id,
        SwarmResponder(session),
        stt=stt,
        tts=tts,
        turn=end_of_turn(settings),
        output_rate=tts.sample_rate,
        realtime=False,
    )
    pcm, rate = read_wav(wav)
    audio = resample(pcm, rate, 16000) + b"\0\0" * 16000  # the caller then falls silent
    turns: list[tuple[str, str]] = []
    reply: list[bytes] = []
    try:
        for i in range(0, len(audio), 640):
            await voice.push(AudioFrame(audio[i : i + 640].ljust(640, b"\0"), 16000))
        said, sentences = "", []
        while voice.busy or not voice.events.empty():
            event = await asyncio.wait_for(voice.events.get(), timeout=300)
            if isinstance(event, TranscriptEvent):
                said = event.text
            elif isinstance(event, ReplyTextEvent):
                sentences.append(event.text)
            elif isinstance(event, ReplyAudioEvent):
                reply.append(event.frame.pcm)
            elif isinstance(event, TurnMetricsEvent):
                await recorder.record(event)
                turns.append((said, " ".join(sentences)))
                said, sentences = "", []
    finally:
        await voice.close()
        await services.aclose()
    write_wav(out, b"".join(reply), tts.sample_rate)
    return turns
