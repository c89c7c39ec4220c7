"""Charts drawn on the server as plain geometry for an SVG template (templates/pages/_chart.html):
a line of percentages over days, and stacked bars of passing and failing messages per day.
Pure: points in, numbers out; each mark keeps its own text for a <title> and the table."""
from __future__ import annotations

from typing import NamedTuple

WIDTH, HEIGHT = 720, 240
LEFT, RIGHT, TOP, BOTTOM = 56, 12, 12, 36     # room for the axes' labels
X_LABELS = 6                                  # date labels along the bottom, at most


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
    """Messages per day as bars: the passing part solid, the failing part hatched on top."""
    days = [p["date"] or "" for p in points]
    top = _nice_top(max((p["total_messages"] for p in points), default=0))
    step = _plot_width() / max(len(points), 1)
    width = max(step * 0.7, 1)
    passing, failing = [], []
    for i, p in enumerate(points):
        x = LEFT + i * step + (step - width) / 2
        good, bad = p["compliant_messages"], p["failed_messages"]
        title_text = f"{days[i]}: {p['total_messages']:,} messages, {bad:,} failing"
        passing.append(_mark(x, _y(good, top), width, _y(0, top) - _y(good, top), title_text))
        failing.append(_mark(x, _y(good + bad, top), width, _y(good, top) - _y(good + bad, top),
                            title_text))
    return Chart(title, "messages", WIDTH, HEIGHT, _x_ticks(days, step, step / 2),
                 [Tick(round(_y(v, top), 1), f"{v:,}") for v in (0, top // 2, top)], "", passing, failing,
                 [(d, f"{p['total_messages']:,}", f"{p['compliant_messages']:,}",
                   f"{p['failed_messages']:,}") for d, p in zip(days, points)],
                 ("Day", "Messages", "Passing", "Failing"), _y(0, top))
