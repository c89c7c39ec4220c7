"""The pages' place at the site root: an API mounted where a page is refused at start-up."""
from __future__ import annotations

import pytest

from config import ConfigError
from webapp import create_app


@pytest.mark.parametrize("base_url", ["https://dmarc.example.net/", "https://dmarc.example.net",
                                      "https://dmarc.example.net/reports/"])
def test_an_api_mounted_where_the_pages_are_is_refused_at_start_up(config, base_url):
    with pytest.raises(ConfigError, match="where the dashboard's pages are"):
        create_app(config.replace(base_url=base_url))


def test_an_api_under_a_path_of_its_own_starts(config):
    assert create_app(config.replace(base_url="https://dmarc.example.net/rua/api/v1"))
