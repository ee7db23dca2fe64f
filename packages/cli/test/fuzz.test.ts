import { describeGate } from './fuzz-gate.js';

// The input gate's spec mutations, first half (the harness and the other shares: fuzz-gate.ts).
describeGate({ spec: { part: 1, of: 2 } });
