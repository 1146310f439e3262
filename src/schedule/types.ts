/** The schedule representation (it lives in comm/schedule.ts, next to the executors' hook). */
export * from '../comm/schedule.js';
