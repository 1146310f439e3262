/**
 * The collectives of the library a transport runs on (MPI_Gatherv, MPI_Allreduce, …), exposed
 * so that the `mpi-native` variants put what MPI libraries ship in the same table as vcoll's
 * algorithms. A transport that has them returns them from `Endpoint.nativeCollectives`; the
 * communicators pass them on (`Communicator.native`). Blocking calls, as applications make
 * them; byte counts and byte displacements, each ≤ 2³¹ − 1 (MPI's int counts).
 */

/** Reduction operations of `allreduce`. */
export type NativeReduceOp = 'sum' | 'prod' | 'max' | 'min' | 'band' | 'bor' | 'bxor';

/** Element types of `allreduce`, by the typed array that holds them. */
export type NativeElementType = 'f64' | 'f32' | 'i32' | 'u32' | 'i16' | 'u16' | 'i8' | 'u8' | 'i64' | 'u64';

/** An intra-communicator's native collectives (ranks as in the communicator). */
export interface NativeCollectives {
  /** The library, e.g. "Open MPI v4.1.4, …" (MPI_Get_library_version). */
  readonly library: string;
  /**
   * MPI_Gatherv: `recv`, `counts`, `displs` at the root only (null elsewhere). `send` null at
   * the root: MPI_IN_PLACE (its block already at displs[root] in recv); elsewhere it must be given.
   */
  gatherv(send: Uint8Array | null, recv: Uint8Array | null, counts: Int32Array | null, displs: Int32Array | null, root: number): void;
  /**
   * MPI_Scatterv: `send`, `counts`, `displs` at the root only. `recv` null at the root:
   * MPI_IN_PLACE (its block stays in send); elsewhere it must be given.
   */
  scatterv(send: Uint8Array | null, counts: Int32Array | null, displs: Int32Array | null, recv: Uint8Array | null, root: number): void;
  /** MPI_Gather of equal blocks of send.length bytes. */
  gather(send: Uint8Array, recv: Uint8Array | null, root: number): void;
  /** MPI_Scatter of equal blocks of recv.length bytes. */
  scatter(send: Uint8Array | null, recv: Uint8Array, root: number): void;
  /** MPI_Allreduce of `count` elements of `type` (send null: in place in recv). */
  allreduce(send: ArrayBufferView | null, recv: ArrayBufferView, count: number, type: NativeElementType, op: NativeReduceOp): void;
  /** MPI_Barrier. */
  barrier(): void;
}

/** An intercommunicator's native collectives: blocks come from the REMOTE group. */
export interface NativeInterCollectives {
  readonly library: string;
  /** MPI_Allgather on the intercommunicator: `recv` gets every remote rank's block (send.length bytes each). */
  allgather(send: Uint8Array, recv: Uint8Array): void;
  /** MPI_Allgatherv on the intercommunicator: remote rank i's block at displs[i], counts[i] bytes. */
  allgatherv(send: Uint8Array, recv: Uint8Array, counts: Int32Array, displs: Int32Array): void;
}
