/** The flows bench:export draws: plans shaped like real ones, each task waiting for up to three of the 60 before it. */
export function flowBody(n: number) {
  let seed = 42;
  const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  const tasks = Array.from({ length: n }, (_, i) => {
    const after = new Set<number>();
    for (let k = 0; k < 3 && i > 0; k++) after.add(Math.max(0, i - 1 - Math.floor(random() * Math.min(i, 60))));
    return { name: `Task ${i} of the plan`, estimateHours: 4 + Math.floor(random() * 40), after: [...after] };
  });
  return { name: `Export bench ${n}`, dueDate: '2030-12-31', tasks };
}
