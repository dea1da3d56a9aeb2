-- Row tracking: every row of order_notes has its own _ROW_ID, never NULL, whatever merges and
-- updates rewrote.
select _ROW_ID, count(*) as n
from {{ paimon_row_tracking(ref('order_notes')) }}
group by _ROW_ID
having count(*) > 1 or _ROW_ID is null
