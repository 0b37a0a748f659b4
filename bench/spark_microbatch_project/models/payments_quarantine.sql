{#- Landed lines that were not published, with file, line number and reason. A view over
    the classified lines: microbatch writes one table per model and batch, and these rows
    are already stored there. -#}
{{ config(materialized='view') }}

select
    landed_date,
    file_name,
    line_number,
    transaction_id,
    quarantine_reason,
    line_text
from {{ ref('stg_payments__lines') }}
where line_status = 'quarantined'
