"""The data flow, top to bottom: source -> YAML -> validated package -> bundle.

Each module accepts only what the one before it returns: :mod:`~.source` (the files),
:mod:`~.yamlio` (parsed documents that can say where), :mod:`~.validate` (a
:class:`~.validate.Package` and every problem, coded), :mod:`~.bundle` (the served
artefact, typed by :mod:`~.bundle_types`), and :mod:`~.build`, the one way in.

Import-free on purpose: serve reads bundles (:mod:`~.bundle`, standard library only) on
its cold path, and importing this package must not drag in pydantic or GitPython.
"""
