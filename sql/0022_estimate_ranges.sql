-- Ranged estimates (CONTRACT §5): the least and the most hours a task may take, around its
-- estimate. Both or neither; the forecast draws each open task's hours between them.
alter table tasks
  add column estimate_low  double precision,
  add column estimate_high double precision,
  add constraint tasks_estimate_range check (
    (estimate_low is null and estimate_high is null)
    or (estimate_hours is not null and 0 <= estimate_low and estimate_low <= estimate_hours
        and estimate_hours <= estimate_high)
  );
