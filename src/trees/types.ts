/** Shared result and option types of the tree builders. */
import type { Tree } from './tree.js';

/** A built tree with its model completion time (as the builder computed it) and its root. */
export interface BuiltTree {
  readonly tree: Tree;
  /** Completion time in the model the tree was built for; equals `evaluate(tree, …).time`. */
  readonly time: number;
  readonly root: number;
}

/** `root` given: MPI's externally fixed root. `root` omitted: the builder chooses a best root. */
export interface RootOption {
  readonly root?: number;
}
