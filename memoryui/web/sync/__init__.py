"""The Sync page: the remote's status, "Sync now", publishing, discarding and the three-way
merge view of sync conflicts (the domain is memoryui.store.sync; docs/sync.md)."""
