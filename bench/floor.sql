-- The floor (contender c): refill's transformation of a date range as one DuckDB script,
-- straight from the landing files, in one transaction. Same SQL shape as the dbt staging
-- (models/staging/payments/stg_payments__lines.sql): every line read as text, then
-- parsed, typed, classified (published / duplicate / quarantined with a reason) and
-- deduplicated per day, both by refill's own row rules (macros/rules/, rendered in by
-- bench/floor.py); then the facts with the event day's fx rate, the quarantine, daily
-- revenue, and the per-day checks refill's audits make. A failed check raises: nothing is committed.
-- Placeholders (an at sign and a name) are filled by bench/floor.py.

begin transaction;

create or replace temp table fx_rates as
select rate_date, currency, usd_per_unit
from read_csv('@fx_seed', header = true, columns = {
    'rate_date': 'date', 'currency': 'varchar', 'usd_per_unit': 'decimal(18, 6)'
});

create or replace temp table markets as
select market from read_csv('@markets_seed', header = true);

-- the readiness facts: each day's manifest (files, records)
create or replace temp table manifests as
select
    regexp_extract(filename, 'dt=(\d{4}-\d{2}-\d{2})', 1)::date as landed_date,
    files::integer as manifest_files,
    records::bigint as manifest_records
from read_json(@manifest_files, filename = true, columns = {
    'dt': 'varchar', 'files': 'integer', 'records': 'bigint', 'exported_at': 'varchar'
});

create or replace temp table lines as
with files as (
    select filename, content from read_blob(@part_files)
),

raw_lines as (
    @landed_lines
),

classified as (
    @classified_lines
)

select * from classified;

-- the published tables: replace the range's partitions
create table if not exists fct_payments (
    transaction_id varchar, event_date date, event_ts timestamp, amount decimal(18, 2),
    currency varchar, amount_usd decimal(38, 2), market varchar, status varchar
);
delete from fct_payments where event_date between date '@start' and date '@end';
insert into fct_payments
select
    lines.transaction_id,
    lines.landed_date as event_date,
    lines.event_ts,
    lines.amount,
    lines.currency,
    round(lines.amount * fx_rates.usd_per_unit, 2) as amount_usd,
    lines.market,
    lines.status
from lines
left join fx_rates
    on lines.landed_date = fx_rates.rate_date and lines.currency = fx_rates.currency
where lines.line_status = 'published';

create table if not exists payments_quarantine (
    landed_date date, file_name varchar, line_number bigint, transaction_id varchar,
    quarantine_reason varchar, line_text varchar
);
delete from payments_quarantine where landed_date between date '@start' and date '@end';
insert into payments_quarantine
select landed_date, file_name, line_number, transaction_id, quarantine_reason, line_text
from lines
where line_status = 'quarantined';

create table if not exists fct_daily_revenue (
    event_date date, market varchar, transactions bigint, refunds bigint,
    gross_revenue_usd decimal(18, 2), refunds_usd decimal(18, 2), revenue_usd decimal(18, 2)
);
delete from fct_daily_revenue where event_date between date '@start' and date '@end';
insert into fct_daily_revenue
select
    event_date,
    market,
    count(*) as transactions,
    count(*) filter (where status = 'refunded') as refunds,
    coalesce(sum(amount_usd) filter (where status = 'captured'), 0) as gross_revenue_usd,
    coalesce(sum(amount_usd) filter (where status = 'refunded'), 0) as refunds_usd,
    coalesce(sum(amount_usd) filter (where status = 'captured'), 0)
        - coalesce(sum(amount_usd) filter (where status = 'refunded'), 0) as revenue_usd
from fct_payments
where event_date between date '@start' and date '@end' and status in ('captured', 'refunded')
group by 1, 2;

-- the checks refill's audits make, per day of the range; any row raises and rolls back
select error('floor: a landed day is not ready: ' || landed_date)
from (
    select manifests.landed_date
    from manifests
    left join (
        select landed_date, count(distinct file_name) as files, count(*) as records
        from lines group by 1
    ) as found on manifests.landed_date = found.landed_date
    where coalesce(found.files, 0) <> manifests.manifest_files
        or coalesce(found.records, 0) <> manifests.manifest_records
    limit 1
);

select error('floor: transaction_id not unique: ' || transaction_id)
from (
    select transaction_id
    from fct_payments
    where event_date between date '@start' and date '@end'
    group by 1
    having count(*) > 1
    limit 1
);

select error('floor: a day does not reconcile with its landed lines: ' || partition_date)
from (
    with published as (
        select event_date as partition_date, count(*) as transactions, sum(amount) as amount
        from fct_payments
        where event_date between date '@start' and date '@end'
        group by 1
    ),

    expected as (
        select landed_date as partition_date, count(*) as transactions, sum(amount) as amount
        from lines
        where line_status = 'published'
        group by 1
    )

    select coalesce(published.partition_date, expected.partition_date) as partition_date
    from published
    full outer join expected on published.partition_date = expected.partition_date
    where coalesce(published.transactions, 0) <> coalesce(expected.transactions, 0)
        or coalesce(published.amount, 0) <> coalesce(expected.amount, 0)
    limit 1
);

select error('floor: landed lines are lost: ' || landed_date)
from (
    select manifests.landed_date
    from manifests
    left join (
        select event_date as landed_date, count(*) as published_rows
        from fct_payments
        where event_date between date '@start' and date '@end'
        group by 1
    ) as published on manifests.landed_date = published.landed_date
    left join (
        select
            landed_date,
            count(*) filter (where line_status <> 'published') as set_aside_lines
        from lines
        group by 1
    ) as set_aside on manifests.landed_date = set_aside.landed_date
    where coalesce(published.published_rows, 0) + coalesce(set_aside.set_aside_lines, 0)
        <> manifests.manifest_records
    limit 1
);

select error('floor: quarantine does not reconcile: ' || landed_date)
from (
    select lines.landed_date
    from lines
    left join (
        select landed_date, count(*) as quarantined_lines
        from payments_quarantine
        where landed_date between date '@start' and date '@end'
        group by 1
    ) as kept on lines.landed_date = kept.landed_date
    group by lines.landed_date, kept.quarantined_lines
    having count(*) filter (where lines.line_status = 'quarantined')
        <> coalesce(kept.quarantined_lines, 0)
    limit 1
);

select error('floor: a column breaks its accepted values: ' || transaction_id)
from (
    select transaction_id
    from fct_payments
    where event_date between date '@start' and date '@end'
        and (transaction_id is null
            or amount_usd is null
            or currency not in ('USD', 'EUR', 'GBP', 'JPY', 'CAD')
            or market not in ('US', 'DE', 'FR', 'GB', 'JP', 'CA')
            or status not in ('captured', 'refunded', 'failed'))
    limit 1
);

commit;
