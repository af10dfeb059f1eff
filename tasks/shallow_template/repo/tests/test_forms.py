from forms import TEMPLATE, fill


def test_template_stays_blank():
    fill(TEMPLATE, name="Ada", email="ada@example.org")
    assert TEMPLATE["contact"] == {"name": "", "email": ""}


def test_filled():
    assert fill(TEMPLATE, name="Bo")["contact"]["name"] == "Bo"
