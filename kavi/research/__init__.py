"""Research on failed attempts: deterministic classification, facts, and escalation triggers."""
