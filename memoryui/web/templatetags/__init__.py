"""Template tags of the UI, registered by name in settings (TEMPLATES OPTIONS libraries):
they live under web/ because they build on web/ (the hierarchy, the time format)."""
