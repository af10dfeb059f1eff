from warehouse import report


def test_report():
    assert report(["widget:3", "widget:4", "bolt:10"]) == {"bolt": "10 in stock", "widget": "7 in stock"}
