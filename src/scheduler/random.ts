export { seededRandom, type Random } from '../util/random/random.js';
