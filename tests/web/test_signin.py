"""Failed sign-ins are throttled per user name and per address (django-axes): the sign-in
page says when to try again, and an admin command unlocks."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from tests.conftest import PASSWORD

LOGIN = "/accounts/login/"


@pytest.fixture(autouse=True)
def _three_failures(settings) -> None:
    settings.AXES_FAILURE_LIMIT = 3


def _sign_in(client, name: str, password: str, address: str = "10.0.0.1"):
    return client.post(LOGIN, {"username": name, "password": password},
                       REMOTE_ADDR=address)


def _signed_in(client) -> bool:
    return client.get("/").status_code == 200


def test_too_many_wrong_passwords_lock_the_name_even_with_the_right_one(client, db,
                                                                         make_user):
    make_user("viewer", "vera")
    for _ in range(2):
        assert _sign_in(client, "vera", "wrong").status_code == 200
    locked = _sign_in(client, "vera", "wrong")
    assert locked.status_code == 429
    page = locked.content.decode()
    assert "Too many failed sign-ins" in page and "Try again in 15 minutes" in page
    assert 'name="password"' in page and "<h1>Sign in</h1>" in page  # the styled page
    assert 800 < int(locked["Retry-After"]) <= 900
    # the right password, even from another address, is refused until the cool-off ends
    right = _sign_in(client, "vera", PASSWORD, address="10.0.0.2")
    assert right.status_code == 429 and not _signed_in(client)


def test_too_many_failures_from_one_address_lock_that_address(client, db, make_user):
    make_user("viewer", "vera")
    for name in ("ann", "bob", "cid"):
        _sign_in(client, name, "guess", address="10.0.0.9")
    assert _sign_in(client, "vera", PASSWORD, address="10.0.0.9").status_code == 429
    assert not _signed_in(client)
    # the same person from another address is not held back by that address's failures
    assert _sign_in(client, "vera", PASSWORD, address="10.0.0.3").status_code == 302
    assert _signed_in(client)


def test_the_lock_ends_after_the_cool_off(client, db, make_user, settings):
    import datetime as dt

    make_user("viewer", "vera")
    for _ in range(3):
        _sign_in(client, "vera", "wrong")
    assert _sign_in(client, "vera", PASSWORD).status_code == 429
    settings.AXES_COOLOFF_TIME = dt.timedelta(microseconds=1)  # the cool-off has passed
    assert _sign_in(client, "vera", PASSWORD).status_code == 302 and _signed_in(client)


def test_an_admin_unlocks_a_name_with_axes_reset_username(client, db, make_user):
    make_user("viewer", "vera")
    for _ in range(3):
        _sign_in(client, "vera", "wrong")
    assert _sign_in(client, "vera", PASSWORD).status_code == 429
    call_command("axes_reset_username", "vera", verbosity=0)
    assert _sign_in(client, "vera", PASSWORD).status_code == 302 and _signed_in(client)
