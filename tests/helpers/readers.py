"""Whether two reader maps answer alike, asked through what incremental lint asks.

serve's gate keeps a :class:`~promptops.lint.readers.Readers` patched from commit to commit;
the tests hold it to a map built fresh from the same record by asking both every question
the product asks (``read``, ``readers``, ``first``, ``folded``) about the files and names
given, so a reader left behind by a patch shows as an answer, not as an inner table.
"""

from __future__ import annotations

from collections.abc import Iterable

from promptops.lint.readers import Readers


def differences(kept: Readers, fresh: Readers, files: Iterable[str],
                names: Iterable[str]) -> list[str]:
    """What ``kept`` answers otherwise than ``fresh`` about ``files`` and ``names``
    (empty when they answer alike)."""
    out: list[str] = []
    for f in sorted(set(files)):
        if kept.read(f) != fresh.read(f):
            out.append(f"read({f})")
        if sorted(kept.readers(f)) != sorted(fresh.readers(f)):
            out.append(f"readers({f})")
        if kept.first(f, set()) != fresh.first(f, set()):
            out.append(f"first({f})")
    out += [f"folded({n})" for n in sorted(set(names)) if kept.folded(n) != fresh.folded(n)]
    return out
