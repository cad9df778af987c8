"""The MCP prompts server: protocol core, sessions, catalog, transports and git following."""
