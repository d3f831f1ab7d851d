/** Why a webhook signature fails: the offline diagnosis (`jobhook doctor`) and the receiver's cheap causes. */
export { DIAGNOSIS_CAUSES, isDiagnosisCause, type DiagnosisCause } from './causes.js';
export { diagnoseDelivery, type DiagnoseOptions, type Diagnosis, type DiagnosisRequest } from './diagnose.js';
export type { CaptureFailuresOptions } from './failure-capture.js';
export type { RefusalCause } from './refusal-cause.js';
