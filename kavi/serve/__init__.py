"""`kavi serve`: the trusted skills as Model Context Protocol tools (kavi.serve.server)."""
