/**
 * Whether a statement could be routed to one shard on a cluster distributed by `workspace_id`:
 * each statement is parsed with Postgres's own parser (libpg_query, as WASM), and every
 * distributed table it reads or writes must be pinned to a workspace, by an equality on its
 * `workspace_id` with a value (a parameter, a constant, a subquery) or with the `workspace_id`
 * of a table already pinned (a join, or an outer query's table for a subquery). An insert
 * names `workspace_id` among its columns. Conditions count only when every row must meet them:
 * the conjuncts of WHERE and of inner joins' ON, not the branches of an OR.
 */
import { loadModule, parseSync, fingerprintSync } from 'libpg-query';

let loaded: Promise<void> | null = null;
/** The parser is WASM: load it once before the first check. */
export function loadParser(): Promise<void> {
  loaded ??= loadModule();
  return loaded;
}

export interface Verdict {
  /** The distributed tables of the statement not pinned to one workspace (empty: routable). */
  unpinned: string[];
  /** libpg_query's fingerprint: the same for statements differing only in values and layout. */
  fingerprint: string;
}

type Node = Record<string, unknown>;
const isNode = (value: unknown): value is Node =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** One table of one query block: its name in the catalog and what the block calls it. */
interface Relation {
  table: string;
  name: string;
}

/** Checks one statement (possibly several, separated by `;`). */
export function checkStatement(text: string, distributed: ReadonlySet<string>): Verdict {
  const tree = parseSync(text) as unknown as { stmts?: { stmt: Node }[] };
  const unpinned = new Set<string>();
  for (const { stmt } of tree.stmts ?? []) new Walker(distributed, unpinned).statement(stmt, []);
  return { unpinned: [...unpinned].sort(), fingerprint: fingerprintSync(text) };
}

/** The fingerprint of each statement of a script (a migration file), by its own text. */
export function statementFingerprints(script: string): string[] {
  const tree = parseSync(script) as unknown as {
    stmts?: { stmt_location?: number; stmt_len?: number }[];
  };
  const bytes = Buffer.from(script);
  return (tree.stmts ?? []).map((stmt) => {
    const start = stmt.stmt_location ?? 0;
    const end = stmt.stmt_len ? start + stmt.stmt_len : bytes.length;
    return fingerprintSync(bytes.subarray(start, end).toString());
  });
}

class Walker {
  private readonly ctes: Set<string>[] = [];
  constructor(
    private readonly distributed: ReadonlySet<string>,
    private readonly unpinned: Set<string>,
  ) {}

  /** A statement node ({SelectStmt: …}, {InsertStmt: …}, …); `outer` are pinned names around it. */
  statement(node: Node, outer: string[]): void {
    const [kind, body] = Object.entries(node)[0] ?? [];
    if (!isNode(body)) return;
    const ctes = this.withClause(body, outer);
    this.ctes.push(ctes);
    try {
      switch (kind) {
        case 'SelectStmt':
          this.select(body, outer);
          break;
        case 'InsertStmt':
          this.insert(body, outer);
          break;
        case 'UpdateStmt':
          this.block(
            [{ RangeVar: body.relation }, ...list(body.fromClause)],
            [body.whereClause],
            outer,
            [body.targetList, body.returningList],
          );
          break;
        case 'DeleteStmt':
          this.block(
            [{ RangeVar: body.relation }, ...list(body.usingClause)],
            [body.whereClause],
            outer,
            [body.returningList],
          );
          break;
        default:
          // DDL, SET, LISTEN, transaction control: nothing to route by workspace.
          break;
      }
    } finally {
      this.ctes.pop();
    }
  }

  private withClause(body: Node, outer: string[]): Set<string> {
    const names = new Set<string>();
    const clause = body.withClause;
    if (!isNode(clause)) return names;
    for (const item of list(clause.ctes)) {
      const cte = item.CommonTableExpr;
      if (!isNode(cte)) continue;
      names.add(String(cte.ctename));
      if (isNode(cte.ctequery)) this.statement(cte.ctequery, outer);
    }
    return names;
  }

  private select(body: Node, outer: string[]): void {
    if (body.op && body.op !== 'SETOP_NONE') {
      if (isNode(body.larg)) this.statement({ SelectStmt: body.larg }, outer);
      if (isNode(body.rarg)) this.statement({ SelectStmt: body.rarg }, outer);
      return;
    }
    for (const row of list(body.valuesLists)) this.expressions(row, outer);
    this.block(list(body.fromClause), [body.whereClause, body.havingClause], outer, [
      body.targetList,
      body.groupClause,
      body.sortClause,
    ]);
  }

  private insert(body: Node, outer: string[]): void {
    const target = body.relation as Node;
    const table = String(target.relname);
    const columns = list(body.cols).map((col) => String((col.ResTarget as Node).name));
    if (this.isDistributed(table) && !columns.includes('workspace_id')) this.unpinned.add(table);
    if (isNode(body.selectStmt)) this.statement(body.selectStmt, outer);
    const conflict = body.onConflictClause;
    if (isNode(conflict)) this.expressions([conflict.targetList, conflict.whereClause], outer);
    this.expressions(body.returningList, outer);
  }

  /**
   * One query block: its FROM items (tables, joins, subqueries, functions) and its conditions.
   * Subqueries anywhere in it see the block's pinned names as outer names.
   */
  private block(from: unknown[], where: unknown[], outer: string[], rest: unknown[]): void {
    const relations: Relation[] = [];
    const conditions: unknown[] = [...where];
    const nested: Node[] = [];
    const visit = (item: unknown): void => {
      if (!isNode(item)) return;
      if (isNode(item.RangeVar)) {
        const range = item.RangeVar;
        const table = String(range.relname);
        const alias = isNode(range.alias) ? String(range.alias.aliasname) : table;
        if (this.isDistributed(table)) relations.push({ table, name: alias });
      } else if (isNode(item.JoinExpr)) {
        const join = item.JoinExpr;
        visit(join.larg);
        visit(join.rarg);
        // An outer join's condition does not hold for every row of its preserved side; an inner
        // join's does, like WHERE's.
        if (join.jointype === 'JOIN_INNER') conditions.push(join.quals);
        else nested.push({ quals: join.quals as Node });
      } else if (isNode(item.RangeSubselect)) {
        nested.push(item.RangeSubselect.subquery as Node);
      } else if (isNode(item.RangeFunction)) {
        nested.push(item.RangeFunction);
      }
    };
    for (const item of from) visit(item);

    const pinned = new Set(outer);
    const equalities = conditions.flatMap((condition) => conjuncts(condition)).flatMap(equality);
    const single = relations.length === 1 ? relations[0]?.name : undefined;
    const owner = (ref: string[]): string | undefined =>
      ref.length === 2 ? ref[0] : ref.length === 1 ? single : undefined;
    for (let grew = true; grew;) {
      grew = false;
      for (const [left, right] of equalities) {
        for (const [side, other] of [
          [left, right],
          [right, left],
        ] as const) {
          if (side.kind !== 'column' || side.ref.at(-1) !== 'workspace_id') continue;
          const name = owner(side.ref);
          if (name === undefined || pinned.has(name)) continue;
          const otherPinned =
            other.kind === 'value' ||
            (other.kind === 'column' &&
              other.ref.at(-1) === 'workspace_id' &&
              pinned.has(owner(other.ref) ?? ''));
          if (otherPinned) {
            pinned.add(name);
            grew = true;
          }
        }
      }
    }
    for (const relation of relations) {
      if (!pinned.has(relation.name)) this.unpinned.add(relation.table);
    }
    const inner = [...pinned];
    for (const node of nested) this.expressions(node, inner);
    this.expressions([...conditions, ...rest], inner);
  }

  /** Finds the subqueries inside expressions and checks each with the given outer names. */
  private expressions(value: unknown, outer: string[]): void {
    if (Array.isArray(value)) {
      for (const item of value) this.expressions(item, outer);
      return;
    }
    if (!isNode(value)) return;
    for (const [key, child] of Object.entries(value)) {
      if (
        (key === 'SelectStmt' ||
          key === 'InsertStmt' ||
          key === 'UpdateStmt' ||
          key === 'DeleteStmt') &&
        isNode(child)
      ) {
        this.statement({ [key]: child }, outer);
      } else {
        this.expressions(child, outer);
      }
    }
  }

  private isDistributed(table: string): boolean {
    if (this.ctes.some((names) => names.has(table))) return false;
    return this.distributed.has(table);
  }
}

function list(value: unknown): Node[] {
  return Array.isArray(value) ? value.filter(isNode) : [];
}

/** The conditions every row meets: the arms of top-level ANDs. */
function conjuncts(condition: unknown): unknown[] {
  if (!isNode(condition)) return [];
  const bool = condition.BoolExpr;
  if (isNode(bool) && bool.boolop === 'AND_EXPR') return list(bool.args).flatMap(conjuncts);
  return [condition];
}

type Operand = { kind: 'column'; ref: string[] } | { kind: 'value' } | { kind: 'other' };

/** `a = b`, `a = any(b)`, `a in (b)`, and `(a, c) = (b, d)` as pairs of operands. */
function equality(condition: unknown): [Operand, Operand][] {
  if (!isNode(condition) || !isNode(condition.A_Expr)) return [];
  const expr = condition.A_Expr;
  const operator = list(expr.name).map((name) => (name.String as Node | undefined)?.sval);
  // `=` or `OPERATOR(pg_catalog.=)` (as Postgres writes its own foreign-key checks).
  if (operator.at(-1) !== '=') return [];
  if (!['AEXPR_OP', 'AEXPR_OP_ANY', 'AEXPR_IN'].includes(String(expr.kind))) return [];
  const left = expr.lexpr;
  const right = expr.rexpr;
  const rows = (node: unknown): unknown[] | null =>
    isNode(node) && isNode(node.RowExpr) ? list(node.RowExpr.args) : null;
  const leftRow = rows(left);
  const rightRow = rows(right);
  if (leftRow && rightRow && leftRow.length === rightRow.length) {
    return leftRow.map((item, index) => [operand(item), operand(rightRow[index])]);
  }
  if (expr.kind === 'AEXPR_IN' && Array.isArray(right)) {
    // `x in (a)` with one item says x = a; with several, x is pinned only if each is a value.
    const items = right.map(operand);
    if (items.every((item) => item.kind === 'value')) return [[operand(left), { kind: 'value' }]];
    return items.length === 1 && items[0] ? [[operand(left), items[0]]] : [];
  }
  return [[operand(left), operand(right)]];
}

/** What one side of an equality is: a column, a value fixed for the whole statement, or other. */
function operand(node: unknown): Operand {
  if (!isNode(node)) return { kind: 'other' };
  if (isNode(node.ColumnRef)) {
    const ref = list(node.ColumnRef.fields).map((field) =>
      isNode(field.String) ? String(field.String.sval) : '*',
    );
    return { kind: 'column', ref };
  }
  if (isNode(node.TypeCast)) return operand(node.TypeCast.arg);
  if (isNode(node.ParamRef) || isNode(node.A_Const)) return { kind: 'value' };
  // A scalar subquery yields one value for the statement (itself checked as a statement).
  if (isNode(node.SubLink) && node.SubLink.subLinkType === 'EXPR_SUBLINK') return { kind: 'value' };
  return { kind: 'other' };
}
