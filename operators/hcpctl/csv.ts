/**
 * CSV as RFC 4180 writes it: records end in CRLF; a field holding a comma, a double quote, CR or
 * LF is quoted, its quotes doubled. Writing is this small, so no library: the parsing side of
 * CSV is where libraries earn their keep, and hcpctl never parses CSV.
 */

export type CsvField = string | number | undefined;

function field(value: CsvField): string {
  const text = value === undefined ? "" : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One record, CRLF-terminated. */
export function csvRecord(fields: readonly CsvField[]): string {
  return `${fields.map(field).join(",")}\r\n`;
}
