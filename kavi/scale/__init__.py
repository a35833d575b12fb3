"""The scale-out configuration: services on loopback, the shared ledger, runs on Celery workers."""
