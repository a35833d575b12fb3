"""The DuckDB ledger: the single source of truth for proposals, builds, verdicts and promotions."""
