"""The Public Suffix List's on-disk cache: the same answers as the library's own parse."""
from __future__ import annotations

import os

import publicsuffixlist
from publicsuffixlist import PublicSuffixList

from store.domain_names import load_public_suffixes

# A plain rule, a wildcard (*.ck) and its exception (!www.ck), a private suffix, IDN rules in
# U-labels and in A-labels, and a name under no rule.
NAMES = ["mail.example.co.uk", "a.b.foo.ck", "www.ck", "x.user.github.io",
         "a.shop.京都.jp", "a.shop.xn--1lqs03n.jp", "a.b.食狮.中国", "a.b.xn--85x722f.xn--fiqs8s",
         "a.b.example.unknown-tld"]


def answers(suffixes) -> list:
    return [(suffixes.privatesuffix(name), suffixes.publicsuffix(name)) for name in NAMES]


def test_the_cached_rules_answer_as_the_library_does(tmp_path):
    cache = str(tmp_path / "cache" / "public_suffixes.txt")
    first = load_public_suffixes(cache, write=True)         # parsed, then written
    assert os.path.exists(cache)
    second = load_public_suffixes(cache, write=True)        # read back from the cache
    assert answers(second) == answers(first) == answers(PublicSuffixList())
    assert answers(first)[0] == ("example.co.uk", "co.uk")
    assert answers(first)[4:6] == [("shop.京都.jp", "京都.jp"), ("shop.xn--1lqs03n.jp", "xn--1lqs03n.jp")]


def test_rules_cached_from_another_list_are_not_used(tmp_path):
    cache = tmp_path / "public_suffixes.txt"
    cache.write_text("# publicsuffixlist 0.0 1 1\nuk\n", encoding="utf-8")
    loaded = load_public_suffixes(str(cache), write=True)
    assert loaded.privatesuffix("mail.example.co.uk") == "example.co.uk"   # co.uk is known
    assert cache.read_text(encoding="utf-8").startswith(
        f"# publicsuffixlist {publicsuffixlist.__version__} ")            # and cached anew


def test_a_place_that_cannot_be_written_only_costs_the_parse(tmp_path):
    (tmp_path / "plain-file").write_text("")
    cache = str(tmp_path / "plain-file" / "public_suffixes.txt")
    loaded = load_public_suffixes(cache, write=True)
    assert loaded.privatesuffix("mail.example.co.uk") == "example.co.uk"
    assert sorted(os.listdir(tmp_path)) == ["plain-file"]


def test_without_write_nothing_is_cached(tmp_path):
    cache = tmp_path / "public_suffixes.txt"
    load_public_suffixes(str(cache), write=False)
    assert not cache.exists()
