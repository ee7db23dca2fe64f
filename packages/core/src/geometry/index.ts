export { geometryLabel, geometrySchema, isUndirected } from './spec.js';
export type { GeometrySpec } from './spec.js';
export { GeometryError } from './graph.js';
export type { Graph } from './graph.js';
export { checkSize, nominalDegree } from './size.js';
export { samplePeers } from './meanfield.js';
export { edgeListSize, edgesGraph, parseEdgeFile, parseEdgeList, validateEdges } from './edges.js';
export type { Edge } from './edges.js';
export { buildGraph, ownNeighbourBytes, shufflesNeighbours } from './build.js';
