"""A shape's version names its fields: it moves when a field is added, made optional or nested
deeper, and only then."""
from typing import NotRequired, TypedDict

from shapes import bodies
from shapes.versions import fields, version
from snapshotter import jobs


class Card(TypedDict):
    domain: str
    score: int


class CardWithGrade(TypedDict):
    domain: str
    score: int
    grade: str


class CardMaybeScored(TypedDict):
    domain: str
    score: NotRequired[int]


class Page(TypedDict):
    cards: list[Card]


class PageOfGraded(TypedDict):
    cards: list[CardWithGrade]


def test_fields_are_dotted_paths_with_optional_ones_marked():
    assert fields(CardMaybeScored) == ["domain", "score?"]
    assert fields(Page) == ["cards", "cards.domain", "cards.score"]
    assert fields(bodies.TlsHealthBody | None)[:2] == ["failed_sessions", "failure_types"]


def test_the_version_moves_with_the_fields_and_only_with_them():
    assert version(Card) == version(Card) and len(version(Card)) == 12
    assert len({version(Card), version(CardWithGrade), version(CardMaybeScored)}) == 3
    assert version(Page) != version(PageOfGraded)       # a field added one level down


def test_every_served_kind_has_a_shape_and_its_version():
    assert set(jobs.SHAPE_VERSIONS) == set(jobs.SERVED_KINDS) == set(jobs.SHAPES)
    assert jobs.SHAPE_VERSIONS["overview"] == version(bodies.OverviewBody)
