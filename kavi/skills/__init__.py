"""The skill contract: the base class every forged skill subclasses, and the handles it may use."""
