import { describeGate } from './fuzz-gate.js';

// The input gate's spec mutations, second half (fuzz-gate.ts), in a file of its own to run beside the first.
describeGate({ spec: { part: 2, of: 2 } });
