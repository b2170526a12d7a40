/**
 * CSV as spreadsheets read it (RFC 4180), guarded against formula injection: an agent names itself
 * and writes its charges' descriptions, so a cell it controls could start with `=`, `+`, `-` or `@`
 * (or a tab or carriage return, which some spreadsheets skip before reading a formula) and run as
 * a formula in the payer's spreadsheet (OWASP "CSV Injection"). Such a cell gets a leading `'`.
 */

const FORMULA_START = /^[=+\-@\t\r]/;

/** One cell: guarded, then quoted when it holds a comma, a quote or a line break. A CsvNumber is written as it is. */
export function csvCell(value: string | CsvNumber): string {
  if (value instanceof CsvNumber) return value.text;
  const guarded = FORMULA_START.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(guarded) ? `"${guarded.replace(/"/g, '""')}"` : guarded;
}

/** A whole file: the header, then one line per row, CRLF-terminated (RFC 4180). */
export function csvFile(header: readonly string[], rows: readonly (readonly (string | CsvNumber)[])[]): string {
  return [header, ...rows].map((row) => `${row.map(csvCell).join(',')}\r\n`).join('');
}

/**
 * A number the service wrote itself (a statement's signed amount, its balance after): a plain
 * decimal, checked so, written without the guard — a spreadsheet reads `-4.50` as minus 4.50, and
 * a guarded `'-4.50` as text that no sum would count. Only such a literal passes: nothing an agent
 * wrote is ever one.
 */
export class CsvNumber {
  constructor(readonly text: string) {
    if (!/^-?\d+(\.\d+)?$/.test(text)) throw new Error(`not a plain decimal: ${text}`);
  }
}
