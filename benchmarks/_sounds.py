"""Independent barge-in test list: non-speech caller/room sounds, stop phrases, backchannels.

Written by a helper session on 2026-12-05, before any run, without looking at the
gateway's overlap rules or any existing test list in the repo (`benchmarks/asides.py
--set fresh3`). It is longer than our ~400 lines because each of its 19 sounds is
built by hand from its own parts (onset, noisy body, voiced tail, room), and splitting
them would only scatter one list.

Every sound is synthesised here with numpy only (sox was not installed on the machine
at the time of writing), with fixed seeds, so the output is deterministic.  Each sound
function returns 16 kHz mono signed 16-bit little-endian PCM bytes, 0.1-1.5 s long,
peak-normalised to a level between -12 and -3 dBFS, with a faint line-noise floor
(about -70 dBFS RMS) instead of digital silence.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

SR = 16000

Gain = Callable[[np.ndarray], np.ndarray]
Formants = Sequence[tuple[float, float, float]]  # (centre Hz, bandwidth Hz, relative amplitude)

# Vocal-tract shapes (rough adult male/female averages) used for voiced/aspirated parts.
V_UH: Formants = ((640, 120, 1.0), (1190, 150, 0.5), (2390, 200, 0.25), (3500, 300, 0.1))
V_AH: Formants = ((800, 130, 1.0), (1250, 150, 0.6), (2600, 200, 0.25), (3600, 300, 0.1))
V_EH: Formants = ((550, 100, 1.0), (1850, 150, 0.5), (2550, 200, 0.3), (3600, 300, 0.1))
V_IH: Formants = ((420, 100, 1.0), (2000, 180, 0.45), (2750, 220, 0.3), (3700, 300, 0.12))
V_OH: Formants = ((560, 120, 1.0), (900, 130, 0.6), (2450, 200, 0.2), (3400, 300, 0.08))
V_OO: Formants = ((320, 80, 1.0), (870, 120, 0.3), (2250, 200, 0.1))
V_SCHWA: Formants = ((500, 110, 1.0), (1500, 150, 0.5), (2500, 200, 0.25), (3500, 300, 0.1))
V_M: Formants = ((250, 80, 1.0), (1150, 200, 0.08), (2400, 300, 0.04))
DOG: Formants = ((750, 250, 1.0), (1600, 350, 0.7), (2900, 500, 0.35), (4200, 600, 0.15))


# --------------------------------------------------------------------------- helpers


def _n(seconds: float) -> int:
    return int(round(seconds * SR))


def _time(n: int) -> np.ndarray:
    return np.arange(n) / SR


def _lp(fc: float, order: int = 2) -> Gain:
    return lambda f: 1.0 / np.sqrt(1.0 + (f / fc) ** (2 * order))


def _hp(fc: float, order: int = 2) -> Gain:
    return lambda f: 1.0 / np.sqrt(1.0 + (fc / np.maximum(f, 1e-3)) ** (2 * order))


def _bp(lo: float, hi: float, order: int = 2) -> Gain:
    high, low = _hp(lo, order), _lp(hi, order)
    return lambda f: high(f) * low(f)


def _formant_gain(f: np.ndarray, formants: Formants, floor: float = 0.02) -> np.ndarray:
    g = np.full(np.shape(f), floor, dtype=float)
    for fc, bw, amp in formants:
        g = g + amp / (1.0 + ((f - fc) / (bw / 2.0)) ** 2)
    return g


def _shape(x: np.ndarray, gain: Gain) -> np.ndarray:
    """Zero-phase FFT filter with a smooth magnitude response (padded against wrap-around)."""
    n = len(x)
    size = n + 4096
    spec = np.fft.rfft(x, size)
    f = np.fft.rfftfreq(size, 1.0 / SR)
    return np.fft.irfft(spec * gain(f), size)[:n]


def _unit(x: np.ndarray) -> np.ndarray:
    s = float(np.std(x))
    return x / s if s > 0 else x


def _peak1(x: np.ndarray) -> np.ndarray:
    p = float(np.max(np.abs(x)))
    return x / p if p > 0 else x


def _noise(rng: np.random.Generator, n: int, gain: Gain) -> np.ndarray:
    return _unit(_shape(rng.standard_normal(n), gain))


def _smooth(rng: np.random.Generator, n: int, cutoff: float) -> np.ndarray:
    """Slowly varying random control signal with unit standard deviation."""
    return _unit(_shape(rng.standard_normal(n), _lp(cutoff, 4)))


def _env(n: int, points: Sequence[tuple[float, float]]) -> np.ndarray:
    ts, vs = zip(*points, strict=True)
    return np.interp(_time(n), ts, vs)


def _burst_env(n: int, start: float, attack: float, tau: float, hold: float = 0.0) -> np.ndarray:
    """Linear attack, optional hold, exponential decay."""
    t = _time(n) - start
    e = np.zeros(n)
    a = (t >= 0) & (t < attack)
    e[a] = t[a] / attack
    h = (t >= attack) & (t < attack + hold)
    e[h] = 1.0
    d = t >= attack + hold
    e[d] = np.exp(-(t[d] - attack - hold) / tau)
    return e


def _voiced(
    f0: np.ndarray,
    formants: Formants,
    rng: np.random.Generator,
    tilt: float = 1.2,
    jitter: float = 0.01,
    shimmer: float = 0.08,
) -> np.ndarray:
    """Additive glottal source with a time-varying pitch, filtered by formants."""
    n = len(f0)
    f = f0 * (1.0 + jitter * _smooth(rng, n, 40.0))
    phase = 2.0 * np.pi * np.cumsum(f) / SR
    out = np.zeros(n)
    kmax = int(7600.0 / max(float(f.min()), 40.0))
    for k in range(1, kmax + 1):
        fk = k * f
        amp = _formant_gain(fk, formants) * k ** (-tilt) * (fk < 7600.0)
        out += amp * np.sin(k * phase + rng.uniform(0.0, 2.0 * np.pi))
    out *= 1.0 + shimmer * _smooth(rng, n, 50.0)
    return _unit(out)


def _modes(
    n: int, rng: np.random.Generator, modes: Sequence[tuple[float, float, float]]
) -> np.ndarray:
    """Sum of exponentially damped sinusoids (freq Hz, decay tau s, amplitude)."""
    t = _time(n)
    out = np.zeros(n)
    for freq, tau, amp in modes:
        out += amp * np.exp(-t / tau) * np.sin(2 * np.pi * freq * t + rng.uniform(0, 2 * np.pi))
    return out


def _pulse_train(n: int, rng: np.random.Generator, lo: float, hi: float, tau: float) -> np.ndarray:
    """Irregular train of decaying pulses (rattle / creak / trill), mean about 1."""
    out = np.zeros(n)
    t = _time(n)
    pos = rng.uniform(0, lo)
    while pos < n / SR:
        amp = rng.uniform(0.5, 1.0)
        m = t >= pos
        out[m] += amp * np.exp(-(t[m] - pos) / tau)
        pos += rng.uniform(lo, hi)
    return out / max(float(np.mean(out)), 1e-9)


def _add(buf: np.ndarray, at: float, x: np.ndarray, gain: float = 1.0) -> None:
    i = _n(at)
    m = min(len(x), len(buf) - i)
    if m > 0:
        buf[i : i + m] += gain * x[:m]


def _room(
    x: np.ndarray, rng: np.random.Generator, tau: float, wet: float, dark: float = 3500.0
) -> np.ndarray:
    """Small-room reverberation: convolve with decaying, darkened noise."""
    m = _n(tau * 5)
    ir = rng.standard_normal(m) * np.exp(-_time(m) / tau)
    ir = _shape(ir, _lp(dark))
    ir[: _n(0.003)] = 0.0  # pre-delay
    ir /= np.sqrt(np.sum(ir**2))
    size = len(x) + m
    rev = np.fft.irfft(np.fft.rfft(x, size) * np.fft.rfft(ir, size), size)[: len(x)]
    return x + wet * rev


def _finish(x: np.ndarray, peak_db: float, seed: int) -> bytes:
    """DC/rumble removal, edge fades, peak normalisation, faint line noise, int16 LE."""
    x = _shape(np.asarray(x, dtype=float), _hp(45.0, 2))
    fade = _n(0.004)
    ramp = np.linspace(0.0, 1.0, fade)
    x[:fade] *= ramp
    x[-fade:] *= ramp[::-1]
    x *= (10 ** (peak_db / 20.0) * 32767.0) / float(np.max(np.abs(x)))
    rng = np.random.default_rng(seed + 99991)
    x += rng.standard_normal(len(x)) * 32767.0 * 10 ** (-70.0 / 20.0)
    return np.clip(np.round(x), -32768, 32767).astype("<i2").tobytes()


# --------------------------------------------------------------------------- body sounds


def _cough_unit(
    rng: np.random.Generator,
    *,
    dur: float,
    f0_pts: Sequence[tuple[float, float]],
    vowel: Formants,
    voiced: float = 0.5,
    burst_tau: float = 0.035,
    body_tau: float = 0.08,
    tail_tau: float = 0.12,
    voice_onset: float = 0.03,
    bright: float = 1.0,
    chest: float = 0.0,
    rough: float = 0.02,
) -> np.ndarray:
    """One cough: glottal explosion, turbulent broadband body, voiced pitch-gliding tail."""
    n = _n(dur)
    t = _time(n)

    def tract(f: np.ndarray) -> np.ndarray:
        return _formant_gain(f, vowel, floor=0.08)

    # explosive release: very fast attack, broadband with vocal-tract colouring
    burst = _noise(rng, n, lambda f: 0.7 * tract(f) + 0.6 * bright * _bp(300, 6000)(f))
    burst *= _burst_env(n, 0.0, 0.002, burst_tau)
    # turbulent airflow that follows the explosion
    body = _noise(rng, n, lambda f: tract(f) * _hp(150)(f) * _lp(4500)(f))
    body *= _burst_env(n, 0.004, 0.015, body_tau)
    # voiced (vocal folds set into vibration) tail with changing pitch
    ts, vs = zip(*f0_pts, strict=True)
    f0 = np.interp(t, ts, vs)
    v = _voiced(f0, vowel, rng, tilt=1.2, jitter=rough, shimmer=0.15)
    v = 0.8 * v + 0.35 * _noise(rng, n, tract)  # breathy
    v *= _burst_env(n, voice_onset, 0.025, tail_tau, hold=0.02)
    x = burst + 0.55 * body + voiced * v
    if chest > 0:
        rattle = _pulse_train(n, rng, 0.022, 0.040, 0.006)
        low = _noise(rng, n, _bp(70, 450))
        amount = _burst_env(n, 0.005, 0.02, max(body_tau, tail_tau))
        x = x * ((1.0 - 0.6 * chest) + 0.6 * chest * rattle) + 0.8 * chest * low * rattle * amount
    return _peak1(x)


def _gasp(rng: np.random.Generator, dur: float, amp: float = 1.0) -> np.ndarray:
    """Quick inhalation between coughs: noisy, slightly voiced, crescendo then cut."""
    n = _n(dur)
    nz = _noise(rng, n, lambda f: _formant_gain(f, V_AH, 0.15) * _hp(400)(f))
    f0 = np.linspace(260, 320, n)
    v = _voiced(f0, V_AH, rng, tilt=1.5, jitter=0.03)
    env = _env(n, [(0, 0), (dur * 0.75, 1.0), (dur, 0.0)]) ** 1.5
    return amp * (nz + 0.25 * v) * env


def _lone_cough(
    seed: int,
    length: float,
    at: float,
    peak_db: float,
    *,
    room: tuple[float, float] = (0.05, 0.12),
    muffle: Gain | None = None,
    **unit: Any,
) -> bytes:
    """One cough (`_cough_unit`) at `at` in `length` seconds of room, the generator seeded
    with `seed`; `muffle`, a filter over it (then brought back to full scale)."""
    rng = np.random.default_rng(seed)
    c = _cough_unit(rng, **unit)
    if muffle is not None:
        c = _peak1(_shape(c, muffle))
    buf = np.zeros(_n(length))
    _add(buf, at, c)
    return _finish(_room(buf, rng, *room), peak_db, seed)


@functools.cache
def cough_single() -> bytes:
    return _lone_cough(
        101,
        0.55,
        0.04,
        -4.0,
        dur=0.42,
        f0_pts=[(0, 210), (0.06, 250), (0.2, 190), (0.42, 160)],
        vowel=V_UH,
        voiced=0.55,
        burst_tau=0.04,
        body_tau=0.09,
        tail_tau=0.10,
    )


@functools.cache
def cough_double() -> bytes:
    rng = np.random.default_rng(102)
    a = _cough_unit(
        rng,
        dur=0.33,
        f0_pts=[(0, 230), (0.05, 270), (0.33, 190)],
        vowel=V_AH,
        voiced=0.45,
        burst_tau=0.035,
        body_tau=0.07,
        tail_tau=0.07,
    )
    b = _cough_unit(
        rng,
        dur=0.40,
        f0_pts=[(0, 200), (0.05, 240), (0.2, 170), (0.4, 140)],
        vowel=V_UH,
        voiced=0.6,
        burst_tau=0.04,
        body_tau=0.08,
        tail_tau=0.11,
    )
    buf = np.zeros(_n(0.86))
    _add(buf, 0.03, a, 1.0)
    _add(buf, 0.39, b, 0.8)
    return _finish(_room(buf, rng, 0.05, 0.12), -4.5, 102)


@functools.cache
def cough_fit_of_three() -> bytes:
    rng = np.random.default_rng(103)
    buf = np.zeros(_n(1.42))
    starts = (0.03, 0.33, 0.61)
    gains = (1.0, 0.85, 0.7)
    for i, (s, g) in enumerate(zip(starts, gains, strict=True)):
        base = 240 - 25 * i
        c = _cough_unit(
            rng,
            dur=0.32 + 0.04 * i,
            f0_pts=[(0, base), (0.05, base + 40), (0.18, base - 20), (0.36, base - 60)],
            vowel=V_UH if i != 1 else V_AH,
            voiced=0.45 + 0.1 * i,
            burst_tau=0.035,
            body_tau=0.07,
            tail_tau=0.07 + 0.02 * i,
            rough=0.03,
        )
        _add(buf, s, c, g)
    _add(buf, 1.05, _peak1(_gasp(rng, 0.28)), 0.35)  # catching breath afterwards
    return _finish(_room(buf, rng, 0.05, 0.12), -4.0, 103)


@functools.cache
def cough_chesty() -> bytes:
    return _lone_cough(
        104,
        0.82,
        0.04,
        -4.0,
        room=(0.05, 0.10),
        dur=0.68,
        f0_pts=[(0, 130), (0.07, 150), (0.3, 115), (0.68, 95)],
        vowel=V_OH,
        voiced=0.75,
        burst_tau=0.05,
        body_tau=0.14,
        tail_tau=0.17,
        bright=0.6,
        chest=0.85,
        rough=0.05,
    )


@functools.cache
def cough_dry() -> bytes:
    return _lone_cough(
        105,
        0.34,
        0.03,
        -5.0,
        dur=0.24,
        f0_pts=[(0, 280), (0.04, 300), (0.24, 240)],
        vowel=V_IH,
        voiced=0.15,
        burst_tau=0.028,
        body_tau=0.05,
        tail_tau=0.04,
        bright=1.4,
        voice_onset=0.02,
    )


@functools.cache
def cough_muffled_into_elbow() -> bytes:
    return _lone_cough(
        106,
        0.58,
        0.04,
        -7.0,
        room=(0.06, 0.15),
        muffle=lambda f: _lp(700, 3)(f) + 0.6 * _formant_gain(f, ((220, 120, 1.0),), 0.0),
        dur=0.45,
        f0_pts=[(0, 190), (0.06, 230), (0.45, 150)],
        vowel=V_UH,
        voiced=0.6,
        burst_tau=0.045,
        body_tau=0.1,
        tail_tau=0.11,
    )


@functools.cache
def throat_clear_ahem() -> bytes:
    """'uh-HEM': short creaky schwa, then aspirated, louder 'hem' closing to a hum."""
    rng = np.random.default_rng(201)
    # "uh" with a glottal-stop onset and some creak
    d1 = 0.15
    n1 = _n(d1)
    v1 = _voiced(np.linspace(150, 135, n1), V_SCHWA, rng, tilt=1.3, jitter=0.03)
    v1 *= 0.6 + 0.4 * _pulse_train(n1, rng, 0.012, 0.02, 0.004) / 2
    v1 *= _burst_env(n1, 0.0, 0.008, 0.05, hold=0.05)
    # "hem": /h/ aspiration -> /e/ -> /m/
    d2 = 0.42
    n2 = _n(d2)
    t2 = _time(n2)
    h = _noise(rng, n2, lambda f: _formant_gain(f, V_EH, 0.1) * _hp(300)(f))
    h *= _env(n2, [(0, 0), (0.01, 0.5), (0.045, 0.6), (0.07, 0.0), (d2, 0.0)])
    f0 = np.interp(t2, [0, 0.05, 0.12, 0.25, d2], [175, 190, 165, 135, 115])
    ve = _voiced(f0, V_EH, rng, tilt=1.2, jitter=0.02)
    vm = _voiced(f0, V_M, rng, tilt=1.6, jitter=0.02)
    xf = np.clip((t2 - 0.16) / 0.03, 0.0, 1.0)
    voice = (1 - xf) * ve + 0.7 * xf * vm
    voice *= _env(n2, [(0, 0), (0.04, 0.0), (0.065, 1.0), (0.16, 0.9), (0.25, 0.6), (d2, 0.0)])
    buf = np.zeros(_n(0.72))
    _add(buf, 0.04, v1, 0.55)
    _add(buf, 0.24, voice + h)
    return _finish(_room(buf, rng, 0.05, 0.10), -6.0, 201)


@functools.cache
def throat_clear_gravelly() -> bytes:
    """Guttural 'hhhkkh-hm': rattling uvular friction, then a short creaky nasal hum."""
    rng = np.random.default_rng(202)
    d1 = 0.36
    n1 = _n(d1)
    fric = _noise(
        rng,
        n1,
        lambda f: _formant_gain(f, ((1100, 500, 1.0), (2400, 700, 0.6)), 0.05) * _hp(400)(f),
    )
    trill = _pulse_train(n1, rng, 0.018, 0.032, 0.007)
    fric *= 0.35 + 0.65 * trill / 2
    low = _voiced(np.linspace(90, 80, n1), V_SCHWA, rng, tilt=1.8, jitter=0.08, shimmer=0.3)
    fric = fric + 0.3 * low * trill / 2
    fric *= _env(n1, [(0, 0), (0.05, 0.4), (0.26, 1.0), (0.31, 1.0), (d1, 0.0)])
    d2 = 0.24
    n2 = _n(d2)
    hum = _voiced(np.linspace(125, 100, n2), V_M, rng, tilt=1.6, jitter=0.04, shimmer=0.2)
    hum *= 0.5 + 0.5 * _pulse_train(n2, rng, 0.009, 0.013, 0.003) / 2
    hum *= _env(n2, [(0, 0), (0.02, 1.0), (0.1, 0.8), (d2, 0.0)])
    buf = np.zeros(_n(0.72))
    _add(buf, 0.04, fric)
    _add(buf, 0.42, hum, 0.5)
    return _finish(_room(buf, rng, 0.05, 0.10), -6.0, 202)


@functools.cache
def sneeze() -> bytes:
    """'ah... AH... CHOO': two rising breathy inhalations, a held breath, explosive release."""
    rng = np.random.default_rng(301)

    def ah(dur: float, f0a: float, f0b: float) -> np.ndarray:
        m = _n(dur)
        v = _voiced(np.linspace(f0a, f0b, m), V_AH, rng, tilt=1.4, jitter=0.015)
        br = _noise(rng, m, lambda f: _formant_gain(f, V_AH, 0.1) * _hp(300)(f))
        env = _env(m, [(0, 0), (dur * 0.75, 1.0), (dur, 0.0)]) ** 1.5
        return (0.5 * v + 0.7 * br) * env

    d = 0.56
    m = _n(d)
    t = _time(m)
    burst = _noise(rng, m, lambda f: _formant_gain(f, ((2900, 1800, 1.0), (4800, 2000, 0.5)), 0.12))
    burst *= _burst_env(m, 0.0, 0.003, 0.07, hold=0.025)
    f0 = np.interp(t, [0, 0.06, 0.2, d], [420, 380, 260, 200])
    oo = 0.7 * _voiced(f0, V_OO, rng, tilt=1.3, jitter=0.03) + 0.5 * _noise(
        rng, m, lambda f: _formant_gain(f, V_OO, 0.1)
    )
    oo *= _burst_env(m, 0.035, 0.03, 0.12, hold=0.05)
    choo = burst + 0.55 * oo
    buf = np.zeros(_n(1.38))
    _add(buf, 0.04, ah(0.26, 210, 260), 0.25)
    _add(buf, 0.36, ah(0.30, 240, 330), 0.38)
    _add(buf, 0.76, choo)
    return _finish(_room(buf, rng, 0.06, 0.15), -3.5, 301)


@functools.cache
def sniff() -> bytes:
    """A sharp nasal inhalation followed by a smaller second one."""
    rng = np.random.default_rng(401)

    def one(dur: float) -> np.ndarray:
        m = _n(dur)
        nz = _noise(
            rng,
            m,
            lambda f: (
                _formant_gain(f, ((1600, 900, 0.7), (3200, 1500, 1.0), (5200, 1500, 0.5)), 0.05)
                * _hp(700, 3)(f)
            ),
        )
        nz *= 1.0 + 0.25 * _smooth(rng, m, 60.0)
        return nz * _env(m, [(0, 0), (0.03, 0.8), (dur - 0.03, 1.0), (dur, 0.0)])

    buf = np.zeros(_n(0.56))
    _add(buf, 0.04, one(0.22))
    _add(buf, 0.33, one(0.13), 0.55)
    return _finish(_room(buf, rng, 0.04, 0.08), -9.0, 401)


@functools.cache
def sigh() -> bytes:
    """Audible inhale, then a long breathy exhale with a faint falling murmur."""
    rng = np.random.default_rng(501)
    di = 0.38
    ni = _n(di)
    inhale = _noise(rng, ni, lambda f: _formant_gain(f, V_UH, 0.2) * _bp(500, 5000)(f))
    inhale *= _env(ni, [(0, 0), (0.3, 1.0), (di, 0.0)])
    de = 0.95
    ne = _n(de)
    te = _time(ne)
    xf = np.clip(te / de, 0, 1)
    nz = (1 - xf) * _noise(
        rng, ne, lambda f: _formant_gain(f, V_AH, 0.1) * _hp(250)(f)
    ) + xf * _noise(rng, ne, lambda f: _formant_gain(f, V_SCHWA, 0.1) * _hp(250)(f))
    murmur = _voiced(np.interp(te, [0, 0.15, de], [150, 140, 92]), V_AH, rng, tilt=1.6, jitter=0.03)
    exhale = (nz + 0.35 * murmur) * _env(
        ne, [(0, 0), (0.08, 0.8), (0.2, 1.0), (0.55, 0.55), (de, 0.0)]
    )
    buf = np.zeros(_n(1.45))
    _add(buf, 0.04, inhale, 0.35)
    _add(buf, 0.46, exhale)
    return _finish(buf, -11.0, 501)


@functools.cache
def breath_into_mic() -> bytes:
    """Heavy exhalation straight onto the handset mic: low, gusty wind noise plus hiss."""
    rng = np.random.default_rng(502)
    n = _n(0.75)
    wind = _noise(rng, n, _lp(280, 2))
    gust = np.clip(1.0 + 0.6 * _smooth(rng, n, 9.0), 0.1, None)
    hiss = _noise(rng, n, _bp(500, 3500))
    x = (wind * gust + 0.18 * hiss) * _env(
        n, [(0, 0), (0.05, 0.0), (0.13, 1.0), (0.45, 0.85), (0.72, 0.0), (0.75, 0)]
    )
    return _finish(x, -6.0, 502)


# --------------------------------------------------------------------------- room sounds


@functools.cache
def door_shut() -> bytes:
    """A door swung shut in the room: air whoosh, heavy thud, latch click, room tail."""
    rng = np.random.default_rng(601)
    buf = np.zeros(_n(0.95))
    nw = _n(0.2)
    whoosh = _noise(rng, nw, _bp(80, 600)) * _env(nw, [(0, 0), (0.17, 1.0), (0.2, 0.3)])
    _add(buf, 0.0, whoosh, 0.04)
    m = _n(0.7)
    thud = _modes(
        m,
        rng,
        [
            (58, 0.12, 1.0),
            (87, 0.09, 0.8),
            (131, 0.07, 0.6),
            (190, 0.05, 0.45),
            (320, 0.03, 0.35),
            (540, 0.02, 0.25),
            (910, 0.012, 0.15),
        ],
    )
    hit = _noise(rng, m, _bp(200, 6000)) * np.exp(-_time(m) / 0.004)
    _add(buf, 0.2, thud + 0.5 * _peak1(hit) * np.max(np.abs(thud)))
    ml = _n(0.12)
    latch = _modes(
        ml, rng, [(2150, 0.018, 1.0), (3420, 0.012, 0.7), (4870, 0.008, 0.5), (6300, 0.005, 0.3)]
    )
    latch += 0.6 * _peak1(_noise(rng, ml, _hp(1500)) * np.exp(-_time(ml) / 0.0015))
    _add(buf, 0.226, latch, 0.35)
    return _finish(_room(buf, rng, 0.12, 0.35, dark=2500), -5.0, 601)


@functools.cache
def cup_set_down() -> bytes:
    """Ceramic mug put down on a wooden desk: click, short ring, a small rocking second contact."""
    rng = np.random.default_rng(602)

    def contact(amp: float) -> np.ndarray:
        m = _n(0.2)
        ring = _modes(
            m,
            rng,
            [
                (1340, 0.05, 1.0),
                (2890, 0.035, 0.7),
                (3420, 0.03, 0.5),
                (4910, 0.02, 0.35),
                (6170, 0.012, 0.2),
            ],
        )
        table = _modes(m, rng, [(175, 0.018, 0.9), (410, 0.012, 0.6)])
        click = _peak1(_noise(rng, m, _hp(800)) * np.exp(-_time(m) / 0.0008))
        return amp * (0.5 * ring + table + 1.2 * click)

    buf = np.zeros(_n(0.38))
    _add(buf, 0.03, contact(1.0))
    _add(buf, 0.056, contact(0.35))
    _add(buf, 0.071, contact(0.12))
    return _finish(_room(buf, rng, 0.06, 0.2), -8.0, 602)


@functools.cache
def paper_rustle() -> bytes:
    """Handling a sheet of paper (e.g. a prescription): crackly bursts in two gestures."""
    rng = np.random.default_rng(603)
    dur = 1.2
    n = _n(dur)
    gesture = _env(
        n,
        [
            (0, 0),
            (0.05, 0.2),
            (0.18, 1.0),
            (0.4, 0.5),
            (0.55, 0.15),
            (0.7, 0.9),
            (0.95, 0.4),
            (1.15, 0.0),
            (dur, 0.0),
        ],
    )
    events = np.zeros(n)
    prob = 0.02 * gesture
    hit = rng.random(n) < prob
    events[hit] = rng.lognormal(0.0, 0.8, int(hit.sum()))
    k = np.exp(-_time(_n(0.01)) / 0.0012)
    crackle_env = np.convolve(events, k)[:n]
    crackle = _noise(rng, n, lambda f: _hp(1200)(f) * _lp(7000)(f)) * crackle_env
    slide = _noise(rng, n, _bp(1800, 6500)) * gesture * 0.25
    return _finish(crackle + slide, -8.0, 603)


@functools.cache
def dog_bark() -> bytes:
    """Two barks from a medium dog across the room."""
    rng = np.random.default_rng(604)

    def bark(dur: float, pts: Sequence[tuple[float, float]]) -> np.ndarray:
        m = _n(dur)
        ts, vs = zip(*pts, strict=True)
        f0 = np.interp(_time(m), ts, vs)
        v = _voiced(f0, DOG, rng, tilt=0.9, jitter=0.06, shimmer=0.25)
        nz = _noise(rng, m, lambda f: _formant_gain(f, DOG, 0.05))
        return (v + 0.45 * nz) * _burst_env(m, 0.0, 0.012, 0.05, hold=0.045)

    buf = np.zeros(_n(0.9))
    _add(buf, 0.04, bark(0.26, [(0, 480), (0.03, 690), (0.1, 560), (0.26, 380)]))
    _add(buf, 0.36, bark(0.28, [(0, 450), (0.035, 650), (0.12, 520), (0.28, 360)]), 0.85)
    buf = _shape(buf, _lp(4500, 2))  # a few metres away
    return _finish(_room(buf, rng, 0.12, 0.4, dark=3000), -7.0, 604)


@functools.cache
def keyboard_typing() -> bytes:
    """Someone typing on a laptop keyboard near the phone, including one space bar."""
    rng = np.random.default_rng(605)

    def key(space: bool, release: bool) -> np.ndarray:
        m = _n(0.05)
        t = _time(m)
        click = _peak1(_noise(rng, m, _hp(900)) * np.exp(-t / (0.0008 if release else 0.0015)))
        plastic = _modes(
            m, rng, [(rng.uniform(1600, 2600), 0.006, 0.6), (rng.uniform(3000, 4800), 0.004, 0.4)]
        )
        if space:
            body = _modes(m, rng, [(160, 0.014, 1.0), (880, 0.01, 0.5)])
        else:
            body = _modes(m, rng, [(rng.uniform(260, 380), 0.007, 0.6)])
        return click + plastic + (0.3 if release else 1.0) * body

    buf = np.zeros(_n(1.3))
    times: list[float] = []
    pos = 0.05
    while pos < 1.1:
        times.append(pos)
        pos += rng.uniform(0.07, 0.2)
    for i, t0 in enumerate(times):
        space = i == len(times) // 2
        amp = rng.uniform(0.6, 1.0) * (1.3 if space else 1.0)
        _add(buf, t0, key(space, False), amp)
        _add(buf, t0 + rng.uniform(0.06, 0.11), key(space, True), amp * 0.4)
    return _finish(_room(buf, rng, 0.05, 0.15), -8.0, 605)


@functools.cache
def keys_jangle() -> bytes:
    """A bunch of keys picked up and shaken: clustered metallic impacts with long rings."""
    rng = np.random.default_rng(606)
    keys = [
        [
            (rng.uniform(2500, 7400), rng.uniform(0.05, 0.22), rng.uniform(0.3, 1.0))
            for _ in range(4)
        ]
        for _ in range(5)
    ]
    buf = np.zeros(_n(1.0))
    hits = np.concatenate([rng.normal(0.12, 0.05, 14), rng.normal(0.42, 0.06, 12)])
    for t0 in np.sort(np.clip(hits, 0.03, 0.7)):
        m = _n(0.25)
        k = keys[int(rng.integers(len(keys)))]
        ring = _modes(m, rng, k)
        tick = _peak1(_noise(rng, m, _hp(2000)) * np.exp(-_time(m) / 0.0005))
        _add(buf, float(t0), ring + 0.8 * tick, rng.lognormal(0.0, 0.5))
    return _finish(_room(buf, rng, 0.06, 0.15), -9.0, 606)


@functools.cache
def handset_bump() -> bytes:
    """The phone knocked/moved against a surface, then a short scrape of handling noise."""
    rng = np.random.default_rng(607)
    buf = np.zeros(_n(0.6))
    m = _n(0.3)
    thud = _modes(m, rng, [(95, 0.05, 1.0), (165, 0.035, 0.7), (260, 0.025, 0.5), (600, 0.01, 0.3)])
    click = _peak1(_noise(rng, m, _bp(300, 6000)) * np.exp(-_time(m) / 0.002))
    _add(buf, 0.04, thud + 0.7 * click)
    ns = _n(0.36)
    scrape = _noise(rng, ns, _bp(150, 1800)) * np.clip(1.0 + 0.8 * _smooth(rng, ns, 25.0), 0, None)
    scrape *= _env(ns, [(0, 0), (0.05, 1.0), (0.28, 0.7), (0.36, 0.0)])
    _add(buf, 0.17, scrape, 0.35)
    return _finish(buf, -6.0, 607)


# --------------------------------------------------------------------------- lists

SOUNDS: tuple[tuple[str, Callable[[], bytes]], ...] = (
    ("cough_single", cough_single),
    ("cough_double", cough_double),
    ("cough_fit_of_three", cough_fit_of_three),
    ("cough_chesty", cough_chesty),
    ("cough_dry", cough_dry),
    ("cough_muffled_into_elbow", cough_muffled_into_elbow),
    ("throat_clear_ahem", throat_clear_ahem),
    ("throat_clear_gravelly", throat_clear_gravelly),
    ("sneeze", sneeze),
    ("sniff", sniff),
    ("sigh", sigh),
    ("breath_into_mic", breath_into_mic),
    ("door_shut", door_shut),
    ("cup_set_down", cup_set_down),
    ("paper_rustle", paper_rustle),
    ("dog_bark", dog_bark),
    ("keyboard_typing", keyboard_typing),
    ("keys_jangle", keys_jangle),
    ("handset_bump", handset_bump),
)

# Short things a caller says to a pharmacy line to stop, correct or question the reply.
STOPS: tuple[str, ...] = (
    "Nope, nope.",
    "Whoa, whoa, whoa.",
    "Sorry, come again?",
    "That's not what I asked.",
    "No, the metformin.",
    "Actually, it's for my husband.",
    "Can I stop you there?",
    "Um, no, that's wrong.",
    "Hold up.",
    "Huh?",
    "I didn't catch that.",
    "Just a sec.",
    "Nah, the blood pressure one.",
    "Uh, how much?",
)

# Listener feedback that does not mean "stop".
BACKCHANNELS: tuple[str, ...] = (
    "Mm-kay.",
    "Yep.",
    "Alright.",
    "Got it.",
    "Gotcha.",
    "Yup, yup.",
    "Mm.",
    "Oh, good.",
    "Sounds good.",
    "Perfect.",
)

__all__ = ["SR", "SOUNDS", "STOPS", "BACKCHANNELS"]
