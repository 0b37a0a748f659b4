-- A returned row is a landed line (file, line number) classified more than once.
select
    file_name,
    line_number,
    count(*) as copies
from {{ ref('stg_payments__lines') }}
group by 1, 2
having count(*) > 1
