export { Channel, createChannelBuffer, ringBell, waitBell, HEADER_BYTES, type Bell, type ChannelOptions } from './channel.js';
export { ThreadsEndpoint, type ChannelSource, type ThreadsEndpointInit } from './endpoint.js';
export { runThreads, type RunThreadsOptions } from './run.js';
