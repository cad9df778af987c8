"""Counting the blob ids hashed: where a file's id is computed once and kept
(``CachingSource.content_id``), a test checks that nothing hashes it again."""

from __future__ import annotations

import pytest

from promptops.git.objects import blob_id


def counted_hashes(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The bytes every ``blob_id`` call hashes from now on, in order (the function as
    the modules that hash a prompt file imported it)."""
    import promptops.git.objects as objects
    import promptops.pipeline.source as source
    import promptops.pipeline.validate as validate

    hashed: list[bytes] = []

    def counted(data: bytes) -> str:
        hashed.append(data)
        return blob_id(data)

    for module in (objects, source, validate):
        monkeypatch.setattr(module, "blob_id", counted)
    return hashed
