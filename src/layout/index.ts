/** Data layouts (TraffRougier14 §5, §6): constructors, pack/unpack, direct placement. See docs/layouts.md. */
export {
  elementOffset,
  forEachRun,
  requiredLength,
  type Layout,
  type LayoutKind,
  type RunSink,
} from './layout.js';
export { contiguous, signature, vector, indexedBlock, resized } from './basic.js';
export { indexed, withDisplacements } from './indexed.js';
export { bucket } from './bucket.js';
export { boundedVector, circularVector } from './bounded.js';
export { stretchedVector, type StretchedVector } from './stretched.js';
export { runs, firstOverlap, type Runs } from './runs.js';
export { pack, unpack, views, type LayoutViews, type ViewAccess } from './pack.js';
export { normalize } from './normalize.js';
