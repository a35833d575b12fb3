"""Sensors and schedules: proposal intake, retries, model learning, promotion."""
