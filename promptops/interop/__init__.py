"""Prompts in from six ecosystems and out to four, exactly or with every loss named.

Issue 14's core, independent of the package model: importers (one module per ecosystem,
:mod:`promptops.interop.importers`) read a source file into the intermediate representation
(:mod:`promptops.interop.ir`), exporters (:mod:`promptops.interop.exporters`) write the IR as
files another tool loads, and :mod:`promptops.sandbox.whitespace` is the ``standalone``
whitespace rule every imported template is written for. The bar is byte-identical output:
each ecosystem's own engine is the judge (tests/interop), and whatever a target cannot
express is a :class:`~promptops.interop.ir.Loss` with its reason, never silently dropped.
"""
