"""Speech to text on synthesised callers, biased with the catalogue's names.

What the product needs is the chain: what the recogniser hears must lead the
catalogue search to the right product first (search is built for near-misses
such as "momprazole").
"""

from __future__ import annotations

import asyncio

import pytest
from sqlmodel import Session

from models import make_engine
from models.catalogue import load_catalogue
from models.search import search_products
from voice.stt import collapse_repeats, degenerate

from .conftest import VOCABULARY
from .speech import espeak, mix, piper, silence

PHRASES = [
    ("I would like two boxes of paracetamol please.", "paracetamol"),
    ("Do you have any ibuprofen?", "ibuprofen"),
    ("I need loratadine for my hay fever.", "loratadine"),
    ("Can I get some omeprazole?", "omeprazole"),
    ("Do you sell cetirizine tablets?", "cetirizine"),
    ("I'd like some loperamide for diarrhoea.", "loperamide"),
]
VOICES = ("piper", "en-us", "en-gb+f3", "en-us+m5")
# Recognition is a rate, not a yes or no: tiny.en misses some names in some voices
# (espeak en-us "omeprazole" comes out as "Symmom, Pranol"). Measured here: 23 of 24.
# A miss makes the agent ask again; a wrong product is worse, so there must be none.
AT_LEAST_RIGHT = 19


@pytest.fixture(scope="module")
def catalogue():
    engine = make_engine("sqlite:///:memory:")
    load_catalogue(engine)
    yield engine
    engine.dispose()


def test_what_is_heard_finds_the_right_product(stt, tts, catalogue) -> None:
    right, wrong, missed = [], [], []
    for phrase, name in PHRASES:
        for voice in VOICES:
            audio = piper(phrase) if voice == "piper" else espeak(phrase, voice)
            result = stt.transcribe_sync(mix(silence(0.3) + audio + silence(0.3), noise_level=100))
            assert 0.0 < result.confidence <= 1.0
            assert result.audio_s > 1.0
            with Session(catalogue) as db:
                hits = search_products(db, result.text, limit=1)
            heard = (voice, result.text, hits[0].product.name if hits else None)
            if not hits:
                missed.append(heard)
            elif hits[0].product.name.lower().startswith(name):
                right.append(heard)
            else:
                wrong.append(heard)
    assert not wrong
    assert len(right) >= AT_LEAST_RIGHT, missed


def test_the_transcript_is_the_same_for_the_same_audio(stt, tts) -> None:
    audio = piper("Do you have any cetirizine tablets?")
    assert stt.transcribe_sync(audio).text == stt.transcribe_sync(audio).text


@pytest.mark.parametrize(
    ("heard", "kept"),
    [
        (
            "Can I speak to a person? Can I speak to a person? Can I speak to",
            "Can I speak to a person?",
        ),
        ("Yes, not slide. Yes, not slide.", "Yes, not slide."),
        ("No thanks, Mass oil, No thanks, Mass oil,", "No thanks, Mass oil"),
        (
            "I need Loratadine for my caffeine work, I need Lore attending for my caffeine work,",
            "I need Loratadine for my caffeine work",
        ),
        # Not a loop: the opening words come back with different words after them.
        ("Can I get paracetamol, can I get it delivered today?", None),
        ("Two boxes please.", None),
        ("", None),
    ],
)
def test_a_transcript_that_starts_over_is_cut_where_it_loops(heard, kept) -> None:
    assert collapse_repeats(heard) == (heard if kept is None else kept)


def test_a_fitted_window_hears_what_the_full_window_hears(tts) -> None:
    from voice.stt import WhisperSTT, bundled_whisper

    full = WhisperSTT(bundled_whisper(), vocabulary=VOCABULARY, context="full", workers=1)
    fitted = WhisperSTT(bundled_whisper(), vocabulary=VOCABULARY, context="fit", workers=1)
    audio = piper("Hello, I would like to buy two boxes of paracetamol for my fever, please.")
    heard = fitted.transcribe_sync(audio)
    assert heard.text == full.transcribe_sync(audio).text
    assert "paracetamol" in heard.text.lower()
    assert 0.5 < heard.confidence <= 1.0


@pytest.mark.parametrize(
    ("text", "looping"),
    [
        ("Ib-y-y-y-y-y-y-y-", True),
        ("Yes, that's right. " * 5, True),
        ("Do you have any ibuprofen?", False),
        ("No, no.", False),
        ("Hello, I would like to buy two boxes of Paracetamol for my fever, please.", False),
    ],
)
def test_a_looping_decode_is_recognised_for_a_full_window_retry(text, looping) -> None:
    assert degenerate(text) is looping


def test_a_long_utterance_near_the_30_s_window_still_decodes(stt, tts) -> None:
    sentence = piper("I would like two boxes of paracetamol please.")
    long = (sentence + silence(0.5)) * (int(28.5 * 32000) // len(sentence + silence(0.5)) + 1)
    long = long[: int(28.5 * 32000)]  # 28.5 s: fitted, and the silence pad would reach 31 s
    heard = stt.transcribe_sync(long)
    assert "paracetamol" in heard.text.lower()
    assert heard.audio_s == pytest.approx(28.5)


async def test_queued_speech_work_leaves_the_shared_threads_free(stt, tts) -> None:
    """Many callers' decodes and syntheses queue in the engines' own threads: a database
    write (the swarm's store runs in asyncio's shared threads) need not wait for them."""
    audio = piper("Do you have any ibuprofen?")
    loop = asyncio.get_running_loop()
    tts.clear_cache()
    speech = [loop.create_task(stt.transcribe(audio)) for _ in range(6)]
    speech += [loop.create_task(tts.synthesize(f"Order {n} is on its way.")) for n in range(6)]
    await asyncio.sleep(0)  # one pass of the loop: each task hands its work to a thread
    await asyncio.to_thread(lambda: None)
    finished = sum(task.done() for task in speech)
    await asyncio.gather(*speech)
    assert finished == 0


def test_the_reading_said_scores_above_readings_with_another_name(stt) -> None:
    audio = silence(0.3) + piper("Could I order a box of loratadine for my hay fever?")
    said = "Could I order a box of Loratadine for my hay fever?"
    others = [said.replace("Loratadine", name) for name in ("Famotidine", "Omeprazole", "Zinc")]
    scores = stt.score_sync(audio, [said, *others])
    assert len(scores) == 4 and all(s < 0 for s in scores)
    assert scores[0] > max(scores[1:]), scores


def test_the_whole_vocabulary_whisper_reads_is_the_names_first(stt, caplog) -> None:
    """faster-whisper reads at most 223 tokens of hotwords and cuts the rest mid-word,
    silently. Whole catalogue names used to fill that with the first 25 products."""
    from voice.stt import WhisperSTT, bundled_whisper

    read = stt._encode_text(" " + stt.hotwords)
    assert len(read) <= stt._model.max_length // 2 - 1
    for name in ("Paracetamol", "Omeprazole", "Hydrocortisone", "Fluconazole", "Sildenafil"):
        assert name in stt.hotwords.split(", "), name
    assert "heartburn" in stt.hotwords.split(", ")

    too_many = [f"Zylometa{n}oline" for n in range(200)]
    with caplog.at_level("WARNING", logger="voice.stt"):
        cut = WhisperSTT(bundled_whisper(), vocabulary=too_many, workers=1)
    kept = cut.hotwords.split(", ")
    assert kept == too_many[: len(kept)] and 0 < len(kept) < len(too_many)
    assert len(cut._encode_text(" " + cut.hotwords)) <= cut._model.max_length // 2 - 1
    assert f"kept={len(kept)} of=200" in caplog.text


def test_a_name_the_audio_does_not_hold_is_told_from_one_it_does(stt) -> None:
    """Through noise, the catalogue's prompt makes Whisper write names nobody said ("Mole,
    Sertraline, Mole," for "any paracetamol in stock"). Read again without the prompt, a
    name the audio holds stays likely; one it does not hold does not."""
    audio = silence(0.3) + piper("Hi there, do you have any paracetamol in stock?")
    assert stt.unheard_sync(audio, "Hi there, do you have any Paracetamol in stock?") == []
    made_up = "Hi there, do you have any Sertraline in stock?"
    assert stt.unheard_sync(audio, made_up) == ["Sertraline"]
    # Words the prompt does not list are never the prompt's invention.
    assert stt.unheard_sync(audio, "Hi there, do you have any marmalade in stock?") == []
    # Nor are the caller's own everyday words that the prompt happens to list.
    cold = silence(0.3) + espeak("I have a bad cold and a sore throat.", "en-gb+f3")
    assert stt.unheard_sync(cold, "I have a bad cold and a sore throat.") == []


def test_a_doubted_decode_with_an_unheard_name_is_read_without_the_prompt(stt, monkeypatch) -> None:
    """The wiring: when the check finds a name unheard, the transcript is the plain one.
    Both thresholds opened, so every listed word counts as unheard on any decode."""
    import voice.stt

    said = "I need loratadine for my hay fever."
    audio = mix(silence(0.3) + espeak(said, "en-us") + silence(0.3), 100)
    plain = stt.transcribe_sync(audio, plain=True)
    biased = stt.transcribe_sync(audio)
    # Unbiased, tiny.en hears "lore attending"; the prompt gives it the name.
    assert "Loratadine" in biased.text and "Loratadine" not in plain.text, (plain, biased)
    monkeypatch.setattr(voice.stt, "DOUBTED_DECODE", 1.0)
    monkeypatch.setattr(voice.stt, "UNHEARD_NAME", 1.0)
    checked = stt.transcribe_sync(audio)
    assert checked.text == plain.text
    assert checked.confidence == pytest.approx(plain.confidence)
    assert checked.alternatives == ()
