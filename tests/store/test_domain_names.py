"""The Public Suffix List's on-disk cache: the same answers as the library's own parse."""
from __future__ import annotations

import marshal
import os

import publicsuffixlist
import pytest
from publicsuffixlist import PublicSuffixList

from store.domain_names import InvalidDomain, load_public_suffixes, normalize, renormalized

# A plain rule, a wildcard (*.ck) and its exception (!www.ck), a private suffix, IDN rules in
# U-labels and in A-labels, and a name under no rule.
NAMES = ["mail.example.co.uk", "a.b.foo.ck", "www.ck", "x.user.github.io",
         "a.shop.京都.jp", "a.shop.xn--1lqs03n.jp", "a.b.食狮.中国", "a.b.xn--85x722f.xn--fiqs8s",
         "a.b.example.unknown-tld"]


def answers(suffixes) -> list:
    return [(suffixes.privatesuffix(name), suffixes.publicsuffix(name)) for name in NAMES]


def test_the_cached_rules_answer_as_the_library_does(tmp_path):
    cache = str(tmp_path / "cache" / "public_suffixes.marshal")
    first = load_public_suffixes(cache, write=True)         # parsed, then written
    assert os.path.exists(cache)
    second = load_public_suffixes(cache, write=True)        # read back from the cache
    assert answers(second) == answers(first) == answers(PublicSuffixList())
    assert answers(first)[0] == ("example.co.uk", "co.uk")
    assert answers(first)[4:6] == [("shop.京都.jp", "京都.jp"), ("shop.xn--1lqs03n.jp", "xn--1lqs03n.jp")]


@pytest.mark.parametrize("content", [
    marshal.dumps(("publicsuffixlist 0.0 1 1", 1, frozenset({"uk"}))),   # another list's rules
    b"not a cache",
    b"",
])
def test_a_cache_not_of_the_installed_list_is_parsed_anew(tmp_path, content):
    cache = tmp_path / "public_suffixes.marshal"
    cache.write_bytes(content)
    loaded = load_public_suffixes(str(cache), write=True)
    assert loaded.privatesuffix("mail.example.co.uk") == "example.co.uk"   # co.uk is known
    stamp, _, _ = marshal.loads(cache.read_bytes())                         # and cached anew
    assert stamp.startswith(f"publicsuffixlist {publicsuffixlist.__version__} ")


def test_a_place_that_cannot_be_written_only_costs_the_parse(tmp_path):
    (tmp_path / "plain-file").write_text("")
    cache = str(tmp_path / "plain-file" / "public_suffixes.marshal")
    loaded = load_public_suffixes(cache, write=True)
    assert loaded.privatesuffix("mail.example.co.uk") == "example.co.uk"
    assert sorted(os.listdir(tmp_path)) == ["plain-file"]


def test_without_write_nothing_is_cached(tmp_path):
    cache = tmp_path / "public_suffixes.marshal"
    load_public_suffixes(str(cache), write=False)
    assert not cache.exists()


@pytest.mark.parametrize("name, normal", [
    ("straße.de", "xn--strae-oqa.de"),          # IDNA 2003 made it strasse.de, another domain
    ("faß.de", "xn--fa-hia.de"),
    ("BÜCHER.de", "xn--bcher-kva.de"),
    ("xn--strae-oqa.de", "xn--strae-oqa.de"),   # ASCII names, as reports carry, as they are
    ("Strasse.DE.", "strasse.de"),
])
def test_names_are_normalized_by_idna_2008_with_uts46(name, normal):
    assert normalize(name) == normal


@pytest.mark.parametrize("name", ["☃.com", "a\u200db.com", "ex ample.com"])
def test_a_name_idna_2008_refuses_is_invalid(name):
    with pytest.raises(InvalidDomain):
        normalize(name)


@pytest.mark.parametrize("stored, today", [
    ("example.com", "example.com"),
    ("xn--strae-oqa.de", "xn--strae-oqa.de"),
    ("xn--ab-5f1i.de", "xn--ab-y8l.de"),        # a Cherokee capital, mapped by UTS #46 today
])
def test_a_stored_name_is_renormalized_from_its_a_labels(stored, today):
    assert renormalized(stored) == today


@pytest.mark.parametrize("stored", ["xn--n3h.com", "xn--zz.com"])
def test_a_stored_name_idna_2008_refuses_is_invalid(stored):
    with pytest.raises(InvalidDomain):
        renormalized(stored)
