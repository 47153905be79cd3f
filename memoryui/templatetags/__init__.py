"""Template tags and filters of the memoryui app."""
