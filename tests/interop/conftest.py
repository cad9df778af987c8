"""The corpus imported once per test process, for the modules that judge it whole.

test_import_command.py and test_export_command.py each need every corpus entry imported by
the command into its own package (340 imports and builds, the costliest set-up of the
default run); they only read those packages, so one session-scoped import serves both.
Both modules are in the ``corpus`` xdist group (with tests/corpus/test_corpus.py and the
other whole-corpus modules) so that they run in the same worker and this fixture and
``judges.render_all``'s engine renders are made once per run, not once per worker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from test_import_command import Imported


@pytest.fixture(scope="session")
def corpus_imported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Imported]:
    from test_import_command import ENTRIES, Imported

    root = tmp_path_factory.mktemp("imports")
    return {e["id"]: Imported(e, root / e["id"]) for e in ENTRIES}
