"""Rates as the contract gives them: a percentage 0-100 rounded to 2 decimals."""
from __future__ import annotations


def rate(part: float, whole: float) -> float:
    """part of whole in percent, rounded to 2 decimals; 0.0 when nothing was counted."""
    if not whole:
        return 0.0
    return round(percentage(part, whole), 2)


def percentage(part, whole):
    """part of whole in percent, unrounded: the sort key stored beside a row's counts. Plain
    arithmetic, so peewee columns give the same figure as an SQL expression; whole must not be 0."""
    return 100.0 * part / whole
