"""Building blocks of the self-contained HTML report: page, sections, tables, figures.

Everything is inline: CSS in a ``<style>`` element, figures as ``<img>`` with a
``data:`` URI (SVG by default, glyphs drawn as paths so no font is needed; or PNG).
No JavaScript, no external resource: the file opens offline in any browser.
"""

from __future__ import annotations

import base64
import html
import io
from typing import Any, Iterable, Optional

import numpy as np
import pandas as pd

from ccbench.fmt import fmt_bytes, fmt_number, fmt_pct, fmt_rate, fmt_time

CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto;
       max-width: 1200px; padding: 0 1em; color: #1b1f24; line-height: 1.4; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { font-size: 1.25em; margin-top: 1.8em;
     border-bottom: 1px solid #d0d7de; padding-bottom: 0.2em; } h3 { font-size: 1.05em; }
.meta { color: #57606a; font-size: 0.9em; }
pre { background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 6px; padding: 0.8em;
      overflow-x: auto; font-size: 0.85em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1em 0; }
th, td { border: 1px solid #d0d7de; padding: 0.25em 0.6em; }
th { background: #f6f8fa; text-align: left; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.error td { background: #fff0f0; }
figure.plot { margin: 1em 0 1.5em 0; } figure.plot img { max-width: 100%; height: auto; border: 1px solid #eaeef2; }
figcaption { color: #57606a; font-size: 0.85em; }
.note { color: #57606a; font-style: italic; }
details summary { cursor: pointer; color: #0969da; }
div.scroll { overflow-x: auto; max-width: 100%; }
"""


def esc(x: Any) -> str:
    return html.escape(str(x), quote=True)


def page(title: str, body: Iterable[str], subtitle: str = "") -> str:
    sub = f'<p class="meta">{esc(subtitle)}</p>' if subtitle else ""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{esc(title)}</title>\n"
        f"<style>{CSS}</style>\n</head>\n<body>\n<h1>{esc(title)}</h1>\n{sub}\n" + "\n".join(body) + "\n</body>\n</html>\n"
    )


def section(title: str, *parts: str, anchor: Optional[str] = None) -> str:
    a = f' id="{esc(anchor)}"' if anchor else ""
    return f"<section{a}>\n<h2>{esc(title)}</h2>\n" + "\n".join(parts) + "\n</section>"


def pre(text: str, cls: str = "") -> str:
    c = f' class="{esc(cls)}"' if cls else ""
    return f"<pre{c}>{html.escape(text, quote=False)}</pre>"


def note(text: str) -> str:
    return f'<p class="note">{esc(text)}</p>'


def figure(fig, name: str, caption: str = "", fmt: str = "svg", dpi: int = 110) -> str:
    """Embeds a matplotlib figure as an ``<img>`` with a data URI (no pyplot: the
    figure is drawn on its own canvas, the user's backend is left alone)."""
    from ccbench.plots import save_figure

    if fmt not in ("svg", "png"):
        raise ValueError(f"fmt: {fmt!r} is not accepted (accepted: svg, png)")
    buf = io.BytesIO()
    save_figure(fig, buf, fmt, dpi=dpi)
    mime = "image/svg+xml" if fmt == "svg" else "image/png"
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    cap = f"<figcaption>{esc(caption)}</figcaption>" if caption else ""
    return (
        f'<figure class="plot" data-plot="{esc(name)}">'
        f'<img class="plot" alt="{esc(caption or name)}" src="data:{mime};base64,{data}">{cap}</figure>'
    )


def fmt_value(v: Any, col: str = "") -> str:
    """A cell as the report shows it: units from the column name (``*_bps`` a rate,
    ``*_s`` a time, ``*_bytes`` a size, ``loss_rate`` a percentage), the digits of
    :mod:`ccbench.fmt` (the same as the command line's)."""
    if v is None or v is pd.NA:
        return ""
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (float, np.floating)):
        if col.endswith("_bps"):
            return fmt_rate(v, missing="")
        if col.endswith("_s") and col not in ("start_s", "end_s", "wall_s"):
            return fmt_time(v, unit="ms", missing="")
        if col.endswith("_bytes"):
            return fmt_bytes(v, missing="")
        if col == "loss_rate":
            return fmt_pct(v, missing="")
        return fmt_number(v, missing="")
    return str(v)


def table(df: pd.DataFrame, max_rows: Optional[int] = None, cls: str = "", row_class=None) -> str:
    """An HTML table with units in the cells (bit/s, ms, %) where the column name says so."""
    shown = df if max_rows is None else df.head(max_rows)
    head = "".join(f"<th>{esc(c)}</th>" for c in shown.columns)
    rows = []
    for _, r in shown.iterrows():
        cells = []
        for c in shown.columns:
            v = r[c]
            num = isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
            td = '<td class="num">' if num else "<td>"
            cells.append(f"{td}{esc(fmt_value(v, str(c)))}</td>")
        rc = row_class(r) if row_class else ""
        tr = f'<tr class="{esc(rc)}">' if rc else "<tr>"
        rows.append(tr + "".join(cells) + "</tr>")
    more = ""
    if max_rows is not None and len(df) > max_rows:
        more = note(f"first {max_rows} of {len(df)} rows")
    c = f' class="{esc(cls)}"' if cls else ""
    return f'<div class="scroll"><table{c}><thead><tr>{head}</tr></thead><tbody>' + "".join(rows) + "</tbody></table></div>" + more
