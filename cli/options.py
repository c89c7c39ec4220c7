"""Parameter types for admin commands whose bad values end in one clear line and exit status 2."""
from __future__ import annotations

import datetime
import re

import click

from cli.common import fail

# date.fromisoformat also takes 20270101 and 2027-W01-1; rua's dates are always YYYY-MM-DD.
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


class OneOf(click.Choice):
    """A click.Choice (so --help lists the choices) that reports a bad value through fail()."""

    def __init__(self, choices, noun: str):
        super().__init__(choices, case_sensitive=False)
        self.noun = noun

    def convert(self, value, param, ctx):
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter:
            fail(f"unknown {self.noun} {value!r}: choose one of {', '.join(self.choices)}")


class Day(click.ParamType):
    """A calendar date written YYYY-MM-DD."""

    name = "YYYY-MM-DD"

    def convert(self, value, param, ctx):
        if isinstance(value, datetime.date):
            return value
        text = value.strip()
        try:
            if _DAY.fullmatch(text):
                return datetime.date.fromisoformat(text)
        except ValueError:
            pass
        fail(f"{value!r} is not a date: write it as YYYY-MM-DD")
