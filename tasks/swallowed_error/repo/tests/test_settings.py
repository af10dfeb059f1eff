from app.settings import load_settings


def test_values_from_text():
    assert load_settings("retries = 7\ntimeout = 2") == {"retries": 7, "timeout": 2}


def test_defaults():
    assert load_settings("") == {"retries": 3, "timeout": 10}
