/**
 * @jobhook/core/diagnosis: why a webhook signature fails, offline (`jobhook doctor`), for whoever
 * investigates a refused delivery; and the causes the receiver logs.
 * @packageDocumentation
 */
export { DIAGNOSIS_CAUSES, isDiagnosisCause, type DiagnosisCause, type RefusalCause } from '../causes.js';
export { diagnoseDelivery, type Diagnosis, type DiagnosisRequest } from './diagnose.js';
export type { CaptureFailuresOptions, DiagnoseOptions, RecordOptions } from './diagnosis-option-checks.js';
export {
  parseRecording,
  sendRecording,
  type Recording,
  type RecordingOutcome,
  type ReplayAnswer,
} from './recording-file.js';
