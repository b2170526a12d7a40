/**
 * CSV as spreadsheets read it (RFC 4180), guarded against formula injection: an agent names itself
 * and writes its charges' descriptions, so a cell it controls could start with `=`, `+`, `-` or `@`
 * (or a tab or carriage return, which some spreadsheets skip before reading a formula) and run as
 * a formula in the payer's spreadsheet (OWASP "CSV Injection"). Such a cell gets a leading `'`.
 */

const FORMULA_START = /^[=+\-@\t\r]/;

/** One cell: guarded, then quoted when it holds a comma, a quote or a line break. */
export function csvCell(value: string): string {
  const guarded = FORMULA_START.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(guarded) ? `"${guarded.replace(/"/g, '""')}"` : guarded;
}

/** A whole file: the header, then one line per row, CRLF-terminated (RFC 4180). */
export function csvFile(header: readonly string[], rows: readonly (readonly string[])[]): string {
  return [header, ...rows].map((row) => `${row.map(csvCell).join(',')}\r\n`).join('');
}
