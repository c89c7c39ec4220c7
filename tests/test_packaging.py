"""setup.cfg ships every folder of the packages as a package: an install warns of nothing."""
from __future__ import annotations

import pathlib
import warnings

from setuptools.config.setupcfg import read_configuration

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_every_folder_inside_a_package_is_a_listed_package():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # setuptools' own notices about its config API
        packages = set(read_configuration(ROOT / "setup.cfg")["options"]["packages"])
    assert "webapp" in packages
    folders = {f"{package}.{folder.name}" for package in packages
               for folder in (ROOT / package.replace(".", "/")).iterdir()
               if folder.is_dir() and folder.name != "__pycache__"}
    assert folders <= packages, sorted(folders - packages)
