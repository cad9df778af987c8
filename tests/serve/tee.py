"""Run a server command and record both directions of its stdio, line by line.

Lets tests judge every message a server sent to an SDK client: ``tee.py LOG -- CMD...``.
"""

from __future__ import annotations

import subprocess
import sys
import threading


def main() -> int:
    log_path, cmd = sys.argv[1], sys.argv[sys.argv.index("--") + 1 :]
    child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    lock = threading.Lock()
    log = open(log_path, "ab")  # noqa: SIM115 - lives as long as the process

    def record(tag: bytes, line: bytes) -> None:
        with lock:
            log.write(tag + line if line.endswith(b"\n") else tag + line + b"\n")
            log.flush()

    def upstream() -> None:
        for line in sys.stdin.buffer:
            record(b"C ", line)
            child.stdin.write(line)  # type: ignore[union-attr]
            child.stdin.flush()  # type: ignore[union-attr]
        child.stdin.close()  # type: ignore[union-attr]

    threading.Thread(target=upstream, daemon=True).start()
    for line in child.stdout:
        record(b"S ", line)
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
    return child.wait()


if __name__ == "__main__":
    sys.exit(main())
