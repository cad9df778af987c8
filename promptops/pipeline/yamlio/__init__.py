"""Reading YAML, one way everywhere: YAML 1.2, bounded, and able to say where.

:mod:`~.fast` parses (libyaml with YAML 1.2 typing), :mod:`~.limits` bounds a document
before anything recursive sees it, :mod:`~.loader` gives a file its data and its
positions on demand (ruamel.yaml only for a problem), :mod:`~.messages` words a schema
violation for a person. Every manifest, prompt, test and argument file is read through
here, so no two commands can read the same file differently.
"""
