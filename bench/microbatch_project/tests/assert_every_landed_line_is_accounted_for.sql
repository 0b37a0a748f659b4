-- A returned row is a landed day whose manifest records differ from its published,
-- duplicate and quarantined lines (refill's line-accounting audit), or whose published
-- rows differ from its published lines in count or amount (refill's reconciliation).
with manifests as (
    select
        dt::date as landed_date,
        records as manifest_records
    from read_json(
        '{{ env_var("REFILL_LANDING", "data/landing") }}/payments/dt=*/_SUCCESS',
        columns = {'dt': 'varchar', 'files': 'integer', 'records': 'bigint', 'exported_at': 'varchar'}
    )
),

lines as (
    select
        landed_date,
        count(*) as classified_lines,
        count(*) filter (where line_status = 'published') as published_lines,
        sum(amount) filter (where line_status = 'published') as published_amount
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
    manifests.manifest_records,
    lines.classified_lines,
    lines.published_lines,
    published.published_rows
from lines
left join manifests on lines.landed_date = manifests.landed_date
left join published on lines.landed_date = published.event_date
where coalesce(manifests.manifest_records, -1) <> lines.classified_lines
    or lines.published_lines <> coalesce(published.published_rows, 0)
    or lines.published_amount <> coalesce(published.published_amount, 0)
