export { runSim, type SimRunOptions } from './run.js';
export type { PortSetting, RankProgram, SimCopyRecord, SimMessageRecord, SimOptions, SimProgress, SimResult, SimTrace } from './types.js';
