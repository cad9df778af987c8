"""Transports: how messages reach the protocol core (stdio today)."""
