"""A secret that arrives by sync (a native host pushed it) is flagged, never refused."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from memoryui.store import Store
from memoryui.store.sync import RemoteConfig, Syncer, bootstrap
from tests.secrets.samples import AWS
from tests.sync_fixtures import NativeHost, make_bare


def test_a_synced_secret_is_flagged(tmp_path: Path) -> None:
    url = f"file://{make_bare(tmp_path / 'remotes' / 'memory.git')}"
    config = RemoteConfig(url)
    bootstrap(tmp_path / "a", config)
    store = Store(tmp_path / "a")
    try:
        host = NativeHost(url, tmp_path / "native", "native-bot")
        daily = host.remember(f"pasted the key {AWS}", dt.datetime(2026, 2, 12, 9, 0))
        host.commit("native-bot: remember")
        host.push()
        syncer = Syncer(store, config)
        result = syncer.round(blocking=True)
        assert result.error is None
        assert AWS in (store.read(daily) or "")
        flagged = store.secrets.flagged()
        assert list(flagged) == [daily] and [f.kind for f in flagged[daily]] == ["AWS Access Key"]
    finally:
        store.close()
