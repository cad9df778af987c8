"""The helpers every test module may import: one home each (docs/architecture.md, Tests)."""
