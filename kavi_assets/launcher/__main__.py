"""`python -m kavi_assets.launcher --fd N`: the run host (kavi_assets/launcher/host.py), as the launcher starts it."""

from kavi_assets.launcher.host import main

main()
