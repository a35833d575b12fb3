"""The handles' public import path for skills' tests (`kavi_assets.runtime.handles`), kept for the skills already
forged."""
