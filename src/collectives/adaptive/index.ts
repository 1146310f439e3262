/** The distributed adaptive construction of Traff18 (Lemmas 1–4; k-ported: Theorem 1's remark) shared by gatherv and scatterv. */
export { constructAdaptive, constructionRounds, NOTIFY_BYTES, type AdaptiveRole, type ConstructionInput, type RoleEvent } from './construct.js';
export { decideJoin, joinTime, leafRecord, RECORD_BYTES, type JoinContext, type JoinDecision, type RangeRecord } from './decide.js';
export { contains, fixedRootOf, groupOf, hypercubeRounds, levelRangeHi, levelRangeLo, partnerOf, rangeAt, rangeOf, type HyperRange, type RangeGroup } from './hypercube.js';
export { constructAdaptiveK, notifyBytesK } from './kported-construct.js';
export { GroupDecision, recordBytesK } from './kported-decide.js';
export { adaptiveContext, adaptiveInfo, bufferLayout, copyPosition, roleTree, rootRangeCheck } from './plan.js';
export { ADAPTIVE_TAG_FIRST, ADAPTIVE_TAG_LAST, adaptiveTagKind, nextPlanTags, type AdaptiveMessageKind, type AdaptiveTags } from './tags.js';
export { EventQueue, RangeBuffer } from './buffer.js';
