"""Rates as the contract gives them: a percentage 0-100 rounded to 2 decimals."""
from __future__ import annotations


def rate(part: float, whole: float) -> float:
    """part of whole in percent, rounded to 2 decimals; 0.0 when nothing was counted."""
    if not whole:
        return 0.0
    return round(100.0 * part / whole, 2)
