"""The template sandbox: the one Jinja environment and every bound a request runs under.

Validation parses and rendering runs in the same environment, so a template that loads
is one the renderer accepts. Import-free on purpose: serve imports
:mod:`promptops.sandbox.limits` on its cold path, and Jinja only when it renders.
"""
