{#-
    One row per day of the window: the landing manifest and its readiness verdict, and
    the day's reference fingerprint (what it reads of the seeds): the day's inputs, which
    its ledger rows record. Building it is the readiness gate: a window with an unready
    day stops here, naming every such day, before any table downstream is touched. The
    verdicts are data the engine reads (refill_landed_manifests), never values pasted
    into SQL. The query lives in refill_window_manifests (macros/window/), which a
    command reading this model without building it computes the same way.
-#}
{#- The landing is read through the readiness rule, never as a relation: this line
    makes it the model's parent in dbt's lineage (docs, `--select source:payments+`). #}
-- depends_on: {{ source('payments', 'manifests') }}
{#- The seeds the dataset declares it reads (refill_landed_reference): a build loads them
    before this model, so the fingerprints it records are those of the rows loaded. #}
-- depends_on: {{ ref('fx_rates_daily') }}
-- depends_on: {{ ref('markets') }}

{{ refill_window_manifests('payments', as_the_model=true) }}
