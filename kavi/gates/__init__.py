"""Gates: independent checks of a build, run for real in its sandbox."""
