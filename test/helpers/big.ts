/** VCOLL_BIG=1 (npm run test:big): the larger randomized runs (more runs, larger p). */
export const BIG = process.env.VCOLL_BIG !== undefined && process.env.VCOLL_BIG !== '' && process.env.VCOLL_BIG !== '0';
