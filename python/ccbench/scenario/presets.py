"""Application presets from the founding studies, and the fitted thin-stream
distributions of Stewart et al. Table 1.

``app = { kind = "preset", name = "voip-g711" }`` expands to the application table
below (``ccbench.scenario.presets.PRESETS``); ``interval`` and ``size`` may be given to
override the preset's.

Thin streams (Stewart Table 1): the table gives, per application, the payload size
(average, min, max) and the inter-arrival time (IAT: average, median, min, max, 1st
and 99th percentiles). We turn each into an empirical quantile function, linear
between knots, that passes through every published point and has the published mean:

- IAT knots: (0, min), (0.01, q1), (0.5, median), (0.99, q99), (1, max), plus two free
  knots solved so the mean equals the average: one at p = 0.9 (between the median and
  q99) and, when that alone cannot bring the mean down far enough (VNC, Skype: their
  maxima are extreme outliers), one at p = 0.9999 that confines the extreme tail to the
  top 0.01% of gaps.
- Between knots the quantile function is geometric (linear in the logarithm of the
  value): a heavy-tailed table such as remote desktop (median 159 ms, 99% 3892 ms,
  mean 318 ms) is only reachable if most of the mass between the median and the 99th
  percentile stays near the median. The simulator gets the curve as a dense table.
- Payload knots: (0, min), (0.99, x), (1, max) with x solved for the mean (only min,
  average and max are published); a constant size when min = max.
- "< 1 ms" in the table is taken as 0.5 ms.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["PRESETS", "STEWART_TABLE1", "fit_quantiles", "quantile_mean", "preset_app", "thin_stream_app", "ThinStream"]


@dataclass(frozen=True)
class ThinStream:
    """One row of Stewart et al. Table 1 (bytes and milliseconds)."""

    name: str
    payload_avg: float
    payload_min: float
    payload_max: float
    iat_avg: float
    iat_med: float
    iat_min: float
    iat_max: float
    iat_p1: float
    iat_p99: float


_LT1 = 0.5  # "< 1" ms in the table

#: Stewart et al., MMSys 2011, Table 1 (verbatim; "< 1" as 0.5).
STEWART_TABLE1: dict[str, ThinStream] = {
    "remote-desktop": ThinStream("Windows remote desktop", 111, 8, 1417, 318, 159, 1, 12254, 2, 3892),
    "vnc": ThinStream("VNC (from client)", 8, 1, 106, 34, 8, _LT1, 5451, _LT1, 517),
    "voip-g711-rtp": ThinStream("G.711 RTP VoIP", 180, 180, 180, 20, 20, 19, 21, 19, 21),
    "skype-udp": ThinStream("Skype (2 users) (UDP)", 111, 11, 316, 30, 24, _LT1, 20015, 18, 44),
    "skype-tcp": ThinStream("Skype (2 users) (TCP)", 236, 14, 1267, 34, 40, _LT1, 1671, 4, 80),
    "wow": ThinStream("World of Warcraft", 26, 6, 1228, 314, 133, _LT1, 14855, _LT1, 3785),
    "quake3": ThinStream("Quake 3 (from server)", 80, 40, 300, 50, 50, 30, 70, 35, 65),
}


def quantile_mean(p, v) -> float:
    """Mean of the distribution whose quantile function is linear between (p, v)."""
    p, v = np.asarray(p, float), np.asarray(v, float)
    return float(np.sum(np.diff(p) * (v[1:] + v[:-1]) / 2))


def _geometric(p: np.ndarray, v: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Quantile function interpolated geometrically (linear in log value) between knots:
    heavy-tailed tables keep most mass near the median, as measured traces do."""
    return np.exp(np.interp(u, p, np.log(v)))


def _dense_grid(p: list[float]) -> np.ndarray:
    """Probabilities at which the geometric curve is tabulated for the simulator (which
    interpolates linearly): 64 points per segment."""
    return np.unique(np.concatenate([np.linspace(a, b, 65) for a, b in zip(p[:-1], p[1:])]))


def _bisect(f, lo: float, hi: float, target: float) -> float:
    """x in [lo, hi] with f(x) = target for increasing f, clamped to the ends."""
    if f(lo) >= target:
        return lo
    if f(hi) <= target:
        return hi
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < target else (lo, mid)
    return (lo + hi) / 2


def fit_quantiles(
    knots: list[tuple[float, float]], mean: float, body: float = 0.9, tail: float | None = 0.9999
) -> tuple[list[float], list[float]]:
    """Quantile table through ``knots`` (geometric between them) with two free knots:
    one at ``body`` (between the neighbouring knots) and one at ``tail`` (between the
    last two knots, which starts at the last knot's value, i.e. the published maximum
    is kept with the usual tail). The body knot is solved for ``mean`` first; if even
    its lowest value gives too high a mean, the tail knot is lowered too (the top
    1 - tail of the mass then carries the extremes). Returns a dense (p, value) table
    for linear interpolation."""
    p = [float(k[0]) for k in knots]
    v = [float(k[1]) for k in knots]
    if v[0] == v[-1]:
        return [0.0, 1.0], [v[0], v[0]]

    def with_knot(pk, vk, pf, vf):
        i = int(np.searchsorted(pk, pf))
        return pk[:i] + [pf] + pk[i:], vk[:i] + [vf] + vk[i:]

    def table(vb: float, vt: float | None) -> tuple[np.ndarray, np.ndarray]:
        pk, vk = with_knot(p, v, body, vb)
        if vt is not None:
            pk, vk = with_knot(pk, vk, tail, vt)
        grid = _dense_grid(pk)
        return grid, _geometric(np.array(pk), np.array(vk), grid)

    ib = int(np.searchsorted(p, body))
    b_lo, b_hi = v[ib - 1], v[ib]
    if tail is None:
        vb = _bisect(lambda x: quantile_mean(*table(x, None)), b_lo, b_hi, mean)
        grid, vals = table(vb, None)
        if abs(quantile_mean(grid, vals) - mean) > 0.01 * mean:
            # Too light a tail for a geometric curve (e.g. Skype UDP sizes, mean near
            # the middle of min..max): linear between the knots instead.
            def linear(x: float) -> float:
                pk, vk = with_knot(p, v, body, x)
                return quantile_mean(pk, vk)

            pk, vk = with_knot(p, v, body, _bisect(linear, b_lo, b_hi, mean))
            return [float(x) for x in pk], [float(x) for x in vk]
        return grid.tolist(), vals.tolist()
    it = int(np.searchsorted(p, tail))
    t_lo = max(v[it - 1], b_hi if it - 1 < ib else v[it - 1])
    t_hi = v[it]
    # The natural tail: geometric from the previous knot to the maximum.
    t_nat = float(_geometric(np.array([p[it - 1], p[it]]), np.array([t_lo, t_hi]), np.array([tail]))[0])
    vb = _bisect(lambda x: quantile_mean(*table(x, t_nat)), b_lo, b_hi, mean)
    vt = t_nat
    if vb == b_lo and quantile_mean(*table(vb, vt)) > mean:
        vt = _bisect(lambda x: quantile_mean(*table(vb, x)), t_lo, t_nat, mean)
    grid, vals = table(vb, vt)
    return grid.tolist(), vals.tolist()


def thin_stream_app(key: str) -> dict[str, Any]:
    """The fitted CBR-like application table of a Table 1 row (user-side TOML form)."""
    r = STEWART_TABLE1[key]
    ip, iv = fit_quantiles(
        [(0, r.iat_min), (0.01, r.iat_p1), (0.5, r.iat_med), (0.99, r.iat_p99), (1, r.iat_max)],
        r.iat_avg,
    )
    sp, sv = fit_quantiles([(0, r.payload_min), (1, r.payload_max)], r.payload_avg, body=0.99, tail=None)
    return {
        "kind": "cbr",
        "size": f"{round(r.payload_avg)}B",
        "interval": f"{round(r.iat_avg * 1e6)}ns",
        "jitter": {"dist": "empirical", "p": ip, "value": [f"{round(x * 1e6)}ns" for x in iv]},
        "size_dist": {"dist": "empirical", "p": sp, "value": [f"{max(1, round(x))}B" for x in sv]},
    }


def _cbr(size: str, interval: str, **extra) -> dict[str, Any]:
    return {"kind": "cbr", "size": size, "interval": interval, **extra}


#: name -> (description, application table). Sizes are what the transport carries:
#: for TCP presets the bytes written per message, for UDP the datagram payload.
PRESETS: dict[str, tuple[str, dict[str, Any]]] = {
    "voip-g711": ("G.711 VoIP: 180 B (160 B voice + 12 B RTP + ...) every 20 ms", _cbr("180B", "20ms")),
    "brosh-voip": ("Brosh et al. VoIP: 174 B incl. RTP + RFC 4571 framing every 20 ms (64 kbit/s)", _cbr("174B", "20ms")),
    "brosh-video-interactive": ("Brosh et al. interactive video: 724 B every 20 ms (284 kbit/s)", _cbr("724B", "20ms")),
    "brosh-video": ("Brosh et al. live video: 1448 B every 20 ms (573 kbit/s)", _cbr("1448B", "20ms")),
    "live-video": ("live video at a constant 573 kbit/s (= brosh-video)", _cbr("1448B", "20ms")),
    "stewart-cbr": ("Stewart et al. CBR: 186 B every N(20 ms, 1 ms)", _cbr("186B", "20ms", jitter={"dist": "normal", "sd": "1ms"})),
    "tg-web": (
        "tg-like web traffic of the Brosh drop-tail testbed: 512 B, exponential gaps with mean 50 ms",
        _cbr("512B", "50ms", jitter={"dist": "exponential"}),
    ),
}
for _key, _row in STEWART_TABLE1.items():
    PRESETS[f"thin-{_key}"] = (f"thin stream fitted to Stewart et al. Table 1: {_row.name}", thin_stream_app(_key))


def preset_app(name: str, overrides: dict[str, Any]) -> dict[str, Any]:
    """The application table of preset ``name`` with ``overrides`` applied."""
    return {**PRESETS[name][1], **overrides}
