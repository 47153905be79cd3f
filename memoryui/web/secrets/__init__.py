"""The UI of caught secrets: warnings on pages, remove-from-current-text, the admin's allow list."""
