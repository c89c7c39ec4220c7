"""Charts drawn on the server as plain geometry for an SVG template (templates/pages/_macros.html):
a line of percentages over days, and stacked bars of two counts per day (passing and failing
messages, allowed and refused requests).
Pure: points in, numbers out; each mark keeps its own text for a <title> and the table."""
from __future__ import annotations

from typing import NamedTuple

WIDTH, HEIGHT = 480, 240
LEFT, RIGHT, TOP, BOTTOM = 64, 12, 12, 36     # room for the axes' labels
X_LABELS = 4                                  # date labels along the bottom, at most


class Tick(NamedTuple):
    at: float
    label: str


class Mark(NamedTuple):
    """A point of the line or a bar: where it is drawn and what it says."""
    x: float
    y: float
    width: float
    height: float
    title: str


def _mark(x: float, y: float, width: float, height: float, title: str) -> Mark:
    """A mark at a tenth of a unit: the page carries no more digits than can be seen."""
    return Mark(round(x, 1), round(y, 1), round(width, 1), round(height, 1), title)


class Chart(NamedTuple):
    title: str
    unit: str
    width: int
    height: int
    x_ticks: list[Tick]
    y_ticks: list[Tick]
    line: str                      # the polyline's points; "" for bars
    marks: list[Mark]              # line points, or the passing part of each bar
    failing: list[Mark]            # the failing part of each bar (hatched); none for a line
    rows: list[tuple[str, ...]]    # the numbers as text: a table's rows
    columns: tuple[str, ...]
    baseline: float
    left: int = LEFT               # the plot's left and right edges
    right: int = WIDTH - RIGHT
    names: tuple[str, str] = ("", "")      # a bar chart's two parts, for its legend


def _plot_width() -> float:
    return WIDTH - LEFT - RIGHT


def _plot_height() -> float:
    return HEIGHT - TOP - BOTTOM


def _x_ticks(days: list[str], step: float, offset: float) -> list[Tick]:
    every = max(1, -(-len(days) // X_LABELS))
    return [Tick(round(LEFT + offset + i * step, 1), day[5:] if len(days) <= 92 else day[:7])
            for i, day in enumerate(days) if i % every == 0]


def _nice_top(highest: float) -> int:
    """The axis top: a round number at or above the highest value."""
    if highest <= 0:
        return 10
    magnitude = 10 ** (len(str(int(highest))) - 1)
    for factor in (1, 2, 5, 10):
        if factor * magnitude >= highest:
            return factor * magnitude
    return 10 * magnitude


def _y(value: float, top: float) -> float:
    return TOP + _plot_height() * (1 - value / top)


def rate_line(title: str, points: list[dict], field: str = "compliance_rate") -> Chart:
    """Percent (0-100) of each day as a line; days without messages leave a gap in the text
    table's sense only ("no mail"), drawn at their value (the API gives 0)."""
    days = [p["date"] or "" for p in points]
    step = _plot_width() / max(len(points) - 1, 1)
    marks = []
    for i, p in enumerate(points):
        value = p[field]
        marks.append(_mark(LEFT + i * step, _y(value, 100), 0, 0,
                          f"{days[i]}: {value:.1f}% of {p['total_messages']:,} messages"))
    return Chart(title, "%", WIDTH, HEIGHT, _x_ticks(days, step, 0),
                 [Tick(round(_y(v, 100), 1), f"{v}%") for v in (0, 25, 50, 75, 100)],
                 " ".join(f"{m.x:.1f},{m.y:.1f}" for m in marks), marks, [],
                 [(d, f"{p[field]:.1f}", f"{p['total_messages']:,}") for d, p in zip(days, points)],
                 ("Day", "Compliance (%)", "Messages"), _y(0, 100))


def volume_bars(title: str, points: list[dict]) -> Chart:
    """Messages per day (trend points): the passing part solid, the failing part hatched."""
    return stacked_bars(title, [p["date"] or "" for p in points],
                        [p["compliant_messages"] for p in points],
                        [p["failed_messages"] for p in points], "messages", ("passing", "failing"))


def stacked_bars(title: str, days: list[str], lower: list[int], upper: list[int], unit: str,
                 names: tuple[str, str]) -> Chart:
    """Counts per day as bars: `lower` solid at the bottom, `upper` hatched on top of it."""
    top = _nice_top(max((a + b for a, b in zip(lower, upper)), default=0))
    step = _plot_width() / max(len(days), 1)
    width = max(step * 0.7, 1)
    solid, hatched = [], []
    for i, (day, good, bad) in enumerate(zip(days, lower, upper)):
        x = LEFT + i * step + (step - width) / 2
        text = f"{day}: {good + bad:,} {unit}, {bad:,} {names[1]}"
        solid.append(_mark(x, _y(good, top), width, _y(0, top) - _y(good, top), text))
        hatched.append(_mark(x, _y(good + bad, top), width, _y(good, top) - _y(good + bad, top),
                             text))
    return Chart(title, unit, WIDTH, HEIGHT, _x_ticks(days, step, step / 2),
                 [Tick(round(_y(v, top), 1), f"{v:,}") for v in (0, top // 2, top)], "", solid,
                 hatched,
                 [(d, f"{a + b:,}", f"{a:,}", f"{b:,}") for d, a, b in zip(days, lower, upper)],
                 ("Day", unit.capitalize(), names[0].capitalize(), names[1].capitalize()),
                 _y(0, top), names=names)
