/**
 * @jobhook/core/diagnosis: why a webhook signature fails, offline (`jobhook doctor`), for whoever
 * investigates a refused delivery; and the causes the receiver logs.
 * @packageDocumentation
 */
export { DIAGNOSIS_CAUSES, isDiagnosisCause, type DiagnosisCause, type RefusalCause } from '../causes.js';
export { diagnoseDelivery, type DiagnoseOptions, type Diagnosis, type DiagnosisRequest } from './diagnose.js';
export type { CaptureFailuresOptions } from './failure-capture.js';
export type { RecordOptions } from './delivery-recording.js';
export {
  parseRecording,
  sendRecording,
  type Recording,
  type RecordingOutcome,
  type ReplayAnswer,
} from './recording-file.js';
