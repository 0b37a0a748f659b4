"""`refill demo --folder`: the demo wipes its folder, so it refuses one it did not make."""

from __future__ import annotations

from refill.cli import main
from refill.cli.demo import MARKER, prepare_folder


def test_the_demo_refuses_a_folder_it_did_not_make(tmp_path, capsys):
    # GIVEN a folder of the user's, with a file in it
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    # WHEN the demo is pointed at it
    code = main(["demo", "--folder", str(folder)])
    # THEN it refuses in one line, and the folder is as it was
    error = capsys.readouterr().err
    assert code == 1
    assert error.count("\n") == 1 and "was not made by `refill demo`" in error
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]


def test_the_demo_refuses_an_empty_folder_it_did_not_make(tmp_path):
    folder = tmp_path / "empty"
    folder.mkdir()
    assert main(["demo", "--folder", str(folder)]) == 1
    assert folder.is_dir() and not any(folder.iterdir())


def test_the_demo_wipes_and_reuses_a_folder_it_made(tmp_path):
    # GIVEN a folder a previous demo made and wrote into
    folder = prepare_folder(tmp_path / "demo")
    (folder / "landing").mkdir()
    # WHEN the demo prepares it again
    again = prepare_folder(folder)
    # THEN it is empty but for the demo's marker
    assert again == folder
    assert [p.name for p in folder.iterdir()] == [MARKER]
