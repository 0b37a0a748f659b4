"""tools/layers.py, the layering check `make lint` runs: it must catch what it promises."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

LAYERS_PY = Path(__file__).resolve().parents[2] / "tools" / "layers.py"


@pytest.fixture
def layers(monkeypatch, tmp_path):
    spec = importlib.util.spec_from_file_location("layers_under_test", LAYERS_PY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "ROOT", tmp_path)
    return module


def write(root: Path, module: str, text: str) -> None:
    path = root / (module.replace(".", "/") + ".py")
    path.parent.mkdir(parents=True, exist_ok=True)
    for folder in path.relative_to(root).parents:
        if str(folder) != ".":
            (root / folder / "__init__.py").touch()
    path.write_text(text)


def test_a_layout_that_keeps_its_rules_passes(layers, tmp_path, capsys):
    write(tmp_path, "refill.rules.plan", "X = 1\n")
    write(tmp_path, "refill.warehouse.engine", "import duckdb\nfrom refill.rules import plan\n")
    write(tmp_path, "flows.daily", "import prefect\nfrom refill.warehouse import engine\n")
    assert layers.main(["refill", "flows"]) == 0
    assert "0 cycle(s)" in capsys.readouterr().out


def test_an_import_cycle_through_a_deferred_import_fails(layers, tmp_path, capsys):
    write(tmp_path, "refill.views.board", "from refill.views import server\n")
    write(tmp_path, "refill.views.server", "def f():\n    from refill.views import board\n")
    assert layers.main(["refill"]) == 1
    assert "cycle: refill.views.board <-> refill.views.server" in capsys.readouterr().out


def test_the_engine_or_prefect_outside_its_home_fails(layers, tmp_path, capsys):
    write(tmp_path, "refill.views.status", "import duckdb\n")
    write(tmp_path, "refill.cli", "from prefect import flow\n")
    assert layers.main(["refill"]) == 1
    out = capsys.readouterr().out
    assert "1 importing duckdb (1 outside its home)" in out
    assert "1 importing prefect (1 outside its home)" in out


def test_a_module_over_the_size_limit_fails(layers, tmp_path, capsys):
    write(tmp_path, "refill.big", "X = 1\n" * (layers.MAX_LINES + 1))
    assert layers.main(["refill"]) == 1
    assert f"over {layers.MAX_LINES} lines: refill.big" in capsys.readouterr().out


def test_an_arrow_up_the_layers_fails_even_without_a_cycle(layers, tmp_path, capsys):
    write(tmp_path, "refill.rules.plan", "def f():\n    from refill.warehouse import ops\n")
    write(tmp_path, "refill.warehouse.ops", "X = 1\n")
    write(tmp_path, "refill.views.status", "from flows import daily\n")
    write(tmp_path, "flows.daily", "X = 1\n")
    write(tmp_path, "flows.tasks", "from refill import cli\n")
    write(tmp_path, "refill.cli", "from flows import daily\nfrom refill.views import status\n")
    assert layers.main(["refill", "flows"]) == 1
    out = capsys.readouterr().out
    assert "arrow up: refill.rules.plan (rules) imports refill.warehouse.ops (warehouse)" in out
    assert "arrow up: refill.views.status (views) imports flows.daily (flows)" in out
    assert "arrow up: flows.tasks (flows) imports refill.cli (cli)" in out
    assert "refill.cli (cli) imports" not in out  # the top imports anything below it
    assert "0 module(s) in no layer, 0 cycle(s)" in out  # the arrows alone fail it


def test_a_shared_module_importing_a_layer_fails(layers, tmp_path, capsys):
    write(tmp_path, "refill.settings", "from refill.rules import planning\n")
    write(tmp_path, "refill.rules.planning", "from refill import errors\n")
    write(tmp_path, "refill.errors", "X = 1\n")
    assert layers.main(["refill"]) == 1
    assert "arrow up: refill.settings (shared) imports refill.rules.planning (rules)" in (
        capsys.readouterr().out
    )


def test_a_module_in_no_layer_fails(layers, tmp_path, capsys):
    write(tmp_path, "refill.helpers", "X = 1\n")
    assert layers.main(["refill"]) == 1
    assert "in no layer: refill.helpers" in capsys.readouterr().out


def test_the_product_keeps_its_layers_and_a_planted_arrow_up_is_refused(layers, tmp_path, capsys):
    """On a copy of refill/ and flows/ as they are: the real layout passes; one import up the
    layers planted in it (the warehouse importing a command of the command line) fails,
    naming both modules and their layers."""
    import shutil

    for package in ("refill", "flows"):
        shutil.copytree(LAYERS_PY.parents[1] / package, tmp_path / package)
    assert layers.main([]) == 0, capsys.readouterr().out
    capsys.readouterr()
    ops = tmp_path / "refill" / "warehouse" / "ops.py"
    ops.write_text(ops.read_text() + "\n\ndef planted():\n    from refill.cli import backfill\n")
    assert layers.main([]) == 1
    out = capsys.readouterr().out
    assert "arrow up: refill.warehouse.ops (warehouse) imports refill.cli.backfill (cli)" in out
