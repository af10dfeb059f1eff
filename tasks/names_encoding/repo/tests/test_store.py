from people import load_names, save_names


def test_round_trip(tmp_path):
    save_names(tmp_path / "names.txt", ["Zoë", "José", "Ann"])
    assert load_names(tmp_path / "names.txt") == ["Zoë", "José", "Ann"]
