"""The whole pipeline in one call: source -> loaded files -> package -> bundle.

Commands that need a bundle (build, render, test, diff, serve) come through here so
there is one way a package becomes something that can be rendered.
"""

from __future__ import annotations

from pathlib import Path

from promptops.pipeline.bundle import Bundle, compile_bundle
from promptops.pipeline.source import open_source
from promptops.pipeline.validate import Package, load_package


def package_at(package_dir: Path, ref: str | None = None) -> Package:
    """The validated package in the working tree (ref None) or at a commit."""
    return load_package(open_source(package_dir, ref))


def bundle_at(package_dir: Path, ref: str | None = None) -> Bundle:
    """The bundle of the package in the working tree (ref None) or at a commit."""
    return compile_bundle(package_at(package_dir, ref))
