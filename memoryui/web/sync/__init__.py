"""The Sync page: the remote's status, "Sync now", publishing, discarding and the three-way
merge view of sync conflicts (issue 14; the domain is memoryui.store.sync)."""
