import { diagnoseDelivery, type DiagnoseOptions } from '@jobhook/core/diagnosis';
import { jsonLine, write, type CliIo } from '../io.js';
import { readDoctorRequest } from './doctor-request.js';
import { forEachBatchLine } from './verify-batch.js';

/**
 * `doctor --batch`: one JSON line per input line, in order: `{"id", ...diagnosis}`, or
 * `{"id","verified":false,"cause":null,"code":"ERR_BATCH_LINE_INVALID","message"}` for a line that
 * is not a request object with an `id`. The input is streamed, so memory stays flat.
 * @returns 0 once every line is answered.
 */
export async function doctorBatch(source: string, options: DiagnoseOptions, io: CliIo): Promise<number> {
  await forEachBatchLine(source, io, async (text) => {
    await write(io.stdout, jsonLine(doctorLine(text, options)));
  });
  return 0;
}

/** Diagnoses one line; never throws, since one bad line must not stop the batch. */
function doctorLine(text: string, options: DiagnoseOptions): Record<string, unknown> {
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch {
    return lineInvalid(null, 'the line is not JSON');
  }
  const id = (record as { id?: unknown } | null)?.id;
  const echoedId = typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
  if (echoedId === null) return lineInvalid(null, 'the line has no "id" (a string or a number)');
  const request = readDoctorRequest(record);
  if (typeof request === 'string') return lineInvalid(echoedId, request);
  const diagnosis = diagnoseDelivery(request, options);
  return { id: echoedId, ...diagnosis, ...(request.bodyNote === undefined ? {} : { note: request.bodyNote }) };
}

function lineInvalid(id: string | number | null, message: string): Record<string, unknown> {
  return { id, verified: false, cause: null, code: 'ERR_BATCH_LINE_INVALID', message };
}
