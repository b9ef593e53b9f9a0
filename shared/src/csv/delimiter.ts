/**
 * Delimiter detection among comma, semicolon, tab and pipe. Quote-aware: each candidate
 * parses the sample, and the winner is the one whose header has at least two fields and the most rows
 * with the same field count as the header. A multi-section file (DASware) is judged on its data table
 * when the sample reaches it, else on its non-marker lines.
 */
import { CSV_DELIMITERS, parseCsvRows, type CsvDelimiter } from './row-parser.ts';
import { findDataSection, sectionNameOfRow } from './sections.ts';

/** Enough rows to judge consistency; more only costs time. */
const DETECTION_ROWS = 50;
/** Detection reads at most this many characters of the sample. */
const DETECTION_CHARS = 64 * 1024;

function candidateScore(sample: string, delimiter: CsvDelimiter, partial: boolean): [number, number] {
  let rows = parseCsvRows(sample, delimiter, { partial, maxRows: DETECTION_ROWS * 2 });
  if (rows.length === 0 && partial) rows = parseCsvRows(sample, delimiter, { maxRows: DETECTION_ROWS * 2 });
  rows = rows.filter((row) => sectionNameOfRow(row) === null).slice(0, DETECTION_ROWS);
  const headerWidth = rows[0]?.length ?? 0;
  if (headerWidth < 2) return [0, 0];
  let consistent = 0;
  let multiField = 0;
  for (const row of rows) {
    if (row.length === headerWidth) consistent += 1;
    if (row.length >= 2) multiField += 1;
  }
  return [consistent, multiField];
}

/**
 * Detects the delimiter of a sample (the start of a file). `partial` (default true) means the sample
 * may end in the middle of a record, which is then ignored. Falls back to ',' (a one-column file).
 */
export function detectDelimiter(sample: string, options: { partial?: boolean } = {}): CsvDelimiter {
  // A multi-section file is judged on its data table wherever it starts within the sample.
  const section = findDataSection(sample);
  const table = section ? section.text : sample;
  const text = table.length > DETECTION_CHARS ? table.slice(0, DETECTION_CHARS) : table;
  const partial = table.length > DETECTION_CHARS || (options.partial ?? true);
  let best: CsvDelimiter = ',';
  let bestScore: [number, number] = [0, 0];
  for (const delimiter of CSV_DELIMITERS) {
    const score = candidateScore(text, delimiter, partial);
    if (score[0] > bestScore[0] || (score[0] === bestScore[0] && score[1] > bestScore[1])) {
      best = delimiter;
      bestScore = score;
    }
  }
  return best;
}
