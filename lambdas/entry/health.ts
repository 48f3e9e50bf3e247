export { healthHandler as handler } from '../handlers/health.js';
