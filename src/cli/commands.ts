/** Every command of `flowplan`, in the order `flowplan --help` lists them. */
import type { Command } from './command.ts';
import { clientCommands, keyCommands } from './credential.commands.ts';
import { maintenanceCommands } from './maintenance.commands.ts';
import { userCommands } from './user.commands.ts';
import { workspaceCommands } from './workspace.commands.ts';

const [migrateCommand, jobsCommand] = maintenanceCommands;

export const COMMANDS: readonly Command[] = [
  migrateCommand!,
  ...workspaceCommands,
  ...userCommands,
  ...keyCommands,
  ...clientCommands,
  jobsCommand!,
];

/** The first words of two-word commands: `workspace`, `user`, `key`, `client`. */
export const GROUPS: readonly string[] = [
  ...new Set(COMMANDS.filter((c) => c.name.includes(' ')).map((c) => c.name.split(' ')[0]!)),
];
