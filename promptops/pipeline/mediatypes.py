"""Media types by file extension, from a fixed table.

The stdlib ``mimetypes`` reads the machine's own tables (/etc/mime.types), so the same
commit could build different bundles on different machines; a fixed table keeps builds
reproducible.
"""

from __future__ import annotations

import posixpath

TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".svg": "image/svg+xml",
    ".wav": "audio/wav",
    ".mp3": "audio/mpeg",
    ".ogg": "audio/ogg",
    ".flac": "audio/flac",
    ".txt": "text/plain",
    ".md": "text/markdown",
    ".html": "text/html",
    ".csv": "text/csv",
    ".py": "text/x-python",
    ".js": "text/javascript",
    ".ts": "text/x-typescript",
    ".go": "text/x-go",
    ".rs": "text/x-rust",
    ".java": "text/x-java",
    ".c": "text/x-c",
    ".sh": "text/x-shellscript",
    ".json": "application/json",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".toml": "application/toml",
    ".xml": "application/xml",
    ".pdf": "application/pdf",
}


def guess_type(path: str) -> str | None:
    return TYPES.get(posixpath.splitext(path)[1].lower())


def is_text(mime: str) -> bool:
    """Text for text/* and JSON (the format's rule), base64 for everything else."""
    return (
        mime.startswith("text/")
        or mime in ("application/json", "application/yaml", "application/toml", "application/xml")
        or mime.endswith(("+json", "+xml"))
    )


# An embedded resource of unknown type still has a body; it is served as plain text
# when it decodes as UTF-8 and as application/octet-stream otherwise.
TEXT_FALLBACK = "text/plain"
OCTET = "application/octet-stream"
