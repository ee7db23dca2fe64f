import { regularCsr, type CsrGraph } from './graph.js';
import { intRoot } from './size.js';

/** Ring (1D, periodic): agent i reads [i - 1, i + 1] mod N. */
export function ringGraph(n: number, label = 'ring'): CsrGraph {
  return regularCsr(label, n, 2, (i, out) => {
    out[0] = (i - 1 + n) % n;
    out[1] = (i + 1) % n;
  });
}

/** Periodic square lattice, N = L^2, i = x + L*y: [left, right, down (y - 1), up (y + 1)]. */
export function torus2dGraph(n: number, label = 'torus2d'): CsrGraph {
  const l = intRoot(n, 2);
  if (l * l !== n) throw new RangeError(`torus2d needs N = L^2, got ${n}`);
  return regularCsr(label, n, 4, (i, out) => {
    const x = i % l;
    const y = (i - x) / l;
    const row = y * l;
    out[0] = row + ((x - 1 + l) % l);
    out[1] = row + ((x + 1) % l);
    out[2] = ((y - 1 + l) % l) * l + x;
    out[3] = ((y + 1) % l) * l + x;
  });
}

/** Periodic cubic lattice, N = L^3, i = x + L*y + L^2*z: [x - 1, x + 1, y - 1, y + 1, z - 1, z + 1]. */
export function torus3dGraph(n: number, label = 'torus3d'): CsrGraph {
  const l = intRoot(n, 3);
  if (l * l * l !== n) throw new RangeError(`torus3d needs N = L^3, got ${n}`);
  const l2 = l * l;
  return regularCsr(label, n, 6, (i, out) => {
    const x = i % l;
    const y = ((i - x) / l) % l;
    const z = (i - x - y * l) / l2;
    const at = (xx: number, yy: number, zz: number) => xx + yy * l + zz * l2;
    out[0] = at((x - 1 + l) % l, y, z);
    out[1] = at((x + 1) % l, y, z);
    out[2] = at(x, (y - 1 + l) % l, z);
    out[3] = at(x, (y + 1) % l, z);
    out[4] = at(x, y, (z - 1 + l) % l);
    out[5] = at(x, y, (z + 1) % l);
  });
}
