"""Grade bands, health states, policy strength and rate rounding: every edge of the rules."""
import pytest

from rules.grades import grade, health_state, policy_name, policy_strength, whole
from rules.rates import rate
from rules.snapshot_facts import PublishedPolicy


@pytest.mark.parametrize("score, expected", [
    (100, "A+"), (97, "A+"), (96.99, "A"), (93, "A"), (92.99, "A-"), (90, "A-"), (89.99, "B+"),
    (87, "B+"), (86.99, "B"), (83, "B"), (82.99, "B-"), (80, "B-"), (79.99, "C+"), (77, "C+"),
    (76.99, "C"), (73, "C"), (72.99, "C-"), (70, "C-"), (69.99, "D"), (60, "D"), (59.99, "F"),
    (0, "F"), (None, "N/A"),
])
def test_grade_bands_start_at_their_threshold(score, expected):
    assert grade(score) == expected


@pytest.mark.parametrize("score, expected", [
    (None, "nodata"), (100, "secure"), (80, "secure"), (79.99, "warning"), (60, "warning"),
    (59.99, "critical"), (0, "critical"),
])
def test_health_state_is_secure_from_80_warning_from_60_critical_below(score, expected):
    assert health_state(score) == expected


@pytest.mark.parametrize("score, shown", [(73.95, 74), (73.59, 74), (73.5, 74), (73.49, 73),
                                          (0.5, 1), (0.49, 0), (None, 0), (100, 100)])
def test_whole_score_rounds_half_up(score, shown):
    assert whole(score) == shown


@pytest.mark.parametrize("policy, strength", [
    (PublishedPolicy("reject"), 100), (PublishedPolicy("quarantine"), 50), (PublishedPolicy("none"), 0),
    (PublishedPolicy("reject", 50), 50), (PublishedPolicy("quarantine", 50), 25), (PublishedPolicy("reject", 0), 0),
    (PublishedPolicy("reject", 100), 100), (PublishedPolicy("reject", None), 100),
    (PublishedPolicy("reject", testing="y"), 0), (PublishedPolicy("quarantine", 20, "y"), 0),
    (PublishedPolicy("reject", testing="n"), 100), (PublishedPolicy(""), 0), (PublishedPolicy("bogus"), 0), (None, 0),
    (PublishedPolicy("reject", 250), 100), (PublishedPolicy("reject", -5), 0),
])
def test_policy_strength_scales_the_step_above_none_by_pct_and_testing_counts_as_none(policy, strength):
    assert policy_strength(policy) == strength


@pytest.mark.parametrize("policy, name", [
    (PublishedPolicy("reject"), "reject"), (PublishedPolicy("quarantine"), "quarantine"), (PublishedPolicy(""), "none"),
    (PublishedPolicy("bogus"), "none"), (None, "none"),
])
def test_policy_name_is_an_enum_value(policy, name):
    assert policy_name(policy) == name


@pytest.mark.parametrize("part, whole_count, expected", [
    (0, 0, 0.0), (1, 3, 33.33), (2, 3, 66.67), (3, 3, 100.0), (0, 5, 0.0), (1, 8, 12.5),
])
def test_rates_are_percentages_rounded_to_two_decimals_and_zero_without_messages(part, whole_count, expected):
    assert rate(part, whole_count) == expected
