"""The MCP prompts server: protocol core, stdio loop and git following."""
