/**
 * Where each command's `input` and `run` are, by the command's first word: only the module of the
 * command that runs is loaded (help and usage errors load none, dispatch.js answers them).
 */
import type { Implementation } from './command.ts';

type Group = Record<string, Implementation>;

const MODULES: Record<string, () => Promise<Group>> = {
  migrate: async () => (await import('./maintenance.commands.ts')).maintenanceCommands,
  jobs: async () => (await import('./maintenance.commands.ts')).maintenanceCommands,
  workspace: async () => (await import('./workspace.commands.ts')).workspaceCommands,
  user: async () => (await import('./user.commands.ts')).userCommands,
  key: async () => (await import('./credential.commands.ts')).keyCommands,
  client: async () => (await import('./credential.commands.ts')).clientCommands,
};

/** The implementation of the command named `name` (a name of commands.js). */
export async function implementationOf(name: string): Promise<Implementation> {
  const group = await MODULES[name.split(' ')[0] ?? '']?.();
  const implementation = group?.[name];
  if (!implementation) throw new Error(`flowplan ${name} has a spec but no implementation`);
  return implementation;
}
