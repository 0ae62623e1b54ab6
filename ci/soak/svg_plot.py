"""A self-contained SVG of panels of lines and dots over a shared time axis
(the soak's memory and throughput), with the Python standard library only.

A panel is a title and a list of Series; a series is a name, a colour and
(x, y) points drawn as a line or as dots. Every panel shares the x range;
each has its own y range, from 0 or, on a log scale, from 1 (values below
1 sit on the axis): targets whose rates differ a thousandfold stay legible.
"""

import math
from dataclasses import dataclass
from xml.sax.saxutils import escape

WIDTH = 900
PANEL_HEIGHT = 260
MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 70, 190, 40, 40
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
           "#7f7f7f", "#bcbd22"]


@dataclass
class Series:
    name: str
    colour: str
    points: list  # (x, y)
    dots: bool = False  # dots instead of a line
    legend: bool = True


@dataclass
class Panel:
    title: str
    series: list
    log_y: bool = False


def nice_ticks(high, count=5):
    """Round tick values from 0 to at least `high`."""
    if high <= 0:
        return [0, 1]
    raw = high / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    return [i * step for i in range(int(math.ceil(high / step)) + 1)]


def log_ticks(high):
    """Powers of ten from 1 to at least `high`."""
    top = max(1, math.ceil(math.log10(high))) if high > 1 else 1
    return [10 ** k for k in range(top + 1)]


def _label(value):
    return f"{value:g}" if abs(value) < 1e6 else f"{value:.3g}"


def render(title, x_label, panels):
    xs = [x for p in panels for s in p.series for x, _ in s.points]
    x_ticks = nice_ticks(max(xs, default=0))
    x_high = x_ticks[-1]
    plot_width = WIDTH - MARGIN_LEFT - MARGIN_RIGHT
    height = MARGIN_TOP + len(panels) * (PANEL_HEIGHT + MARGIN_BOTTOM) + 10
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="12">',
           '<rect width="100%" height="100%" fill="white"/>',
           f'<text x="{WIDTH / 2}" y="22" text-anchor="middle" font-size="15">{escape(title)}</text>']
    for index, panel in enumerate(panels):
        top = MARGIN_TOP + index * (PANEL_HEIGHT + MARGIN_BOTTOM)
        bottom = top + PANEL_HEIGHT - 20
        y_max = max((y for s in panel.series for _, y in s.points), default=0)
        y_ticks = log_ticks(y_max) if panel.log_y else nice_ticks(y_max)
        scale = (lambda y: math.log10(max(y, 1))) if panel.log_y else (lambda y: y)
        y_high = scale(y_ticks[-1])

        def px(x, left=MARGIN_LEFT):
            return left + plot_width * x / x_high

        def py(y, top_=top + 20, bottom_=bottom):
            return bottom_ - (bottom_ - top_) * scale(y) / y_high

        out.append(f'<text x="{MARGIN_LEFT}" y="{top + 12}" font-weight="bold">{escape(panel.title)}</text>')
        for y in y_ticks:
            out.append(f'<line x1="{MARGIN_LEFT}" x2="{MARGIN_LEFT + plot_width}" y1="{py(y):.1f}" '
                       f'y2="{py(y):.1f}" stroke="#ddd"/>')
            out.append(f'<text x="{MARGIN_LEFT - 6}" y="{py(y) + 4:.1f}" text-anchor="end">{_label(y)}</text>')
        for x in x_ticks:
            out.append(f'<line x1="{px(x):.1f}" x2="{px(x):.1f}" y1="{bottom}" y2="{bottom + 4}" stroke="#333"/>')
            out.append(f'<text x="{px(x):.1f}" y="{bottom + 16}" text-anchor="middle">{_label(x)}</text>')
        out.append(f'<rect x="{MARGIN_LEFT}" y="{top + 20}" width="{plot_width}" height="{bottom - top - 20}" '
                   'fill="none" stroke="#333"/>')
        out.append(f'<text x="{MARGIN_LEFT + plot_width / 2}" y="{bottom + 32}" '
                   f'text-anchor="middle">{escape(x_label)}</text>')
        legend_y = top + 34
        for s in panel.series:
            if s.dots:
                out.extend(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="2.5" fill="{s.colour}" '
                           'fill-opacity="0.6"/>' for x, y in s.points)
            elif s.points:
                path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in s.points)
                out.append(f'<polyline points="{path}" fill="none" stroke="{s.colour}" stroke-width="1.8"/>')
            if s.legend:
                x0 = MARGIN_LEFT + plot_width + 12
                out.append(f'<rect x="{x0}" y="{legend_y - 9}" width="12" height="10" fill="{s.colour}"/>')
                out.append(f'<text x="{x0 + 18}" y="{legend_y}">{escape(s.name)}</text>')
                legend_y += 16
    out.append("</svg>")
    return "\n".join(out) + "\n"
