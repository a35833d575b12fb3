"""`kavi serve`: the trusted skills as Model Context Protocol tools (kavi_assets.serve.server)."""
