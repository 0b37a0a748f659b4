# refill: the two commands a fresh machine needs are `make demo` and `make test`.
VENV ?= .venv
BIN := $(VENV)/bin
PYTHON ?= python3

.PHONY: setup setup-spark demo test check unit lint docs fuzz harness-long bench bench-quick bench-parse bench-spark board clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c constraints.txt -e '.[dev]'
	touch $@

## The `spark` target's extra (dbt-spark, pyspark; Java 17 on the PATH): docs/how-to/run-on-spark.md.
setup-spark: $(VENV)/.installed-spark

$(VENV)/.installed-spark: $(VENV)/.installed pyproject.toml constraints.txt constraints-spark.txt
	$(BIN)/pip install --quiet -c constraints.txt -c constraints-spark.txt -e '.[dev,spark]'
	touch $@

## The main job on the embedded default (DuckDB, a temporary local Prefect server).
demo: setup
	$(BIN)/refill demo

## Lint, then every test of every tier (pyproject.toml's markers: pure, dbt, flows,
## harness, spark, slow; dbt unit and data tests run inside them; the Spark tests on a
## local Spark), on every core: pytest-xdist hands each worker a test file at a time, the
## Spark tests as one unit (one Spark session). `pytest -m <tier>` runs one tier.
WORKERS ?= auto
test: setup setup-spark lint
	$(BIN)/pytest -n $(WORKERS)

## The inner loop: lint, then the pure tests.
check: lint unit

## The pure tier (tests/unit): no Prefect, no dbt, no child process; seconds.
unit: setup
	$(BIN)/pytest -m pure tests/unit -q

## The properties' long search (tests/properties/): a random search, 500 examples each
## (FUZZ_EXAMPLES=N for another count, which each property scales as in the suite; ARGS
## for pytest's, e.g. one file); the suite runs them derandomized and bounded ("ci").
FUZZ_EXAMPLES ?= 500
fuzz: setup
	FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) HYPOTHESIS_PROFILE=long $(BIN)/pytest \
		--hypothesis-show-statistics $(or $(ARGS),tests/properties)

## The harness's long run (docs/harness.md): 300 scenarios of the real code from seed 2000,
## and each broken variant searched for over the CI budget (the suite checks each at its
## pinned seed): a variant no scenario catches (no "caught:" line) fails the target.
harness-long: setup
	$(BIN)/python -m harness.run --scenarios 300 --seed 2000 --jobs 2
	for variant in $$($(BIN)/python -c 'from harness.variants import VARIANTS; print(*VARIANTS)'); do \
		$(BIN)/python -m harness.run --variant $$variant --stop-on-violation --jobs 2 \
			| tee /dev/stderr | grep '^  caught: ' >/dev/null || exit 1; \
	done

## The docs site (mkdocs.yml) into site/ (git-ignored); --strict: a broken link or anchor
## fails the build.
docs: $(VENV)/.installed-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

$(VENV)/.installed-docs: $(VENV)/.installed pyproject.toml constraints.txt
	$(BIN)/pip install --quiet -c constraints.txt -e '.[dev,docs]'
	touch $@

lint: setup
	$(BIN)/ruff check refill flows tests harness bench tools
	$(BIN)/ruff format --check refill flows tests harness bench tools
	$(BIN)/python tools/layers.py
	$(BIN)/sqlfluff lint models macros

## Backfill benchmark (docs/performance.md): refill vs dbt microbatch vs raw DuckDB.
bench: setup
	$(BIN)/python -m bench.run

## dbt's parse in a refusal, a dry run and a cold daily, before and after refill's one-parse
## reuse (docs/performance.md, "The parse and the window").
bench-parse: setup
	$(BIN)/python -m bench.parse_cost

## The same benchmark on tiny data: checks that it runs, not its figures.
bench-quick: setup
	$(BIN)/python -m bench.run --quick

## The benchmark's Spark section (docs/performance.md, On Spark): refill at concurrency 1,
## 2 and 3 against dbt-spark's microbatch, on a local cluster it starts and stops. Needs Java.
bench-spark: setup-spark
	$(BIN)/python -m bench.run --spark

clean:
	rm -rf target logs data warehouse site
