"""The soak's memory figures: growth compares the medians of the first and last minute after
settling, so a job's processes caught by one sample are not growth, and a rise is."""
from __future__ import annotations

from bench.provider_checks import Memory

MB = 2**20


def memory_of(sizes_mb: list[int], pids: list[int] | None = None) -> Memory:
    """A Memory holding one service's samples, one every 5 s from t=0."""
    memory = Memory({})
    pids = pids or [1] * len(sizes_mb)
    memory.samples["scheduler"] = [(5.0 * n, pid, size * MB)
                                   for n, (size, pid) in enumerate(zip(sizes_mb, pids))]
    return memory


def test_flat_memory_has_no_growth():
    assert memory_of([80] * 60).growth(since=0)["scheduler"] == 0


def test_a_jobs_processes_caught_by_the_last_samples_are_not_growth():
    sizes = [74] * 58 + [87, 81]            # a refresh's pool of processes running at the end
    assert memory_of(sizes).growth(since=0)["scheduler"] == 0


def test_memory_that_keeps_rising_is_growth():
    sizes = [100 + n for n in range(60)]    # a megabyte every 5 s
    assert memory_of(sizes).growth(since=0)["scheduler"] > 0.4


def test_a_process_restarted_after_settling_has_nothing_to_compare():
    assert memory_of([80] * 60, pids=[1] * 30 + [2] * 30).growth(since=0)["scheduler"] is None


def test_each_minute_shows_its_median():
    sizes = [74] * 11 + [200] + [75] * 12
    assert memory_of(sizes).by_minute(began=0)["scheduler"] == [74, 75]
