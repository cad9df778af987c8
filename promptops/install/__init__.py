"""`promptops install`: MCP client configuration, written so a GUI app can start serve.

:mod:`~promptops.install.clients` knows where each client keeps its servers and what
entry starts this promptops; :mod:`~promptops.install.jsonedit` adds that entry to the
user's file without touching anything else in it.
"""
