export { runSim } from './sim.js';
export type { PortSetting, RankProgram, SimCopyRecord, SimMessageRecord, SimOptions, SimResult, SimTrace } from './sim.js';
