-- A returned row is a landed day whose published rows differ from its published lines in
-- count or amount (refill's reconciliation). The Spark spelling of part of
-- bench/microbatch_project's assert_every_landed_line_is_accounted_for: Spark's file
-- sources skip files whose names start with '_' (every path "ignored"), so the _SUCCESS
-- manifests cannot be read here, and the line counts against them (refill's readiness and
-- line accounting) are not checked by this contender.
with lines as (
    select
        landed_date,
        count_if(line_status = 'published') as published_lines,
        sum(case when line_status = 'published' then amount end) as published_amount
    from {{ ref('stg_payments__lines') }}
    group by 1
),

published as (
    select
        event_date,
        count(*) as published_rows,
        sum(amount) as published_amount
    from {{ ref('fct_payments') }}
    group by 1
)

select
    lines.landed_date,
    lines.published_lines,
    published.published_rows
from lines
left join published on lines.landed_date = published.event_date
where lines.published_lines <> coalesce(published.published_rows, 0)
    or coalesce(lines.published_amount, 0) <> coalesce(published.published_amount, 0)
