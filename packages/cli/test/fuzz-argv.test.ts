import { describeGate } from './fuzz-gate.js';

// The input gate's command lines and the commands on a finished corpus (fuzz-gate.ts).
describeGate({ argv: true });
