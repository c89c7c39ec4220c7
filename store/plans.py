"""The plans an organization can be on and what each allows: the one table auth, quotas, the
overview's concurrency cap and the usage page read (README, "Quotas and usage")."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Plan:
    name: str
    hourly: int | None           # requests per clock hour; None: no cap
    heavy: int | None            # heavy-route requests per clock hour; None: no cap
    overview_slots: int          # overview computations at once, across workers and hosts
    api: bool = True             # False: every key of the organization gets 401 not_entitled

    @property
    def capped(self) -> bool:
        return self.hourly is not None


PLANS = {plan.name: plan for plan in (
    Plan("free", hourly=1_000, heavy=60, overview_slots=2),
    Plan("team", hourly=10_000, heavy=600, overview_slots=4),
    Plan("unlimited", hourly=None, heavy=None, overview_slots=8),
    Plan("none", hourly=None, heavy=None, overview_slots=0, api=False),
)}
NAMES = tuple(PLANS)
