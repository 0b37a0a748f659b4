{#-
    Every landed line of the window, parsed, typed and classified exactly once:
    published (the first copy of a valid payment), duplicate (an identical replay)
    or quarantined (malformed, or one of several conflicting versions of a
    transaction in a day). The rule is derived from the dataset's declaration
    (vars.refill_datasets.payments in dbt_project.yml) by refill_classify_landed_lines
    (macros/rules/), shared with the benchmark's contenders.
-#}

with raw_lines as (
    select * from {{ ref('stg_payments__raw_lines') }}
),

final as (
    {{ refill_classify_landed_lines('raw_lines', refill_lines_rule('payments')) }}
)

select * from final
