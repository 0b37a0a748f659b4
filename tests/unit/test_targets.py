"""Targets as teams use them: dev, ci, prod (and the Spark ones), each with its own
warehouse, chosen by DBT_TARGET as profiles.yml chooses it; a missing adapter names its extra."""

from __future__ import annotations

import importlib.metadata

import pytest
import yaml

from refill import settings
from refill.errors import EXIT_USAGE, UsageError


def test_refill_knows_every_target_of_profiles_yml_and_no_other():
    profiles = yaml.safe_load((settings.PACKAGE_PROJECT_DIR / "profiles.yml").read_text())
    assert set(profiles["refill"]["outputs"]) == set(settings.TARGETS)
    assert "env_var('DBT_TARGET', 'dev')" in profiles["refill"]["target"]


@pytest.mark.parametrize("target", ["dev", "ci", "prod"])
def test_each_duckdb_target_has_its_own_warehouse_as_dbt_has_it(target, monkeypatch):
    monkeypatch.delenv("REFILL_WAREHOUSE", raising=False)
    monkeypatch.setenv("DBT_TARGET", target)
    profiles = yaml.safe_load((settings.PACKAGE_PROJECT_DIR / "profiles.yml").read_text())
    dbt_path = profiles["refill"]["outputs"][target]["path"]

    assert settings.engine_name() == "duckdb"
    assert f"'{settings.warehouse_path().relative_to(settings.project_dir())}'" in dbt_path
    others = {settings.TARGETS[name][1] for name in ("dev", "ci", "prod") if name != target}
    assert settings.TARGETS[target][1] not in others


def test_the_default_target_is_dev(monkeypatch):
    monkeypatch.delenv("DBT_TARGET", raising=False)
    assert settings.target_name() == "dev"


def test_an_unknown_target_is_refused_naming_the_known_ones(monkeypatch):
    monkeypatch.setenv("DBT_TARGET", "staging")
    with pytest.raises(UsageError) as refused:
        settings.engine_name()
    assert str(refused.value) == (
        "DBT_TARGET 'staging' is not a target of profiles.yml "
        "(targets: dev, duckdb, ci, prod, spark, spark-cluster)"
    )
    assert refused.value.exit_code == EXIT_USAGE  # a configuration error, on every command


@pytest.mark.parametrize("target, extra", [("spark", "spark"), ("spark-cluster", "spark-cluster")])
def test_a_target_without_its_adapter_names_the_extra_to_install(target, extra, monkeypatch):
    real = importlib.metadata.version

    def version(name):
        if name == "dbt-spark":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "version", version)
    monkeypatch.setenv("DBT_TARGET", target)
    with pytest.raises(UsageError) as refused:
        settings.engine_name()
    assert str(refused.value) == (
        f"target '{target}' needs the dbt-spark adapter, not installed: pip install -e '.[{extra}]'"
    )
