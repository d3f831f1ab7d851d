// What GET …/deliveries (and the dashboard) shows a submitter of one attempt: no internal address,
// no Node message naming one, also for records written before the log held fixed texts.
import { describe, expect, it } from 'vitest';
import { attemptView } from '../../src/api/job-view.js';
import { buildAttempt } from '../jobs/job-fixtures.js';

describe('attemptView', () => {
  it('shows a public address, and hides private, loopback, link-local and IPv4-mapped private ones', () => {
    const view = (address: string | null) => attemptView(buildAttempt(1, { address })).address;
    expect(view('93.184.216.34')).toBe('93.184.216.34');
    expect(view('2606:4700:4700::1111')).toBe('2606:4700:4700::1111');
    for (const hidden of ['10.1.2.3', '127.0.0.1', '169.254.169.254', '192.168.1.5', '::1', 'fd00::5', '::ffff:10.1.2.3', 'not-an-ip'])
      expect(view(hidden)).toBeNull();
    expect(view(null)).toBeNull();
  });

  it('gives the fixed text of the error code, whatever message a record holds', () => {
    const old = buildAttempt(1, {
      statusCode: null,
      error: 'ECONNREFUSED',
      errorMessage: 'connect ECONNREFUSED 10.1.2.3:443',
      outcome: 'retry',
      address: '10.1.2.3',
    });
    expect(attemptView(old)).toMatchObject({ error: 'ECONNREFUSED', error_message: 'the receiver refused the connection', address: null });
    expect(JSON.stringify(attemptView(old))).not.toContain('10.1.2.3');
    expect(attemptView(buildAttempt(1, { error: null, errorMessage: null })).error_message).toBeNull();
  });
});
