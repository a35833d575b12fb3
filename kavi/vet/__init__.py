"""Vetting code others wrote: a third party's function through the forge's own gates (`kavi vet`)."""
