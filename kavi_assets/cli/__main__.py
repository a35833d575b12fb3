"""`python -m kavi_assets.cli` is the same as `kavi`."""

from kavi_assets.cli.main import main

main()
