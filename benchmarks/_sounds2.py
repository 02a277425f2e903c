"""Sounds a caller's line picks up while they say nothing, written on 2026-12-05 by
someone who saw no rule and none of the project's figures, as an unseen check of the
noise filter for turns.

A second list beside `_sounds.py`, with none of its sounds: 16 body, household and
street noises, each built by hand from its own parts (clicks, resonances, shaped noise,
voiced sources, room) with numpy only and fixed seeds, so the output is deterministic.
Each make function returns 16 kHz mono signed 16-bit little-endian PCM bytes,
0.15-1.5 s long, peak-normalised to between -12 and -3 dBFS (a handset level at which a
voice activity detector may fire), over a faint line-noise floor (about -72 dBFS RMS).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np

# The first set's signal parts, the same code: the sounds are this set's own.
from _sounds import _add as _place
from _sounds import _bp, _env, _hp, _lp, _n, _noise
from _sounds import _peak1 as _top
from _sounds import _shape as _filt
from _sounds import _smooth as _wobble
from _sounds import _time as _t
from _sounds import _unit as _norm

SR = 16000

Gain = Callable[[np.ndarray], np.ndarray]
# Resonances: (centre Hz, or one centre per sample; bandwidth Hz; relative amplitude).
Peaks = Sequence[tuple[float | np.ndarray, float, float]]
# Damped sinusoids: (frequency Hz, decay time constant s, amplitude).
Modes = Sequence[tuple[float, float, float]]

# Vocal-tract shapes (rough adult averages) for the voiced and breathy parts.
V_AH: Peaks = ((780, 130, 1.0), (1240, 150, 0.6), (2600, 220, 0.25), (3600, 300, 0.1))
V_OH: Peaks = ((560, 120, 1.0), (900, 130, 0.6), (2450, 200, 0.2), (3400, 300, 0.08))
V_UH: Peaks = ((620, 120, 1.0), (1200, 150, 0.5), (2400, 200, 0.25), (3500, 300, 0.1))
NOSE: Peaks = ((280, 180, 1.0), (1050, 400, 0.35), (2300, 600, 0.2), (3600, 800, 0.08))


# --------------------------------------------------------------------------- parts


def _peaks(peaks: Peaks, floor: float = 0.0) -> Gain:
    """Sum of Lorentzian resonances over a flat floor."""

    def gain(f: np.ndarray) -> np.ndarray:
        g = np.full(np.shape(f), floor, dtype=float)
        for fc, bw, amp in peaks:
            g = g + amp / (1.0 + ((f - fc) / (bw / 2.0)) ** 2)
        return g

    return gain


def _convolve(x: np.ndarray, ir: np.ndarray) -> np.ndarray:
    size = len(x) + len(ir)
    return np.fft.irfft(np.fft.rfft(x, size) * np.fft.rfft(ir, size), size)[: len(x)]


def _decay(
    n: int, tau: float, attack: float = 0.001, hold: float = 0.0, start: float = 0.0
) -> np.ndarray:
    """Linear attack, optional hold, then exponential decay."""
    t = _t(n) - start
    e = np.zeros(n)
    a = (t >= 0) & (t < attack)
    e[a] = t[a] / attack
    e[(t >= attack) & (t < attack + hold)] = 1.0
    d = t >= attack + hold
    e[d] = np.exp(-(t[d] - attack - hold) / tau)
    return e


def _ring(n: int, rng: np.random.Generator, modes: Modes) -> np.ndarray:
    """Sum of exponentially damped sinusoids, each with a random phase."""
    t = _t(n)
    out = np.zeros(n)
    for freq, tau, amp in modes:
        out += amp * np.exp(-t / tau) * np.sin(2 * np.pi * freq * t + rng.uniform(0, 2 * np.pi))
    return out


def _tick(rng: np.random.Generator, n: int, gain: Gain, tau: float) -> np.ndarray:
    """A click: a sharp burst of shaped noise, scaled to a peak of 1."""
    return _top(_noise(rng, n, gain) * _decay(n, tau, attack=0.0002))


def _impulses(n: int, times: np.ndarray, amps: np.ndarray) -> np.ndarray:
    out = np.zeros(n)
    idx = np.round(np.asarray(times) * SR).astype(int)
    keep = (idx >= 0) & (idx < n)
    np.add.at(out, idx[keep], np.asarray(amps)[keep])
    return out


def _pulses(rng: np.random.Generator, n: int, lo: float, hi: float, tau: float) -> np.ndarray:
    """Irregular train of decaying pulses (rattle, crackle), mean about 1."""
    gaps = rng.uniform(lo, hi, int(n / SR / lo) + 2)
    times = np.cumsum(gaps) - gaps[0] * rng.uniform()
    out = _convolve(_impulses(n, times, rng.uniform(0.5, 1.0, len(times))), np.exp(-_t(n) / tau))
    return out / max(float(np.mean(out)), 1e-9)


def _voice(
    f0: np.ndarray,
    peaks: Peaks,
    rng: np.random.Generator,
    *,
    tilt: float = 1.3,
    jitter: float = 0.01,
    shimmer: float = 0.1,
) -> np.ndarray:
    """Additive glottal source with a moving pitch, shaped by (possibly moving) resonances."""
    n = len(f0)
    f = f0 * (1.0 + jitter * _wobble(rng, n, 35.0))
    phase = 2.0 * np.pi * np.cumsum(f) / SR
    tract = _peaks(peaks, 0.03)
    out = np.zeros(n)
    for k in range(1, int(7800.0 / max(float(f.min()), 50.0)) + 1):
        fk = k * f
        out += tract(fk) * k ** (-tilt) * (fk < 7800.0) * np.sin(k * phase + rng.uniform(0, 6.3))
    return _norm(out * (1.0 + shimmer * _wobble(rng, n, 45.0)))


def _cough(
    rng: np.random.Generator,
    dur: float,
    f0_points: Sequence[tuple[float, float]],
    tract: Peaks,
    *,
    voiced: float = 0.5,
    tau: float = 0.08,
    bright: float = 1.0,
    rattle: float = 0.0,
    jitter: float = 0.02,
) -> np.ndarray:
    """One cough: explosive release, turbulent airflow, voiced pitch-falling tail."""
    m = _n(dur)
    shape = _peaks(tract, 0.08)
    blast = _noise(rng, m, lambda f: shape(f) + 0.5 * bright * _bp(400, 6000)(f))
    blast *= _decay(m, 0.03, attack=0.002)
    flow = _noise(rng, m, lambda f: shape(f) * _bp(150, 5000)(f))
    flow *= _decay(m, tau, attack=0.012, start=0.004)
    ts, vs = zip(*f0_points, strict=True)
    tail = _voice(np.interp(_t(m), ts, vs), tract, rng, tilt=1.3, jitter=jitter, shimmer=0.15)
    tail = _norm(tail + 0.4 * _noise(rng, m, shape))
    tail *= _decay(m, tau * 1.3, attack=0.02, hold=0.02, start=0.025)
    x = blast + 0.6 * flow + voiced * tail
    if rattle > 0:
        x *= 1.0 - 0.7 * rattle + 0.7 * rattle * _pulses(rng, m, 0.012, 0.03, 0.004)
    return _top(x)


def _reverb(
    x: np.ndarray, rng: np.random.Generator, tau: float, wet: float, dark: float = 3500.0
) -> np.ndarray:
    """Room reverberation: convolve with decaying, darkened noise after a short pre-delay."""
    m = _n(tau * 5)
    ir = _filt(rng.standard_normal(m) * np.exp(-_t(m) / tau), _lp(dark))
    ir[: _n(0.004)] = 0.0
    ir /= np.sqrt(np.sum(ir**2))
    return x + wet * _convolve(x, ir)


def _finish(x: np.ndarray, peak_db: float, seed: int) -> bytes:
    """Rumble cut, edge fades, peak normalisation, faint line noise, int16 little-endian."""
    x = _filt(np.asarray(x, dtype=float), _hp(40.0, 2))
    fade = np.linspace(0.0, 1.0, _n(0.005))
    x[: len(fade)] *= fade
    x[-len(fade) :] *= fade[::-1]
    x *= 10 ** (peak_db / 20.0) * 32767.0 / float(np.max(np.abs(x)))
    line = np.random.default_rng(seed + 7919).standard_normal(len(x))
    x += line * 32767.0 * 10 ** (-72.0 / 20.0)
    return np.clip(np.round(x), -32768, 32767).astype("<i2").tobytes()


# --------------------------------------------------------------------------- the caller


@functools.cache
def nose_hmph() -> bytes:
    """A closed-mouth 'hm-HMPH' of amusement: two puffs of air and a hum out through the nose."""
    rng = np.random.default_rng(1101)

    def puff(dur: float, f0a: float, f0b: float, hum: float) -> np.ndarray:
        m = _n(dur)
        air = _noise(rng, m, lambda f: _peaks(NOSE, 0.05)(f) * _hp(120)(f))
        voice = _voice(np.linspace(f0a, f0b, m), NOSE, rng, tilt=1.7, jitter=0.03)
        return (air + hum * voice) * _decay(m, 0.07, attack=0.012, hold=0.03)

    buf = np.zeros(_n(0.62))
    _place(buf, 0.04, puff(0.16, 140, 125, 0.4), 0.45)
    _place(buf, 0.20, puff(0.36, 150, 105, 0.6))
    m = _n(0.03)
    _place(buf, 0.46, _tick(rng, m, _bp(150, 2500), 0.004), 0.15)  # lips unsticking
    return _finish(_reverb(buf, rng, 0.04, 0.08), -8.0, 1101)


@functools.cache
def cough_smoker_rattle() -> bytes:
    """A heavy smoker's cough: two deep coughs rattling with phlegm, then a wheezing breath in."""
    rng = np.random.default_rng(1102)
    a = _cough(
        rng,
        0.50,
        [(0, 125), (0.06, 140), (0.25, 105), (0.5, 85)],
        V_OH,
        voiced=0.8,
        tau=0.12,
        bright=0.5,
        rattle=0.9,
        jitter=0.06,
    )
    b = _cough(
        rng,
        0.55,
        [(0, 115), (0.06, 130), (0.3, 95), (0.55, 80)],
        V_UH,
        voiced=0.85,
        tau=0.14,
        bright=0.4,
        rattle=1.0,
        jitter=0.07,
    )
    m = _n(0.38)
    whistle = np.sin(2 * np.pi * np.cumsum(900.0 + 40.0 * _wobble(rng, m, 6.0)) / SR)
    air = _noise(rng, m, lambda f: _peaks(V_AH, 0.2)(f) * _hp(400)(f))
    inhale = (air + 0.6 * whistle) * _env(m, [(0, 0), (0.3, 1.0), (0.38, 0.0)])
    buf = np.zeros(_n(1.45))
    _place(buf, 0.03, a)
    _place(buf, 0.50, b, 0.85)
    _place(buf, 1.04, inhale, 0.3)
    return _finish(_reverb(buf, rng, 0.05, 0.10), -4.0, 1102)


@functools.cache
def cough_child() -> bytes:
    """A small child's short, high-pitched double cough close to the phone."""
    rng = np.random.default_rng(1103)
    small = tuple((float(fc) * 1.25, bw * 1.2, amp) for fc, bw, amp in V_AH)
    a = _cough(rng, 0.20, [(0, 420), (0.03, 470), (0.2, 360)], small, voiced=0.55, tau=0.045)
    b = _cough(rng, 0.24, [(0, 400), (0.03, 450), (0.24, 330)], small, voiced=0.6, tau=0.05)
    buf = np.zeros(_n(0.62))
    _place(buf, 0.04, a)
    _place(buf, 0.29, b, 0.85)
    return _finish(_reverb(buf, rng, 0.05, 0.12), -6.0, 1103)


@functools.cache
def swallow_gulp() -> bytes:
    """A loud gulp of water at the mouthpiece: tongue click, glug, throat clunk, breath out."""
    rng = np.random.default_rng(1104)
    buf = np.zeros(_n(0.70))
    m = _n(0.08)
    tongue = _tick(rng, m, _bp(400, 5000), 0.0015)
    tongue += _top(_ring(m, rng, [(210, 0.012, 0.8), (520, 0.008, 0.5), (1300, 0.004, 0.3)]))
    _place(buf, 0.04, tongue, 0.6)
    for at, f0, amp in ((0.11, 320.0, 1.0), (0.16, 420.0, 0.7), (0.20, 360.0, 0.55)):
        mb = _n(0.07)
        tb = _t(mb)
        rising = np.sin(2 * np.pi * np.cumsum(f0 * (1.0 + 6.0 * tb)) / SR)  # a bubble's chirp
        _place(buf, at, rising * np.exp(-tb / 0.018) * (1 - np.exp(-tb / 0.001)), amp)
    mc = _n(0.12)
    clunk = _top(_ring(mc, rng, [(110, 0.03, 1.0), (240, 0.02, 0.7), (470, 0.012, 0.4)]))
    _place(buf, 0.27, clunk + 0.3 * _tick(rng, mc, _bp(200, 2500), 0.004), 0.9)
    me = _n(0.28)
    sigh = _noise(rng, me, lambda f: _peaks(NOSE, 0.05)(f) * _hp(150)(f))
    _place(buf, 0.40, sigh * _env(me, [(0, 0), (0.04, 1.0), (0.28, 0.0)]), 0.2)
    return _finish(_reverb(buf, rng, 0.03, 0.06), -8.0, 1104)


@functools.cache
def lip_smack() -> bytes:
    """Dry lips parted with a wet smack, twice, as if about to speak and then thinking better."""
    rng = np.random.default_rng(1105)

    def smack() -> np.ndarray:
        m = _n(0.08)
        wet = _ring(
            m,
            rng,
            [(rng.uniform(550, 700), 0.007, 1.0), (rng.uniform(1300, 1600), 0.005, 0.6)],
        )
        unstick = _tick(rng, m, _bp(300, 7000), 0.0008) + 0.8 * _top(wet)
        out = np.zeros(m)
        for lag, amp in ((0.0, 1.0), (0.006, 0.55), (0.013, 0.3), (0.021, 0.15)):
            _place(out, lag, unstick, amp)
        return out

    buf = np.zeros(_n(0.50))
    _place(buf, 0.05, smack())
    _place(buf, 0.31, smack(), 0.7)
    return _finish(_reverb(buf, rng, 0.03, 0.06), -10.0, 1105)


@functools.cache
def tongue_click_tsk() -> bytes:
    """A disapproving 'tsk, tsk': two sharp clicks of the tongue off the ridge behind the teeth."""
    rng = np.random.default_rng(1106)

    def tsk() -> np.ndarray:
        m = _n(0.05)
        mouth = _ring(
            m,
            rng,
            [
                (rng.uniform(2200, 2600), 0.0035, 1.0),
                (rng.uniform(3600, 4100), 0.0025, 0.6),
                (1150, 0.004, 0.35),
            ],
        )
        return _tick(rng, m, _hp(1200), 0.0006) + 0.9 * _top(mouth)

    buf = np.zeros(_n(0.42))
    _place(buf, 0.04, tsk())
    _place(buf, 0.20, tsk(), 0.85)
    return _finish(_reverb(buf, rng, 0.04, 0.10), -9.0, 1106)


@functools.cache
def yawn() -> bytes:
    """A long yawn: a deep breath in, then a breathy voiced 'aaah-ohh' sweeping up and away."""
    rng = np.random.default_rng(1107)
    mi = _n(0.36)
    inhale = _noise(rng, mi, lambda f: _peaks(V_AH, 0.2)(f) * _hp(400)(f))
    inhale *= _env(mi, [(0, 0), (0.3, 1.0), (0.36, 0.0)])
    dur = 1.0
    m = _n(dur)
    t = _t(m)
    f0 = np.interp(t, [0, 0.15, 0.4, 0.75, dur], [170, 290, 260, 170, 120])
    w = t / dur  # the mouth closes from 'ah' towards 'oh'
    tract: Peaks = tuple(
        ((1 - w) * float(a[0]) + w * float(o[0]), a[1], a[2])
        for a, o in zip(V_AH, V_OH, strict=True)
    )
    voice = _voice(f0, tract, rng, tilt=1.5, jitter=0.02, shimmer=0.15)
    air = _noise(rng, m, lambda f: _peaks(V_AH, 0.15)(f) * _hp(250)(f))
    body = (0.8 * voice + 0.8 * air) * _env(
        m, [(0, 0), (0.08, 0.7), (0.3, 1.0), (0.6, 0.8), (0.85, 0.4), (dur, 0.0)]
    )
    buf = np.zeros(_n(1.45))
    _place(buf, 0.04, inhale, 0.4)
    _place(buf, 0.42, body)
    return _finish(_reverb(buf, rng, 0.05, 0.10), -7.0, 1107)


# --------------------------------------------------------------------------- the room


@functools.cache
def chair_creak() -> bytes:
    """An office chair creaking as the caller leans back: stick-slip squeaks of wood and metal."""
    rng = np.random.default_rng(1108)
    dur = 1.0
    n = _n(dur)
    t = _t(n)
    rate = np.interp(t, [0, 0.2, 0.45, 0.7, dur], [25, 70, 110, 60, 30])
    phase = np.cumsum(rate * (1.0 + 0.15 * _wobble(rng, n, 20.0))) / SR
    slips = np.flatnonzero(np.diff(np.floor(phase)) > 0)
    weight = _env(n, [(0, 0), (0.06, 0.6), (0.3, 1.0), (0.55, 0.7), (0.75, 0.9), (0.92, 0.0)])
    imp = np.zeros(n)
    imp[slips] = weight[slips] * rng.uniform(0.5, 1.0, len(slips))
    ir = _ring(
        _n(0.06),
        rng,
        [
            (340, 0.02, 1.0),
            (760, 0.015, 0.8),
            (1480, 0.01, 0.6),
            (2650, 0.006, 0.4),
            (4100, 0.004, 0.2),
        ],
    )
    x = _top(_convolve(imp, ir))
    _place(x, 0.02, _top(_ring(_n(0.2), rng, [(90, 0.05, 1.0), (210, 0.03, 0.5)])), 0.5)
    return _finish(_reverb(x, rng, 0.08, 0.25), -8.0, 1108)


@functools.cache
def car_horn_far() -> bytes:
    """A car horn out in the street heard through a window: a short toot, then a longer blare."""
    rng = np.random.default_rng(1109)

    def honk(dur: float) -> np.ndarray:
        m = _n(dur)
        tone = np.zeros(m)
        for f in (415.0, 520.0):  # the usual two-note pair of a car horn
            ph = 2 * np.pi * np.cumsum(f * (1.0 + 0.003 * _wobble(rng, m, 8.0))) / SR
            for k in range(1, int(7000 / f) + 1):
                tone += k**-0.9 * np.sin(k * ph + rng.uniform(0, 2 * np.pi))
        tone = _filt(tone, _peaks(((500, 400, 1.0), (1500, 800, 0.7), (2900, 1000, 0.4)), 0.1))
        return _norm(tone) * _env(m, [(0, 0), (0.015, 1.0), (dur - 0.03, 1.0), (dur, 0.0)])

    n = _n(1.35)
    buf = np.zeros(n)
    _place(buf, 0.05, honk(0.18))
    _place(buf, 0.36, honk(0.62))
    buf = _filt(buf, _bp(200, 2200))  # distance and window glass
    traffic = _noise(rng, n, _lp(300, 2))
    return _finish(_reverb(buf, rng, 0.3, 0.7, dark=2000) + 0.15 * traffic, -12.0, 1109)


@functools.cache
def phone_chime() -> bytes:
    """Another mobile on the table chiming a notification: three quick rising bell-like notes."""
    rng = np.random.default_rng(1110)
    dur = 1.0
    buf = np.zeros(_n(dur))
    for at, f in ((0.03, 1046.5), (0.14, 1318.5), (0.25, 1568.0)):
        m = _n(dur - at)
        t = _t(m)
        note = np.zeros(m)
        for k, tau, amp in (
            (1.0, 0.35, 1.0),
            (2.0, 0.18, 0.35),
            (3.0, 0.1, 0.15),
            (4.2, 0.05, 0.1),
        ):
            note += amp * np.exp(-t / tau) * np.sin(2 * np.pi * k * f * t)
        _place(buf, at, note * np.minimum(t / 0.003, 1.0))
    buf = _filt(buf, _bp(700, 6000))  # a small loudspeaker
    return _finish(_reverb(buf, rng, 0.06, 0.2), -9.0, 1110)


@functools.cache
def microwave_beep() -> bytes:
    """A microwave finishing in the kitchen behind the caller: three shrill piezo beeps."""
    rng = np.random.default_rng(1111)
    dur = 0.95
    n = _n(dur)
    t = _t(n)
    f = 2000.0 * (1.0 + 0.002 * _wobble(rng, n, 5.0))
    ph = 2 * np.pi * np.cumsum(f) / SR
    tone = np.sin(ph) + np.sin(3 * ph) / 3.0  # square-ish, as a piezo buzzer sounds
    gate = np.zeros(n)
    for start in (0.03, 0.28, 0.53):
        gate += np.clip(np.minimum(t - start, start + 0.15 - t) / 0.003, 0.0, 1.0)
    x = _filt(tone * gate, _lp(5000))
    return _finish(_reverb(x, rng, 0.1, 0.35, dark=4000), -11.0, 1111)


@functools.cache
def rain_on_window() -> bytes:
    """Heavy rain on the window beside the caller: a hiss of drops with louder ticks on glass."""
    rng = np.random.default_rng(1112)
    dur = 1.4
    n = _n(dur)
    hiss = _noise(rng, n, _bp(600, 7000)) * (1.0 + 0.2 * _wobble(rng, n, 3.0))
    drops = np.zeros(n)
    for lo, hi in ((2600, 3400), (3800, 4600), (5000, 6000)):  # three sizes of drop
        count = int(rng.poisson(60 * dur))
        imp = _impulses(n, rng.uniform(0, dur, count), rng.lognormal(0.0, 0.7, count))
        m = _n(0.02)
        glass = _ring(
            m, rng, [(rng.uniform(lo, hi), 0.004, 1.0), (rng.uniform(1200, 1800), 0.003, 0.4)]
        )
        drops += _convolve(imp, _tick(rng, m, _hp(1500), 0.0008) + 0.6 * _top(glass))
    roar = _noise(rng, n, _lp(250))
    return _finish(_norm(drops) + 0.5 * hiss + 0.3 * roar, -12.0, 1112)


@functools.cache
def wind_buffet() -> bytes:
    """Wind gusting across the phone's microphone outdoors: low buffets that overload it."""
    rng = np.random.default_rng(1113)
    dur = 1.4
    n = _n(dur)
    gust = np.maximum(0.0, 0.6 + _wobble(rng, n, 4.0))
    rumble = _noise(rng, n, _lp(150, 2)) * gust * (1.0 + 0.5 * _wobble(rng, n, 25.0))
    x = np.tanh(2.5 * _top(rumble))  # the capsule and its amplifier saturate
    x += 0.15 * _noise(rng, n, _bp(300, 2000)) * gust**2
    return _finish(x * _env(n, [(0, 0), (0.05, 1.0), (dur - 0.08, 1.0), (dur, 0.0)]), -3.0, 1113)


@functools.cache
def clothing_rub() -> bytes:
    """A coat sleeve or collar rubbing over the microphone: scratchy strokes with soft thumps."""
    rng = np.random.default_rng(1114)
    dur = 1.25
    n = _n(dur)
    t = _t(n)
    gesture = _env(n, [(0, 0), (0.08, 0.8), (0.5, 1.0), (1.0, 0.7), (1.2, 0.0), (dur, 0.0)])
    speed = np.abs(np.sin(2 * np.pi * 2.6 * t)) * gesture  # back and forth over the mic
    friction = _noise(rng, n, _bp(250, 4500)) * speed
    hit = rng.random(n) < 0.015 * speed
    fibres = _convolve(
        _impulses(n, t[hit], rng.lognormal(0.0, 0.6, int(hit.sum()))),
        _tick(rng, _n(0.01), _bp(1500, 7000), 0.0006),
    )
    thumps = np.zeros(n)
    for k in range(1, 7):  # where the stroke turns, the fabric presses on the mic
        m = _n(0.15)
        press = _ring(
            m, rng, [(rng.uniform(70, 120), 0.03, 1.0), (rng.uniform(200, 300), 0.015, 0.4)]
        )
        _place(thumps, k / 5.2 - 0.02, _top(press), rng.uniform(0.5, 1.0))
    x = _norm(friction) + 0.5 * _norm(fibres) + 1.2 * thumps * gesture
    return _finish(_filt(x, _lp(5000)), -7.0, 1114)


@functools.cache
def pill_bottle_shake() -> bytes:
    """A plastic pill bottle shaken to see what's left: tablets rattling against its walls."""
    rng = np.random.default_rng(1115)
    dur = 1.2
    n = _n(dur)
    m = _n(0.04)

    def knock() -> np.ndarray:
        """One tablet striking the wall: a click and the short ring of thin plastic."""
        wall = _ring(
            m,
            rng,
            [
                (rng.uniform(1800, 2400), rng.uniform(0.003, 0.006), 1.0),
                (rng.uniform(3000, 3800), rng.uniform(0.002, 0.004), 0.6),
                (rng.uniform(4500, 5600), 0.002, 0.35),
                (rng.uniform(550, 700), 0.006, 0.4),
            ],
        )
        return _tick(rng, m, _hp(1500), 0.0003) + 0.7 * _top(wall)

    knocks = [knock() for _ in range(3)]
    hits: list[list[float]] = [[], [], []]
    gains: list[list[float]] = [[], [], []]
    for i in range(10):  # ten reversals, five shakes a second
        t0 = 0.05 + 0.1 * i + rng.uniform(-0.01, 0.01)
        stroke = 1.0 if i < 8 else 0.5
        for _ in range(int(rng.integers(8, 18))):
            k = int(rng.integers(3))
            hits[k].append(t0 + rng.exponential(0.012))
            gains[k].append(stroke * rng.lognormal(-0.3, 0.5))
    x = np.zeros(n)
    for k in range(3):
        x += _convolve(_impulses(n, np.array(hits[k]), np.array(gains[k])), knocks[k])
    return _finish(_reverb(x, rng, 0.04, 0.12), -6.0, 1115)


@functools.cache
def blister_foil_pop() -> bytes:
    """Tablets pushed out of a blister pack: the plastic crinkles, then the foil bursts, twice."""
    rng = np.random.default_rng(1116)
    buf = np.zeros(_n(1.1))

    def press(at: float) -> None:
        m = _n(0.03)
        for c in np.sort(rng.uniform(0.0, 0.18, 8)):  # the bubble of plastic buckling
            crinkle = _tick(rng, m, _bp(1500, 7500), 0.0015)
            crinkle += 0.5 * _top(_ring(m, rng, [(rng.uniform(2400, 2900), 0.002, 1.0)]))
            _place(buf, at + float(c), crinkle, rng.lognormal(-1.0, 0.4))
        mp = _n(0.06)
        pop = _tick(rng, mp, _bp(500, 7500), 0.0012)
        pop += 0.4 * _top(
            _ring(mp, rng, [(1900, 0.006, 1.0), (3300, 0.004, 0.6), (5200, 0.003, 0.4)])
        )
        tear = _noise(rng, mp, _hp(2500)) * _pulses(rng, mp, 0.001, 0.004, 0.0004)
        tear *= _decay(mp, 0.012, start=0.003)
        _place(buf, at + 0.2, pop + 0.25 * _top(tear))
        md = _n(0.05)
        drop = _top(_ring(md, rng, [(250, 0.01, 1.0), (900, 0.005, 0.4)]))
        _place(buf, at + 0.27, drop + 0.5 * _tick(rng, md, _hp(1000), 0.0005), 0.25)

    press(0.04)
    press(0.56)
    return _finish(_reverb(buf, rng, 0.04, 0.10), -7.0, 1116)


# --------------------------------------------------------------------------- list

SOUNDS: tuple[tuple[str, Callable[[], bytes]], ...] = (
    ("nose_hmph", nose_hmph),
    ("cough_smoker_rattle", cough_smoker_rattle),
    ("cough_child", cough_child),
    ("swallow_gulp", swallow_gulp),
    ("lip_smack", lip_smack),
    ("tongue_click_tsk", tongue_click_tsk),
    ("yawn", yawn),
    ("chair_creak", chair_creak),
    ("car_horn_far", car_horn_far),
    ("phone_chime", phone_chime),
    ("microwave_beep", microwave_beep),
    ("rain_on_window", rain_on_window),
    ("wind_buffet", wind_buffet),
    ("clothing_rub", clothing_rub),
    ("pill_bottle_shake", pill_bottle_shake),
    ("blister_foil_pop", blister_foil_pop),
)

__all__ = ["SR", "SOUNDS"]
