import { InProcessTransport, type Transport } from '../src/index.js';
import { describeTransportConformance, servicesFor } from './transport-conformance.js';

const services = new Map<Transport, { close(): Promise<void> }>();

describeTransportConformance('in-process', () => ({
  transportFor: async (sweep) => {
    const s = await servicesFor(sweep);
    const transport = new InProcessTransport(s);
    services.set(transport, s);
    return transport;
  },
  // Over all runs: the suite's forget test has one.
  heldVersions: async (transport) => (transport as InProcessTransport).heldVersions,
  release: async (transport) => {
    await services.get(transport)?.close();
  },
}));
