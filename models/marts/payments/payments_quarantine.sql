{#-
    Landed lines that were not published: malformed lines and every version of a
    conflicting transaction, with file, line number and reason. Replaced per window
    like every partitioned table, so a fixed re-export clears its old rejects; written,
    audited and published with fct_payments as one chunk (refill_publish).
-#}
{{
    config(
        partition_column='landed_date',
        post_hook=[
            "{{ refill_audit_reconciles(
                source_model='stg_payments__lines',
                source_partition_column='landed_date',
                source_where=\"line_status = 'quarantined'\",
                measures={'quarantined_lines': 'count(*)'}) }}",
            "{{ refill_record_partitions() }}",
        ],
    )
}}
-- depends_on: {{ refill_lineage_ref('stg_payments__manifests') }}
{#- Downstream of the facts, so selecting fct_payments (`--select fct_payments+`, a backfill
    of it) rebuilds the quarantine in the same chunk: both come from the same lines. -#}
-- depends_on: {{ ref('fct_payments') }}

with lines as (
    select * from {{ ref('stg_payments__lines') }}
),

quarantined_lines as (
    select *
    from lines
    where
        line_status = 'quarantined'
        and {{ refill_window_predicate('landed_date') }}
),

final as (
    select
        -- partition
        landed_date,

        -- where the line came from
        file_name,
        line_number,

        -- ids (when the line had one)
        transaction_id,

        -- why
        quarantine_reason,

        -- the line as landed
        line_text,

        -- lineage
        {{ refill_string_literal(refill_run_id()) }} as _run_id
    from quarantined_lines
)

select * from final
