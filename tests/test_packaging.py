"""The installed package must carry every subpackage and the registry data."""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent


def test_every_subpackage_is_listed_in_pyproject() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = {
        ".".join(init.parent.relative_to(REPO).parts)
        for init in (REPO / "paircheck").rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert found <= listed, f"add to pyproject.toml [tool.setuptools] packages: {sorted(found - listed)}"
    assert config["package-dir"]["paircheck._registry_data"] == "registry"
    assert any((REPO / "registry").glob("*.toml"))


def test_every_data_file_of_a_package_is_shipped() -> None:
    # The pairs page reads its template, style and script at run time: a wheel without them breaks it.
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    data = config["package-data"]
    for package in config["packages"]:
        folder = REPO / config.get("package-dir", {}).get(package, package.replace(".", "/"))
        if package.startswith("paircheck._registry_data") or not folder.is_dir():  # globbed: *.toml
            continue
        files = {f.name for f in folder.iterdir() if f.is_file() and f.suffix not in (".py", ".pyc", ".typed")}
        assert files <= set(data.get(package, [])), f"add to [tool.setuptools.package-data] {package}: {files}"
