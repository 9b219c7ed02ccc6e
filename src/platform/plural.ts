/** `count(1, 'task')` → "1 task", `count(3, 'task')` → "3 tasks"; an irregular plural is given. */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
