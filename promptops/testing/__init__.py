"""`promptops test`: deterministic prompt tests (issue 5).

Test files (`tests/**/*.test.yaml`) are read from the same source the bundle is built
from, so `--ref` tests a commit exactly; every case renders through
:class:`promptops.render.renderer.Renderer`, the path `serve` answers prompts/get with.
"""
