"""Prompt files each broken in one way validation reports (invalid YAML, a schema
violation, a template that does not parse, a missing include, a duplicate name): the
material of the checks that a run split across two processes (the build's and lint's
halves) reports every problem as one process does."""

from __future__ import annotations

BROKEN: dict[int, str] = {  # prompt number -> its file's text
    3: "messages: [\n",  # invalid YAML
    8: "messages:\n  - role: nobody\n    text: hi\n",  # schema
    13: "messages:\n  - role: user\n    text: \"{% if x %}never closed\"\n",  # Jinja syntax
    21: "messages:\n  - role: user\n    text: \"{% include 'partials/none.j2' %}\"\n",
    34: "name: p-1\nmessages:\n  - role: user\n    text: again\n",  # duplicate name
}
