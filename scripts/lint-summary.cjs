// ESLint formatter for `npm run lint`: every error in full, warnings only as a count (they are
// the `!` assertions being paid down; `--max-warnings` keeps their count from rising).
module.exports = (results) => {
  const lines = [];
  let warnings = 0;
  for (const file of results) {
    for (const m of file.messages) {
      if (m.severity === 2) {
        lines.push(`${file.filePath}:${m.line}:${m.column}  ${m.message}  ${m.ruleId ?? ''}`);
      } else warnings++;
    }
  }
  lines.push(`eslint: ${lines.length} errors, ${warnings} warnings`);
  return lines.join('\n') + '\n';
};
