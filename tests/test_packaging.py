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


def test_the_suite_runs_on_versions_within_every_declared_bound():
    """The tests run at the versions installed, so each must be one setup.cfg allows (peewee
    is bounded because store/compiled.py builds on its internals)."""
    from importlib.metadata import version

    from packaging.requirements import Requirement
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wanted = read_configuration(ROOT / "setup.cfg")["options"]["install_requires"]
    outside = [str(r) for r in map(Requirement, wanted)
               if not r.specifier.contains(version(r.name), prereleases=True)]
    assert outside == []
