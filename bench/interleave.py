"""Targets measured in interleaved rounds, every server up at once (used by bench/snapshot.py and
bench/metering.py).

On a shared 2-CPU machine the speed of everything moves by tens of percent within a minute, so
one long run per target compares moments as much as targets. Here every target's gunicorn is
started first; then each round loads every target for a few seconds, in a shuffled order, and a
target's ratio is taken against its baseline measured in the same round. The median over the
rounds is the figure; the lowest and highest ratios show how much the machine moved.
"""
from __future__ import annotations

import contextlib
import pathlib
import random
import statistics
from dataclasses import dataclass, field

from bench.api import ROOT, Gunicorn, check_answers, run_wrk


@dataclass
class Target:
    label: str
    app_spec: str                    # what gunicorn serves, e.g. "wsgi:app"
    paths: list[str]                 # wrk sends these in turn
    baseline: str | None = None      # label of the target its ratio is taken against
    root: pathlib.Path = ROOT        # the checkout whose code gunicorn serves
    runs: list[dict] = field(default_factory=list)

    def median(self, figure: str) -> float:
        return statistics.median(run[figure] for run in self.runs)


def measure(wrk: str, store, targets: list[Target], keys: list[str], *, rounds: int,
            seconds: int, connections: int, threads: int, warmup: int = 6,
            env: dict | None = None, between=None) -> None:
    """Fill each target's runs: `rounds` wrk runs of `seconds`, the targets shuffled in each
    round; between(round) runs after the warm-up (round -1) and after every round (e.g. to
    reset quota counters). The warm-up load comes first: each worker holds a key only after it
    has seen it once, so with 2,000 keys in turn a worker needs some 2,000 requests before it
    runs as it will."""
    with contextlib.ExitStack() as stack:
        # Targets of the same app and checkout (several routes of one variant) share a server.
        started: dict = {}
        for t in targets:
            if (t.app_spec, t.root) not in started:
                started[(t.app_spec, t.root)] = stack.enter_context(
                    Gunicorn(t.app_spec, store, env=env, root=t.root))
        servers = [started[(t.app_spec, t.root)] for t in targets]
        for target, server in zip(targets, servers):
            check_answers(server.url, target.paths, keys[0])
            run_wrk(wrk, server.url, target.paths, keys, warmup, connections, threads)
        if between is not None:
            between(-1)
        for number in range(rounds):
            order = list(zip(targets, servers))
            random.shuffle(order)
            for target, server in order:
                target.runs.append(run_wrk(wrk, server.url, target.paths, keys, seconds,
                                           connections, threads))
            print(f"  round {number + 1} of {rounds}: "
                  + ", ".join(f"{t.label.split(' (')[0]} {t.runs[-1]['rps']:,.0f}"
                              for t in targets), flush=True)
            if between is not None:
                between(number)


def ratios(target: Target, targets: list[Target]) -> list[float]:
    """The target's req/s over its baseline's, round by round."""
    base = next(t for t in targets if t.label == target.baseline)
    return [run["rps"] / b["rps"] for run, b in zip(target.runs, base.runs)]


def report(targets: list[Target]) -> None:
    """One line a target: median req/s, p50 and p99, and its median ratio (lowest-highest)."""
    print(f"\n{'target':<46} {'req/s':>8} {'p50 ms':>7} {'p99 ms':>7} {'non-2xx':>7} "
          f"{'ratio':>6} {'(low-high)':>11}  of")
    for t in targets:
        bad = sum(run["non2xx"] + run["errors"] for run in t.runs)
        line = (f"{t.label:<46} {t.median('rps'):>8,.0f} {t.median('p50_us') / 1000:>7.2f} "
                f"{t.median('p99_us') / 1000:>7.2f} {bad:>7}")
        if t.baseline:
            r = ratios(t, targets)
            spread = f"({min(r):.2f}-{max(r):.2f})"
            line += f" {statistics.median(r):>6.3f} {spread:>11}  {t.baseline}"
        print(line)
