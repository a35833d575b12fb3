"""Building one attempt: the frozen packet, the model's answer, the diff allowlist, the fresh sandbox."""
