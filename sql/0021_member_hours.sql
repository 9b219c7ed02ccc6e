-- Resource levelling (issue 33, item 4; CONTRACT §5): the working hours a member gives each
-- working day, which turns a task's hours into that person's days. 0 is someone who does no
-- work in flows (their tasks are left unscheduled); quarter hours, so a 7.5-hour day is said
-- exactly and every division by it is exact in binary floating point.
alter table memberships
  add column hours_per_day numeric(4, 2) not null default 8
    constraint memberships_hours_per_day
    check (hours_per_day between 0 and 24 and hours_per_day * 4 = floor(hours_per_day * 4));
