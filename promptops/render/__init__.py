"""Stage 4: a bundle + a prompt name + arguments -> what ``prompts/get`` returns.

Import-free on purpose: serve imports :mod:`promptops.render.renderer` on its cold
path.
"""
