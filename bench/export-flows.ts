import type { DiagramModel } from '../src/services/exports/diagram.ts';
import type { PlanDocument } from '../src/services/exports/pdf.ts';
import type { ReportView } from '../src/services/flows/report.ts';

/** The flows bench:export draws: plans shaped like real ones, each task waiting for up to three of the 60 before it. */
export function flowBody(n: number) {
  let seed = 42;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const tasks = Array.from({ length: n }, (_, i) => {
    const after = new Set<number>();
    for (let k = 0; k < 3 && i > 0; k++)
      after.add(Math.max(0, i - 1 - Math.floor(random() * Math.min(i, 60))));
    return {
      name: `Task ${i} of the plan`,
      estimateHours: 4 + Math.floor(random() * 40),
      after: [...after],
    };
  });
  return { name: `Export bench ${n}`, dueDate: '2030-12-31', tasks };
}

/** The flow of bench:export as the renderers get it: statuses by position, the longest path critical. */
export function plan(n: number): PlanDocument {
  const body = flowBody(n);
  const finish: number[] = [];
  const from: number[] = [];
  body.tasks.forEach((task, i) => {
    const before = task.after.reduce(
      (best, d) => (best < 0 || finish[d]! > finish[best]! ? d : best),
      -1,
    );
    from[i] = before;
    finish[i] = (before < 0 ? 0 : finish[before]!) + task.estimateHours;
  });
  const critical = new Set<number>();
  for (let i = finish.indexOf(Math.max(...finish)); i >= 0; i = from[i]!) critical.add(i);
  const statuses = ['done', 'in_progress', 'ready', 'blocked'] as const;
  const model: DiagramModel = {
    flowId: 'flw_bench',
    flowName: body.name,
    version: 1,
    dueDate: body.dueDate,
    projectedFinish: '2030-11-29',
    onTrack: true,
    finishP80: null,
    tasks: body.tasks.map((task, i) => ({
      id: `t${i}`,
      name: task.name,
      status: i < n / 10 ? 'done' : statuses[1 + (i % 3)]!,
      estimateHours: task.estimateHours,
      estimateRange: null,
      critical: critical.has(i),
      dependsOn: task.after,
    })),
  };
  return {
    model,
    startDate: '2030-01-07',
    rows: body.tasks.map((task, i) => ({
      name: task.name,
      status: model.tasks[i]!.status,
      estimateHours: task.estimateHours,
      estimateRange: null,
      critical: critical.has(i),
      startDay: i,
      finishDay: i + 1,
      start: '2030-01-07',
      finish: '2030-01-08',
    })),
    report: reportOf(model),
    unestimatedNames: [],
    generatedAt: new Date(),
  };
}

/** The report the title block reads, counted from the model's own tasks, so it agrees with the boxes. */
export function reportOf(model: DiagramModel): ReportView {
  const count = (status: string) => model.tasks.filter((task) => task.status === status).length;
  const estimated = model.tasks.filter((task) => task.estimateHours !== null);
  const sum = (tasks: typeof estimated) =>
    tasks.reduce((total, task) => total + task.estimateHours!, 0);
  const total = model.tasks.length;
  return {
    flowId: model.flowId,
    flowName: model.flowName,
    completion: total === 0 ? 0 : count('done') / total,
    tasksTotal: total,
    tasksDone: count('done'),
    tasksReady: count('ready'),
    tasksBlocked: count('blocked'),
    hoursEstimated: estimated.length ? sum(estimated) : null,
    hoursRemaining: estimated.length
      ? sum(estimated.filter((task) => task.status !== 'done'))
      : null,
    unestimatedTasks: model.tasks
      .filter((task) => task.estimateHours === null)
      .map((task) => task.id),
    orphanedTasks: [],
    workload: [],
    topBlockers: [],
  };
}
