-- flowplan:batched
-- Events drained before 0029 take their position as their `seq`, 5,000 positions a transaction
-- from the newest down (src/storage/migrate.ts repeats the update until it changes nothing), so
-- commands writing to the log are never held back for longer than one batch. Positions are given
-- densely, so each batch's range lies just under the lowest one filled (outbox_seq_filled finds
-- it), and the first range under the lowest position left changes nothing: done.
update outbox o set seq = o.position
from (select coalesce((select min(seq) from outbox where seq is not null),
                      (select max(position) + 1 from outbox where position is not null)) as below) b
where o.position is not null and o.seq is null and o.position >= b.below - 5000 and o.position < b.below;
drop index outbox_seq_filled;
