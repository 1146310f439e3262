export { runSim, type SimRunOptions } from './run.js';
export type { PortSetting, RankProgram, SimCopyRecord, SimMessageRecord, SimOptions, SimResult, SimTrace } from './types.js';
