export { Channel, createChannelBuffer, ringBell, waitBell, HEADER_BYTES, type Bell, type ChannelOptions } from './channel.js';
export { ThreadsCommunicator, type ThreadsCommunicatorInit } from './comm.js';
export { runThreads, type RunThreadsOptions } from './run.js';
