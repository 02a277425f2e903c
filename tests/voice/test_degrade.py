"""The test callers' rooms and phone line do what the benchmarks say they do."""

from __future__ import annotations

import numpy as np
import pytest

from voice.degrade import babble, hum, mix_at_snr, rms, street, telephone

from .speech import espeak, piper

RATE = 16000


def band_energy(pcm: bytes, low: float, high: float) -> float:
    samples = np.frombuffer(pcm, dtype="<i2").astype(np.float64)
    power = np.abs(np.fft.rfft(samples)) ** 2
    freqs = np.fft.rfftfreq(samples.size, 1 / RATE)
    return float(power[(freqs >= low) & (freqs < high)].sum())


def test_the_telephone_band_leaves_nothing_above_4_khz() -> None:
    speech = piper("Do you have any ibuprofen?")
    narrow = telephone(speech)
    assert abs(len(narrow) - len(speech)) <= 4
    above = band_energy(narrow, 4100, 8000) / band_energy(narrow, 0, 8000)
    assert above < 1e-6 < band_energy(speech, 4100, 8000) / band_energy(speech, 0, 8000) / 100


@pytest.mark.parametrize("kind", ["hum", "street", "babble"])
@pytest.mark.parametrize("snr", [20.0, 10.0, 5.0])
def test_noise_is_mixed_at_the_asked_signal_to_noise_ratio(kind, snr) -> None:
    speech = piper("Could I order a box of loratadine?")
    seconds = len(speech) / 2 / RATE + 1
    noise = {
        "hum": lambda: hum(seconds),
        "street": lambda: street(seconds),
        "babble": lambda: babble([espeak("The bus was late again today.", "en-gb")], seconds),
    }[kind]()
    mixed = mix_at_snr(speech, noise, snr)
    added = np.frombuffer(mixed, "<i2").astype(float) - np.frombuffer(speech, "<i2").astype(float)
    measured = 20 * np.log10(rms(speech) / np.sqrt(np.mean(added**2)))
    assert measured == pytest.approx(snr, abs=0.5)
