"""The charts' geometry: plain points in, marks, axes and the numbers as text out."""
from __future__ import annotations

from webapp.pages import charts


def trend(day: str, total: int, failed: int) -> dict:
    return {"date": day, "total_messages": total, "compliant_messages": total - failed,
            "failed_messages": failed, "reports": 1,
            "compliance_rate": 100.0 * (total - failed) / total if total else 0.0}


POINTS = [trend("2026-03-01", 100, 10), trend("2026-03-02", 0, 0), trend("2026-03-03", 40, 40)]


def test_a_rate_line_runs_from_the_left_edge_to_the_right_edge_on_a_0_to_100_axis():
    chart = charts.rate_line("Compliance", POINTS)
    assert [m.x for m in chart.marks] == [charts.LEFT, (charts.LEFT + chart.right) / 2, chart.right]
    assert chart.marks[0].y < chart.marks[2].y == chart.baseline      # 90% above 0%
    assert [t.label for t in chart.y_ticks] == ["0%", "25%", "50%", "75%", "100%"]
    assert chart.marks[0].title == "2026-03-01: 90.0% of 100 messages"


def test_the_numbers_of_a_chart_are_its_table():
    chart = charts.volume_bars("Messages", POINTS)
    assert chart.columns == ("Day", "Messages", "Passing", "Failing")
    assert chart.rows == [("2026-03-01", "100", "90", "10"), ("2026-03-02", "0", "0", "0"),
                          ("2026-03-03", "40", "0", "40")]


def test_bars_stack_the_hatched_part_on_the_solid_one_under_a_round_top():
    chart = charts.volume_bars("Messages", POINTS)
    assert [t.label for t in chart.y_ticks] == ["0", "50", "100"]
    solid, hatched = chart.marks[0], chart.failing[0]
    assert hatched.y + hatched.height == solid.y
    assert solid.y + solid.height == chart.baseline
    assert chart.failing[1].height == 0 and chart.marks[2].height == 0


def test_dates_label_at_most_a_few_days_along_the_bottom():
    days = [trend(f"2026-03-{d:02}", 10, 1) for d in range(1, 31)]
    ticks = charts.rate_line("Compliance", days).x_ticks
    assert len(ticks) <= charts.X_LABELS + 1 and ticks[0].label == "03-01"


def test_an_empty_or_all_zero_series_still_draws_its_axes():
    assert charts.volume_bars("Messages", []).y_ticks[-1].label == "10"
    assert charts.stacked_bars("Requests", ["2026-03-01"], [0], [0], "requests",
                               ("allowed", "refused")).rows == [("2026-03-01", "0", "0", "0")]
