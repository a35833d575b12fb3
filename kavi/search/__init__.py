"""Find before forging: full-text (BM25) and optional vector search over trusted skills and proposals."""
